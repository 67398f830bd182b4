package transcript

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
)

// counting counts the Gets that reach the store under a Cache.
type counting struct {
	Store
	gets atomic.Int64
}

func (c *counting) Get(ctx context.Context, ref string) ([]byte, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, ref)
}

// turn is one model turn: the reply calling a tool and its result.
func turn(i int) []conversation.Message {
	id := fmt.Sprintf("call_%d", i)
	return []conversation.Message{
		{Role: conversation.RoleAssistant, Content: fmt.Sprintf("step %d", i),
			ToolCalls: []conversation.ToolCall{{ID: id, Name: "read", Arguments: fmt.Sprintf(`{"path":"f%d"}`, i)}}},
		conversation.ToolMessage(conversation.ToolResult{CallID: id, Name: "read", Content: fmt.Sprintf("content of f%d", i), Reason: conversation.ReasonRan}),
	}
}

func newDir(t testing.TB) *Dir {
	t.Helper()
	d, err := NewDir(t.TempDir())
	require.NoError(t, err)
	return d
}

// chain stores n turns, one segment each, after a first segment holding
// the system prompt and the user's request; it returns every head and the
// whole conversation.
func chain(t testing.TB, s Store, n int) ([]string, []conversation.Message) {
	t.Helper()
	ctx := context.Background()
	all := []conversation.Message{{Role: conversation.RoleSystem, Content: "sys"}, {Role: conversation.RoleUser, Content: "go"}}
	head, err := Append(ctx, s, "", all)
	require.NoError(t, err)
	heads := []string{head}
	for i := range n {
		msgs := turn(i)
		head, err = Append(ctx, s, head, msgs)
		require.NoError(t, err)
		heads = append(heads, head)
		all = append(all, msgs...)
	}
	return heads, all
}

func TestAppendLoadRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDir(t)
	msgs, err := Load(ctx, d, "")
	require.NoError(t, err)
	require.Empty(t, msgs)

	heads, all := chain(t, d, 3)
	got, err := Load(ctx, d, heads[len(heads)-1])
	require.NoError(t, err)
	require.Equal(t, all, got)
	got, err = Load(ctx, d, heads[1])
	require.NoError(t, err)
	require.Equal(t, all[:4], got, "an older head is the conversation as it was then")

	// Appending nothing stores nothing; appending the same again (a
	// retried activity) gives the same head.
	same, err := Append(ctx, d, heads[3], nil)
	require.NoError(t, err)
	require.Equal(t, heads[3], same)
	again, err := Append(ctx, d, heads[2], turn(2))
	require.NoError(t, err)
	require.Equal(t, heads[3], again)
	dirs, err := os.ReadDir(d.Path())
	require.NoError(t, err)
	files := 0
	for _, e := range dirs {
		sub, err := os.ReadDir(d.Path() + "/" + e.Name())
		require.NoError(t, err)
		files += len(sub)
	}
	require.Equal(t, 4, files, "one file per segment, none for the repeat")
}

func TestLoadNamesTheBrokenLink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDir(t)
	heads, _ := chain(t, d, 3)
	h := strings.TrimPrefix(heads[1], "sha256:")
	require.NoError(t, os.WriteFile(d.Path()+"/"+h[:2]+"/"+h, []byte(`{"messages":[]}`), 0o644))
	_, err := Load(ctx, NewCache(d, 1<<20), heads[3])
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, heads[1])
	require.ErrorContains(t, err, heads[3])
}

