package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"go.temporal.io/sdk/activity"
)

// ProgressTail is how much of the reply text a heartbeat carries: the end
// of it, which is what a person watching wants, and small enough that a
// heartbeat stays cheap however long the reply grows.
const ProgressTail = 1000

// Heartbeat details of a model call before anything is written.
const (
	progressWaitingStream = "waiting for the first token"
	progressWaitingPlain  = "waiting for the reply (streaming is off on this worker)"
)

// stream sends the request with `stream: true` and include_usage, and
// accumulates the chunks into the chat completion a plain request would
// have returned. An HTTP error before the stream starts comes back as the
// same *openai.Error, so classify treats both paths alike. A stream that
// breaks mid-way or sends something that is not a chunk is a malformed
// reply (bounded attempts); a missing usage chunk is not an error.
//
// The accumulator keeps only the fields openai-go knows, so the reasoning
// deltas (reasoning_content or reasoning, see reasoningOf) are joined here
// and returned beside the completion.
func (a *Activities) stream(ctx context.Context, params openai.ChatCompletionNewParams, progress *progress) (*openai.ChatCompletion, string, error) {
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := a.client.Chat.Completions.NewStreaming(ctx, params)
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	var reasoning strings.Builder
	var custom customDeltas // model_custom.go
	for s.Next() {
		chunk := s.Current()
		if !acc.AddChunk(chunk) {
			return nil, "", fmt.Errorf("stream chunk %q does not continue the reply: %w", chunk.ID, errMalformedStream)
		}
		custom.add(chunk)
		for _, ch := range chunk.Choices {
			if ch.Index == 0 {
				reasoning.WriteString(reasoningOf(ch.Delta.JSON.ExtraFields))
			}
		}
		progress.update(&acc.ChatCompletion, reasoning.String())
	}
	custom.apply(&acc.ChatCompletion)
	if err := s.Err(); err != nil {
		return nil, "", err
	}
	if len(acc.Choices) == 0 {
		return nil, "", fmt.Errorf("the stream held no choices: %w", errMalformedStream)
	}
	// Every complete reply ends with a finish reason (stop, tool_calls,
	// length, ...). Without one the stream was cut short cleanly, say by a
	// proxy, and the text or arguments so far are only part of the reply.
	if acc.Choices[0].FinishReason == "" {
		return nil, "", fmt.Errorf("the stream ended before the reply was finished: %w", errMalformedStream)
	}
	return &acc.ChatCompletion, reasoning.String(), nil
}

// errMalformedStream marks a stream that arrived but is not a whole reply;
// classify counts it as a malformed reply.
var errMalformedStream = errors.New("malformed stream")

// progress heartbeats a model call once a second with what the model has
// written so far. The stream updates it as chunks arrive; a ticker, not the
// chunks, sends it, so a flood of chunks costs at most one heartbeat a
// second and a slow first token still heartbeats.
type progress struct {
	mu        sync.Mutex
	content   string   // the whole text so far (the ticker cuts the tail)
	reasoning string   // the whole reasoning text so far
	calls     []string // names of the tools being called, in order
	argLen    int      // bytes of tool arguments so far
	waiting   string

	cancel context.CancelFunc
	done   chan struct{}
}

// startProgress starts heartbeating ctx's activity; outside an activity it
// only keeps state. stop must be called before the activity returns.
func startProgress(ctx context.Context, streaming bool) *progress {
	p := &progress{waiting: progressWaitingPlain, done: make(chan struct{})}
	if streaming {
		p.waiting = progressWaitingStream
	}
	if !activity.IsActivity(ctx) {
		close(p.done)
		p.cancel = func() {}
		return p
	}
	hbCtx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	go func() {
		defer close(p.done)
		tick := time.NewTicker(HeartbeatEvery)
		defer tick.Stop()
		for {
			select {
			case <-hbCtx.Done():
				return
			case <-tick.C:
				// Heartbeat even when nothing changed: it is also the
				// worker's sign of life and the way a cancel gets in.
				activity.RecordHeartbeat(ctx, p.details())
			}
		}
	}()
	return p
}

// stop ends the heartbeats and waits for the last one, so none is sent
// after the activity has returned.
func (p *progress) stop() {
	p.cancel()
	<-p.done
}

// update records the accumulated reply. The accumulator only ever appends
// to the strings it has published, so keeping the string is safe and
// cheap; the tail is cut when a heartbeat is sent.
func (p *progress) update(c *openai.ChatCompletion, reasoning string) {
	if len(c.Choices) == 0 {
		return
	}
	m := c.Choices[0].Message
	content := m.Content
	if content == "" {
		content = m.Refusal
	}
	var calls []string
	n := 0
	for _, tc := range m.ToolCalls {
		calls = append(calls, tc.Function.Name)
		n += len(tc.Function.Arguments)
	}
	p.set(content, reasoning, calls, n)
}

// set records the reply so far, whichever protocol wrote it.
func (p *progress) set(content, reasoning string, calls []string, argLen int) {
	p.mu.Lock()
	p.content, p.reasoning, p.calls, p.argLen = content, reasoning, calls, argLen
	p.mu.Unlock()
}

// details is the heartbeat payload: the last ProgressTail bytes of the
// text (cut at a character boundary, marked with an ellipsis), then which
// tools the model is calling.
func (p *progress) details() string {
	p.mu.Lock()
	content, reasoning, calls, n := p.content, p.reasoning, p.calls, p.argLen
	p.mu.Unlock()
	if content == "" && len(calls) == 0 {
		// While the model thinks, the end of its reasoning is what there
		// is to see; once it writes, its text is.
		if reasoning != "" {
			return "thinking: " + tail(reasoning, ProgressTail)
		}
		return p.waiting
	}
	var b strings.Builder
	b.WriteString(tail(content, ProgressTail))
	if len(calls) > 0 {
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "calling %s (%d bytes of arguments so far)", strings.Join(calls, ", "), n)
	}
	return b.String()
}

// tail is the last n bytes of s or less, never starting inside a UTF-8
// sequence, with "…" in front when something was cut.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "…" + s[i:]
}
