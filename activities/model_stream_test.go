package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
)

var hello = ModelRequest{Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}}}

const longText = "The quick brown fox jumps over the lazy dog, and then it writes a long reply, word by word, so a person can watch it grow."

func TestCallModelStreamsText(t *testing.T) {
	t.Parallel()
	srv := sm.New(sm.Reply{Text: longText, Usage: &sm.Usage{PromptTokens: 7, CompletionTokens: 3}})
	defer srv.Close()
	a, _ := newActs(t, srv)
	resp, err := a.CallModel(context.Background(), hello)
	require.NoError(t, err)
	require.Equal(t, ModelResponse{
		Model:        "m",
		Message:      conversation.Message{Role: conversation.RoleAssistant, Content: longText},
		Usage:        conversation.Usage{PromptTokens: 7, CompletionTokens: 3, TotalTokens: 10},
		FinishReason: "stop",
	}, resp)
	req := srv.Requests()[0]
	require.True(t, req.Stream, "the request asks for a stream")
	require.True(t, req.IncludeUsage, "and for the usage chunk")
}

func TestCallModelStreamsToolCalls(t *testing.T) {
	t.Parallel()
	calls := []sm.Call{
		{ID: "c1", Name: "read", Arguments: `{"path": "README.md", "offset": 1, "limit": 200}`},
		{ID: "c2", Name: "shell", Arguments: `{"command": "go test ./... && echo ✓ done"}`},
	}
	srv := sm.New(sm.Reply{Text: "Let me look.", ToolCalls: calls})
	defer srv.Close()
	a, _ := newActs(t, srv)
	resp, err := a.CallModel(context.Background(), hello)
	require.NoError(t, err)
	require.Equal(t, "Let me look.", resp.Message.Content)
	require.Equal(t, []conversation.ToolCall{
		{ID: "c1", Name: "read", Arguments: calls[0].Arguments},
		{ID: "c2", Name: "shell", Arguments: calls[1].Arguments},
	}, resp.Message.ToolCalls, "arguments are assembled from their fragments")
	require.Equal(t, "tool_calls", resp.FinishReason)
	require.Equal(t, int64(120), resp.Usage.TotalTokens)
}

// A stream without the usage chunk (some proxies drop it) is still a
// reply; its usage is zero.
func TestCallModelStreamWithoutUsage(t *testing.T) {
	t.Parallel()
	srv := sm.New(sm.Reply{Text: "no usage here", OmitUsage: true})
	defer srv.Close()
	a, _ := newActs(t, srv)
	resp, err := a.CallModel(context.Background(), hello)
	require.NoError(t, err)
	require.Equal(t, "no usage here", resp.Message.Content)
	require.Equal(t, conversation.Usage{}, resp.Usage)
}

// The fallback for endpoints that cannot stream sends a plain request and
// returns exactly what the stream returns.
func TestCallModelNoStreamFallback(t *testing.T) {
	t.Parallel()
	reply := sm.Reply{Text: longText, ToolCalls: []sm.Call{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}}}
	srv := sm.New(reply, reply)
	defer srv.Close()
	streamed, _ := newActs(t, srv)
	plain := New(Config{Model: ModelConfig{BaseURL: srv.URL(), APIKey: "sk-unit", DefaultModel: "m", NoStream: true}})

	got, err := plain.CallModel(context.Background(), hello)
	require.NoError(t, err)
	want, err := streamed.CallModel(context.Background(), hello)
	require.NoError(t, err)
	require.Equal(t, want, got)
	reqs := srv.Requests()
	require.False(t, reqs[0].Stream, "streaming off sends a plain request")
	require.NotContains(t, string(reqs[0].Raw), "stream")
	require.True(t, reqs[1].Stream)
}

// Faults of a stream are classified as those of a plain reply: an HTTP
// status before the stream by status and headers, a stream broken or
// garbled mid-way as a malformed reply (a few attempts, then ModelBadReply).
func TestCallModelStreamFaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		reply     sm.Reply
		wantType  string
		wantText  string
		wantDelay time.Duration
	}{
		{"dropped mid-stream", sm.Reply{Text: longText, DropAfter: 400}, ErrTypeModelFault, "not a chat completion", 0},
		{"dropped in the first event", sm.Reply{Text: longText, DropAfter: 20}, ErrTypeModelFault, "not a chat completion", 0},
		{"garbage event", sm.Reply{RawBody: "data: {\"id\": \"x\", \"choices\": [\n\n"}, ErrTypeModelFault, "not a chat completion", 0},
		{"html instead of events", sm.Reply{RawBody: "<html>bad gateway</html>"}, ErrTypeModelFault, "no choices", 0},
		{"ends without a finish reason", sm.Reply{RawBody: `data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":"half a"}}]}` + "\n\n"},
			ErrTypeModelFault, "ended before the reply was finished", 0},
		{"error event mid-stream", sm.Reply{RawBody: `data: {"error": {"message": "overloaded", "type": "server_error"}}` + "\n\n"},
			ErrTypeModelFault, "overloaded", 0},
		{"429 before the stream", sm.Reply{Status: 429, Header: map[string]string{"retry-after-ms": "2500"}}, ErrTypeModelFault, "HTTP 429", 2500 * time.Millisecond},
		{"context length before the stream", sm.Reply{Status: 400, ErrorCode: "context_length_exceeded", ErrorMessage: "maximum context length is 8192 tokens"},
			ErrTypeContextLength, "context window", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := sm.New(tc.reply)
			defer srv.Close()
			a, _ := newActs(t, srv)
			_, err := a.CallModel(context.Background(), hello)
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "got %v", err)
			require.Equal(t, tc.wantType, appErr.Type(), appErr.Error())
			require.Contains(t, appErr.Error(), tc.wantText)
			require.Equal(t, tc.wantType == ErrTypeContextLength, appErr.NonRetryable())
			require.Equal(t, tc.wantDelay, appErr.NextRetryDelay())
			require.Len(t, srv.Requests(), 1, "the client must not retry on its own")
		})
	}
}