func TestLongChainLoads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &counting{Store: newDir(t)}
	heads, all := chain(t, store, 3000)
	head := heads[len(heads)-1]

	got, err := Load(ctx, store, head)
	require.NoError(t, err)
	require.Len(t, got, 2+2*3000)
	require.Equal(t, all, got)
	require.Equal(t, int64(3001), store.gets.Load(), "without a cache every segment is read")

	// Through a cache, the next turn's load reads only the new segment.
	c := NewCache(store, 64<<20)
	got, err = c.Load(ctx, head)
	require.NoError(t, err)
	require.Equal(t, all, got)
	store.gets.Store(0)
	next, err := Append(ctx, store, head, turn(3000)) // not through the cache
	require.NoError(t, err)
	got, err = c.Load(ctx, next)
	require.NoError(t, err)
	require.Equal(t, append(all, turn(3000)...), got)
	require.Equal(t, int64(1), store.gets.Load())

	// Appending through the cache makes the following load free.
	store.gets.Store(0)
	after, err := Append(ctx, c, next, turn(3001))
	require.NoError(t, err)
	got, err = Load(ctx, c, after)
	require.NoError(t, err)
	require.Len(t, got, 2+2*3002)
	require.Zero(t, store.gets.Load())

	// The caller's copy is its own.
	got[0].Content = "changed"
	again, err := c.Load(ctx, after)
	require.NoError(t, err)
	require.Equal(t, "sys", again[0].Content)
}

func TestCacheStaysWithinItsBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := &counting{Store: newDir(t)}
	heads, all := chain(t, store, 50)
	bound := 2 * sizeOf(all)
	c := NewCache(store, bound)
	for _, h := range heads {
		_, err := c.Load(ctx, h)
		require.NoError(t, err)
		require.LessOrEqual(t, c.size, bound)
	}
	require.Less(t, len(c.items), len(heads), "older conversations were evicted")
	// The newest is held; a conversation over the bound is never held.
	store.gets.Store(0)
	_, err := c.Load(ctx, heads[len(heads)-1])
	require.NoError(t, err)
	require.Zero(t, store.gets.Load())
	tiny := NewCache(store, 10)
	_, err = tiny.Load(ctx, heads[5])
	require.NoError(t, err)
	require.Empty(t, tiny.items)
}

func TestExpandIsRecursive(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	d := newDir(t)
	sys := conversation.Message{Role: conversation.RoleSystem, Content: "sys"}
	first := append([]conversation.Message{{Role: conversation.RoleUser, Content: "go"}}, turn(0)...)
	firstRef, err := Append(ctx, d, "", first)
	require.NoError(t, err)
	// The second compaction replaced the first summary and one more turn.
	second := append([]conversation.Message{{Role: conversation.RoleUser, Content: "summary 1", Compacted: firstRef}}, turn(1)...)
	secondRef, err := Append(ctx, d, "", second)
	require.NoError(t, err)
	compacted := append([]conversation.Message{sys, {Role: conversation.RoleUser, Content: "summary 2", Compacted: secondRef}}, turn(2)...)

	got, err := Expand(ctx, NewCache(d, 1<<20), compacted)
	require.NoError(t, err)
	want := append(append(append([]conversation.Message{sys}, first...), turn(1)...), turn(2)...)
	require.Equal(t, want, got)
	require.NoError(t, conversation.CheckPairing(got))

	plain := turn(5)
	got, err = Expand(ctx, d, plain)
	require.NoError(t, err)
	require.Equal(t, plain, got)

	_, err = Expand(ctx, d, []conversation.Message{{Role: conversation.RoleUser, Compacted: Ref([]byte("gone"))}})
	require.ErrorIs(t, err, os.ErrNotExist)
}

// BenchmarkLoad compares loading a 1,000-segment conversation from the
// directory alone with loading it through a cache that holds the previous
// turn's conversation, which is what a model call at turn 1,000 does.
func BenchmarkLoad(b *testing.B) {
	ctx := context.Background()
	d := newDir(b)
	heads, _ := chain(b, d, 1000)
	prev, head := heads[len(heads)-2], heads[len(heads)-1]
	b.Run("dir-1000", func(b *testing.B) {
		for b.Loop() {
			if _, err := Load(ctx, d, head); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cache-next-turn-1000", func(b *testing.B) {
		c := NewCache(d, 64<<20)
		if _, err := c.Load(ctx, prev); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			c.forget(head)
			if _, err := c.Load(ctx, head); err != nil {
				b.Fatal(err)
			}
		}
	})
}
