package transcript

import (
	"container/list"
	"context"
	"slices"
	"sync"

	"github.com/longrun/longrun/conversation"
)

// Cache is a Store that remembers, within a memory bound, the conversations
// it has loaded or appended to, by head. A session's next model call loads
// the head its previous call appended to, so through a Cache that load
// reads one segment (or none) instead of the whole chain: at turn 1,000 a
// call costs the new turn, not 1,000 file reads and decodes. It is safe
// for concurrent use by the worker's activities.
type Cache struct {
	store Store
	max   int64

	mu    sync.Mutex
	size  int64
	order *list.List               // of *entry, most recently used first
	items map[string]*list.Element // head -> element of order
}

type entry struct {
	head string
	msgs []conversation.Message
	size int64
}

// NewCache wraps s with a cache of at most maxBytes of conversations.
func NewCache(s Store, maxBytes int64) *Cache {
	return &Cache{store: s, max: maxBytes, order: list.New(), items: map[string]*list.Element{}}
}

// Put stores data in the underlying store.
func (c *Cache) Put(ctx context.Context, data []byte) (string, error) { return c.store.Put(ctx, data) }

// Get reads ref from the underlying store.
func (c *Cache) Get(ctx context.Context, ref string) ([]byte, error) { return c.store.Get(ctx, ref) }

// Load returns the conversation head names, reading only the segments
// after the newest head on its chain that the cache holds. The messages
// are the caller's to change, but their Result pointers are shared.
func (c *Cache) Load(ctx context.Context, head string) ([]conversation.Message, error) {
	if msgs, ok := c.lookup(head); ok {
		return slices.Clone(msgs), nil
	}
	msgs, err := load(ctx, c.store, head, c.lookup)
	if err != nil {
		return nil, err
	}
	c.remember(head, msgs)
	return slices.Clone(msgs), nil
}

// Resolve is the package's Resolve through this cache.
func (c *Cache) Resolve(ctx context.Context, msgs []conversation.Message) ([]conversation.Message, error) {
	return Resolve(ctx, c, msgs)
}

// Expand is the package's Expand through this cache.
func (c *Cache) Expand(ctx context.Context, msgs []conversation.Message) ([]conversation.Message, error) {
	return Expand(ctx, c, msgs)
}

// extend records that ref is head plus msgs, when the cache holds head:
// the next Load of ref then reads nothing.
func (c *Cache) extend(head, ref string, msgs []conversation.Message) {
	var prev []conversation.Message
	if head != "" {
		var ok bool
		if prev, ok = c.lookup(head); !ok {
			return
		}
	}
	c.remember(ref, append(slices.Clip(prev), msgs...))
}

// lookup returns the cached conversation of head. The slice is shared:
// callers copy before changing it (load does, by appending to a new one).
func (c *Cache) lookup(head string) ([]conversation.Message, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.items[head]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*entry).msgs, true
}

// remember caches msgs as head's conversation, evicting the least recently
// used until the bound holds. A conversation larger than the whole bound
// is not kept.
func (c *Cache) remember(head string, msgs []conversation.Message) {
	if head == "" {
		return
	}
	size := sizeOf(msgs)
	if size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[head]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.items[head] = c.order.PushFront(&entry{head: head, msgs: msgs, size: size})
	c.size += size
	for c.size > c.max {
		c.drop(c.order.Back())
	}
}

// forget drops head from the cache.
func (c *Cache) forget(head string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.items[head]; ok {
		c.drop(el)
	}
}

func (c *Cache) drop(el *list.Element) {
	e := c.order.Remove(el).(*entry)
	delete(c.items, e.head)
	c.size -= e.size
}

// messageOverhead approximates a Message's own memory, without its text.
const messageOverhead = 128

// sizeOf is what a cached conversation is charged: every message's text in
// full. Entries on one chain share their text, so the real use is lower;
// the bound errs on the safe side.
func sizeOf(msgs []conversation.Message) int64 {
	n := int64(0)
	for _, m := range msgs {
		n += messageOverhead + int64(len(m.Role)+len(m.Content)+len(m.Compacted))
		for _, tc := range m.ToolCalls {
			n += int64(len(tc.ID) + len(tc.Name) + len(tc.Arguments))
		}
		if m.Result != nil {
			// Content is usually the message's Content too (ToolMessage),
			// the same string: charge it once.
			n += int64(len(m.Result.CallID) + len(m.Result.Name) + len(m.Result.Reason))
			if m.Result.Content != m.Content {
				n += int64(len(m.Result.Content))
			}
		}
	}
	return n
}