// The bound on malformed replies holds for streams: the last allowed
// attempt fails as ModelBadReply, not retryable.
func TestBrokenStreamOnLastAttemptIsBadReply(t *testing.T) {
	t.Parallel()
	err := classify(fmt.Errorf("the stream held no choices: %w", errMalformedStream), MaxMalformedAttempts)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr))
	require.Equal(t, ErrTypeModelBadReply, appErr.Type())
	require.True(t, appErr.NonRetryable())
}

// A slow stream heartbeats the text written so far: a person watching the
// pending activity sees the reply grow, and never more than its tail.
func TestCallModelHeartbeatsPartialText(t *testing.T) {
	t.Parallel()
	srv := sm.New(sm.Reply{Text: longText, ChunkDelay: 300 * time.Millisecond})
	defer srv.Close()
	a, _ := newActs(t, srv)

	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	// The SDK sends the first heartbeat at once and batches the rest, so
	// the test sees the first: one second in, a third of the reply.
	env.RegisterActivity(a)
	var mu sync.Mutex
	var beats []string
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		var s string
		require.NoError(t, d.Get(&s))
		mu.Lock()
		beats = append(beats, s)
		mu.Unlock()
	})
	val, err := env.ExecuteActivity(a.CallModel, hello)
	require.NoError(t, err)
	var resp ModelResponse
	require.NoError(t, val.Get(&resp))
	require.Equal(t, longText, resp.Message.Content)

	mu.Lock()
	defer mu.Unlock()
	partial := 0
	for _, b := range beats {
		require.True(t, strings.HasPrefix(longText, b) || b == progressWaitingStream, "heartbeat %q is not the reply so far", b)
		if b != "" && b != longText && b != progressWaitingStream {
			partial++
		}
	}
	require.NotZero(t, partial, "no heartbeat showed a partial reply: %q", beats)
}

// With streaming off the call still heartbeats, so the workflow's
// heartbeat timeout holds for both kinds of worker.
func TestCallModelNoStreamHeartbeats(t *testing.T) {
	t.Parallel()
	srv := sm.New(sm.Reply{Text: "slow", Delay: 1500 * time.Millisecond})
	defer srv.Close()
	a := New(Config{Model: ModelConfig{BaseURL: srv.URL(), APIKey: "sk-unit", DefaultModel: "m", NoStream: true}})
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	var mu sync.Mutex
	var beats []string
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		var s string
		require.NoError(t, d.Get(&s))
		mu.Lock()
		beats = append(beats, s)
		mu.Unlock()
	})
	_, err := env.ExecuteActivity(a.CallModel, hello)
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Contains(t, beats, progressWaitingPlain)
}

func TestProgressDetails(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", ProgressTail) // two bytes each
	cases := []struct {
		name, content string
		reasoning     string
		calls         []string
		args          int
		want          string
	}{
		{name: "nothing yet", want: progressWaitingStream},
		{name: "thinking", reasoning: "hmm, let me see", want: "thinking: hmm, let me see"},
		{name: "text after thinking", reasoning: "hmm", content: "So:", want: "So:"},
		{name: "short text", content: "hello", want: "hello"},
		{name: "long text keeps the tail on a character boundary", content: "x" + long,
			want: "…" + strings.Repeat("é", ProgressTail/2)},
		{name: "tool calls", calls: []string{"read", "shell"}, args: 42, want: "calling read, shell (42 bytes of arguments so far)"},
		{name: "text and tool calls", content: "Let me look.", calls: []string{"read"}, args: 3,
			want: "Let me look.\n\ncalling read (3 bytes of arguments so far)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &progress{waiting: progressWaitingStream, content: tc.content, reasoning: tc.reasoning, calls: tc.calls, argLen: tc.args}
			require.Equal(t, tc.want, p.details())
		})
	}
}
