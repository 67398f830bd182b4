package transcript

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/longrun/longrun/conversation"
)

// Segment is one link of a conversation chain: the messages of one step
// and the reference of the segment before it ("" for the first). The
// reference of a conversation, its head, is the reference of its latest
// segment; a step stores only what is new, so storing a turn costs the
// size of the turn, not of the conversation.
type Segment struct {
	Prev     string                 `json:"prev,omitempty"`
	Messages []conversation.Message `json:"messages"`
}

// Append stores the segment {head, msgs} and returns its reference, the
// head of the conversation with msgs added. With no msgs it stores nothing
// and returns head. The encoding is deterministic, so appending the same
// messages to the same head again (a retried activity) returns the same
// reference and writes nothing new.
func Append(ctx context.Context, s Store, head string, msgs []conversation.Message) (string, error) {
	if len(msgs) == 0 {
		return head, nil
	}
	data, err := json.Marshal(Segment{Prev: head, Messages: msgs})
	if err != nil {
		return "", fmt.Errorf("encode segment: %w", err)
	}
	ref, err := s.Put(ctx, data)
	if err != nil {
		return "", err
	}
	if c, ok := s.(*Cache); ok {
		c.extend(head, ref, msgs)
	}
	return ref, nil
}

// Load returns every message of the conversation head names, oldest first
// ("" is the empty conversation). Through a *Cache it reads only the
// segments added since a head it has already loaded; otherwise it reads
// the whole chain.
func Load(ctx context.Context, s Store, head string) ([]conversation.Message, error) {
	if c, ok := s.(*Cache); ok {
		return c.Load(ctx, head)
	}
	return load(ctx, s, head, nil)
}

// load walks the chain back from head until it reaches the start or a head
// known(ref) returns messages for, then joins the segments oldest first.
// It is a loop, not a recursion: chains run to thousands of segments.
func load(ctx context.Context, s Store, head string, known func(ref string) ([]conversation.Message, bool)) ([]conversation.Message, error) {
	var segs [][]conversation.Message // newest first
	var base []conversation.Message
	n := 0
	for ref := head; ref != ""; {
		if known != nil {
			if msgs, ok := known(ref); ok {
				base = msgs
				break
			}
		}
		seg, err := getSegment(ctx, s, ref)
		if err != nil {
			if ref != head {
				return nil, fmt.Errorf("load %s: %w", head, err)
			}
			return nil, err
		}
		segs = append(segs, seg.Messages)
		n += len(seg.Messages)
		ref = seg.Prev
	}
	out := make([]conversation.Message, 0, len(base)+n)
	out = append(out, base...)
	for _, seg := range slices.Backward(segs) {
		out = append(out, seg...)
	}
	return out, nil
}

func getSegment(ctx context.Context, s Store, ref string) (Segment, error) {
	data, err := s.Get(ctx, ref)
	if err != nil {
		return Segment{}, err
	}
	var seg Segment
	if err := json.Unmarshal(data, &seg); err != nil {
		return Segment{}, fmt.Errorf("segment %s: %w", ref, err)
	}
	return seg, nil
}

// Expand replaces each compaction summary (a message whose Compacted is
// set) by the messages it replaced, themselves expanded, so a person can
// read the conversation as it was before any compaction. Messages without
// Compacted are kept as they are. Content addressing rules out a cycle: a
// segment cannot hold the reference of its own content.
func Expand(ctx context.Context, s Store, msgs []conversation.Message) ([]conversation.Message, error) {
	if !slices.ContainsFunc(msgs, func(m conversation.Message) bool { return m.Compacted != "" }) {
		return msgs, nil
	}
	out := make([]conversation.Message, 0, len(msgs))
	for _, m := range msgs {
		if m.Compacted == "" {
			out = append(out, m)
			continue
		}
		orig, err := Load(ctx, s, m.Compacted)
		if err != nil {
			return nil, fmt.Errorf("expand compacted messages: %w", err)
		}
		orig, err = Expand(ctx, s, orig)
		if err != nil {
			return nil, err
		}
		out = append(out, orig...)
	}
	return out, nil
}
