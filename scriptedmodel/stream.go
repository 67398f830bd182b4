package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// maxTextChunks bounds how many content deltas a streamed Text becomes: a
// few, so a test sees a reply grow without thousands of events.
const maxTextChunks = 8

// stream answers a request that asked for `stream: true` the way OpenAI
// does: server-sent events, one `data: {chunk}` each, the role and the
// first words first, the text in a few pieces, each tool call announced
// (index, id, name) and then its arguments in fragments, a finish chunk, a
// usage chunk when the request set include_usage, and `data: [DONE]`.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req Request, seq int, reply Reply) {
	var events [][]byte
	for _, c := range streamChunks(req, seq, reply) {
		b, _ := json.Marshal(c)
		events = append(events, []byte("data: "+string(b)+"\n\n"))
	}
	events = append(events, []byte("data: [DONE]\n\n"))
	writeEvents(w, r, events, reply)
}

// writeEvents sends server-sent events, honouring the reply's ChunkDelay
// between them and its DropAfter.
func writeEvents(w http.ResponseWriter, r *http.Request, events [][]byte, reply Reply) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	left := -1 // bytes still to send before the drop; -1: no drop
	if reply.DropAfter > 0 {
		total := 0
		for _, e := range events {
			total += len(e)
		}
		left = min(reply.DropAfter, total-1)
	}
	for i, e := range events {
		if i > 0 && reply.ChunkDelay > 0 {
			select {
			case <-time.After(reply.ChunkDelay):
			case <-r.Context().Done():
				return
			}
		}
		if left >= 0 && len(e) > left {
			_, _ = w.Write(e[:left])
			_ = rc.Flush()
			// Aborting the handler closes the connection without the
			// chunked body's terminator: the client sees the body end
			// early, as when a proxy or the provider drops it.
			panic(http.ErrAbortHandler)
		}
		if _, err := w.Write(e); err != nil {
			return
		}
		_ = rc.Flush()
		if left >= 0 {
			left -= len(e)
		}
	}
}

// streamChunks is the reply as a sequence of chat.completion.chunk objects.
func streamChunks(req Request, seq int, r Reply) []map[string]any {
	base := func(choices []map[string]any) map[string]any {
		c := map[string]any{
			"id":      fmt.Sprintf("chatcmpl-scripted-%d", seq),
			"object":  "chat.completion.chunk",
			"created": 1700000000 + seq,
			"model":   modelName(req.Model),
			"choices": choices,
		}
		if req.IncludeUsage {
			c["usage"] = nil // OpenAI sends null on every chunk but the last
		}
		return c
	}
	delta := func(d map[string]any) map[string]any {
		return base([]map[string]any{{"index": 0, "delta": d, "finish_reason": nil}})
	}

	pieces := splitText(r.Text, maxTextChunks)
	first := ""
	if len(pieces) > 0 {
		first, pieces = pieces[0], pieces[1:]
	}
	var chunks []map[string]any
	// Reasoning comes first, in pieces, before any content, as thinking
	// models stream it.
	for i, p := range splitText(r.Reasoning, maxTextChunks) {
		d := map[string]any{reasoningField(r): p}
		if i == 0 {
			d["role"] = "assistant"
		}
		chunks = append(chunks, delta(d))
	}
	chunks = append(chunks, delta(map[string]any{"role": "assistant", "content": first}))
	for _, p := range pieces {
		chunks = append(chunks, delta(map[string]any{"content": p}))
	}
	for i, c := range r.ToolCalls {
		if c.Custom {
			// A custom call arrives in one delta, its "custom"
			// object whole.
			call := wireCall(seq, i, c)
			call["index"] = i
			chunks = append(chunks, delta(map[string]any{"tool_calls": []map[string]any{call}}))
			continue
		}
		chunks = append(chunks, delta(map[string]any{"tool_calls": []map[string]any{{
			"index": i, "id": callID(seq, i, c), "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""},
		}}}))
		for _, frag := range splitBytes(c.Arguments, 3) {
			chunks = append(chunks, delta(map[string]any{"tool_calls": []map[string]any{{
				"index": i, "function": map[string]any{"arguments": frag},
			}}}))
		}
	}
	chunks = append(chunks, base([]map[string]any{{"index": 0, "delta": map[string]any{}, "finish_reason": finishReason(r)}}))
	if req.IncludeUsage && !r.OmitUsage {
		last := base([]map[string]any{})
		last["usage"] = usage(r)
		chunks = append(chunks, last)
	}
	return chunks
}

// splitText cuts s at word boundaries into at most n pieces that join back
// to s, as a model streams words.
func splitText(s string, n int) []string {
	if s == "" {
		return nil
	}
	words := strings.SplitAfter(s, " ")
	per := (len(words) + n - 1) / n
	var out []string
	for i := 0; i < len(words); i += per {
		out = append(out, strings.Join(words[i:min(i+per, len(words))], ""))
	}
	return out
}

// splitBytes cuts s into at most n pieces of about equal length, never
// inside a UTF-8 sequence, the way providers fragment tool arguments.
func splitBytes(s string, n int) []string {
	if s == "" {
		return nil
	}
	size := max(1, (len(s)+n-1)/n)
	var out []string
	for len(s) > 0 {
		end := min(size, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
