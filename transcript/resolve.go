package transcript

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/longrun/longrun/conversation"
)

// OffloadBytes is the size past which a tool result is kept in the store
// and only a preview goes through the workflow history. Below it the
// reference and preview would save little.
const OffloadBytes = 2048

// previewBytes is how much of an offloaded result the history keeps, so
// the Web UI still shows what the call returned.
const previewBytes = 1024

// Offload stores content and returns its reference and the preview that
// stands for it in the history.
func Offload(ctx context.Context, s Store, content string) (ref, preview string, err error) {
	ref, err = s.Put(ctx, []byte(content))
	if err != nil {
		return "", "", err
	}
	return ref, Preview(content), nil
}

// tailBytes bounds the last line a preview keeps.
const tailBytes = 200

// Preview is the start of content cut at a character boundary, with a
// note that says the rest is held by reference, and content's last line
// when it is short (at most tailBytes) and not in the start: how a
// command ended ("[exit code 1, 3.2s]"), which the pull request's body
// reads from the history (session.ExitCode).
func Preview(content string) string {
	cut := min(previewBytes, len(content))
	for cut < len(content) && cut > 0 && !utf8.RuneStart(content[cut]) {
		cut--
	}
	p := fmt.Sprintf("%s\n[… preview: the whole result is %d bytes, kept in the transcript store]", content[:cut], len(content))
	body := strings.TrimRight(content, "\n")
	at := strings.LastIndexByte(body, '\n') + 1
	if last := body[at:]; at > cut && last != "" && len(last) <= tailBytes && utf8.ValidString(last) {
		p += "\n" + last
	}
	return p
}

// Resolve returns msgs with every offloaded tool result (Result.ContentRef
// set) replaced by its full text, as if it had never been offloaded. msgs
// itself is not changed (its Result pointers may be shared with workflow
// state); a slice without offloaded results is returned as it is.
func Resolve(ctx context.Context, s Store, msgs []conversation.Message) ([]conversation.Message, error) {
	if !HasOffloaded(msgs) {
		return msgs, nil
	}
	out := slices.Clone(msgs)
	for i, m := range out {
		if m.Result == nil || m.Result.ContentRef == "" {
			continue
		}
		data, err := s.Get(ctx, m.Result.ContentRef)
		if err != nil {
			return nil, fmt.Errorf("result of tool call %s: %w", m.Result.CallID, err)
		}
		r := *m.Result
		r.Content, r.ContentRef, r.ContentBytes = string(data), "", 0
		out[i].Result, out[i].Content = &r, r.Content
	}
	return out, nil
}

// HasOffloaded reports whether any message holds a tool result by
// reference.
func HasOffloaded(msgs []conversation.Message) bool {
	return slices.ContainsFunc(msgs, func(m conversation.Message) bool { return m.Result != nil && m.Result.ContentRef != "" })
}
