package activities

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
)

func TestResponsesOnly(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]bool{
		"gpt-5-codex": true, "gpt-5.1-codex-max": true, "codex-mini-latest": true, "GPT-5-Codex": true,
		"o1-pro": true, "o3-pro-2025-06-10": true, "gpt-5-pro": true, "gpt-5.5-pro": true,
		"o3-deep-research": true, "computer-use-preview": true,
		"gpt-5": false, "gpt-4.1": false, "o3": false, "gpt-5-mini": false, "qwen3-coder": false,
		"openai/gpt-5-codex": false, "deepseek-reasoner": false, "gpt-5-professional": false,
	} {
		require.Equal(t, want, ResponsesOnly(model), model)
	}
}

func TestParseModelAPI(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": "", "auto": "", "chat": ModelAPIChat, "Responses": ModelAPIResponses} {
		got, err := ParseModelAPI(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := ParseModelAPI("completions")
	require.ErrorContains(t, err, "want chat or responses")
}

// The conversation becomes Responses input items, in order: reasoning
// items whole, text, function and custom calls, and each result as its
// call's kind of output.
func TestToResponsesInput(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		msgs []conversation.Message
		want string
	}{
		{"system and user", []conversation.Message{
			{Role: conversation.RoleSystem, Content: "be brief"},
			{Role: conversation.RoleUser, Content: "hi"},
		}, `[{"content":"be brief","role":"system"},{"content":"hi","role":"user"}]`},
		{"assistant text", []conversation.Message{
			{Role: conversation.RoleAssistant, Content: "hello", Reasoning: "shown only"},
		}, `[{"content":"hello","role":"assistant"}]`},
		{"reasoning without the item it led to stays home", []conversation.Message{
			{Role: conversation.RoleAssistant, ReasoningItems: []conversation.ReasoningItem{{ID: "rs_1", EncryptedContent: "E"}}},
			{Role: conversation.RoleUser, Content: "go on"},
		}, `[{"content":"go on","role":"user"}]`},
		{"reasoning before text", []conversation.Message{
			{Role: conversation.RoleAssistant, Content: "hi", ReasoningItems: []conversation.ReasoningItem{{ID: "rs_1", EncryptedContent: "E"}}},
		}, `[{"type":"reasoning","id":"rs_1","encrypted_content":"E","summary":[]},{"content":"hi","role":"assistant"}]`},
		{"reasoning items, then calls and their outputs", []conversation.Message{
			{Role: conversation.RoleAssistant, ReasoningItems: []conversation.ReasoningItem{
				{ID: "rs_1", EncryptedContent: "enc1", Summary: []string{"a", "b"}}, {ID: "rs_2"},
			}, ToolCalls: []conversation.ToolCall{
				{ID: "c1", Name: "read", Arguments: `{"path":"x"}`},
				{ID: "c2", Name: "apply_patch", Arguments: `{"patch":"P"}`, Freeform: "P"},
			}},
			conversation.ToolMessage(conversation.ToolResult{CallID: "c1", Name: "read", Content: "X"}),
			conversation.ToolMessage(conversation.ToolResult{CallID: "c2", Name: "apply_patch", Content: "Done"}),
		}, `[
			{"type":"reasoning","id":"rs_1","encrypted_content":"enc1","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}]},
			{"type":"reasoning","id":"rs_2","summary":[]},
			{"type":"function_call","call_id":"c1","name":"read","arguments":"{\"path\":\"x\"}"},
			{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"P"},
			{"type":"function_call_output","call_id":"c1","output":"X"},
			{"type":"custom_tool_call_output","call_id":"c2","output":"Done"}]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(toResponsesInput(tc.msgs))
			require.NoError(t, err)
			require.JSONEq(t, tc.want, string(b))
		})
	}
}

// A Response becomes our message: text, reasoning items kept whole with
// their summaries as the reasoning text, calls of both kinds, usage with
// cached and reasoning tokens, and a chat-style finish reason.
func TestFromResponse(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		raw        string
		want       conversation.Message
		wantFinish string
	}{
		{"text", `{"status":"completed","model":"gpt-5","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"hel"},{"type":"output_text","text":"lo"}]}]}`,
			conversation.Message{Role: "assistant", Content: "hello"}, "stop"},
		{"refusal", `{"status":"completed","output":[{"type":"message","content":[{"type":"refusal","refusal":"no"}]}]}`,
			conversation.Message{Role: "assistant", Content: "no"}, "stop"},
		{"reasoning and calls", `{"status":"completed","output":[
			{"type":"reasoning","id":"rs_1","encrypted_content":"E","summary":[{"type":"summary_text","text":"first"},{"type":"summary_text","text":"second"}]},
			{"type":"function_call","id":"fc_1","call_id":"c1","name":"read","arguments":"{\"path\":\"a\"}"},
			{"type":"custom_tool_call","id":"ctc_1","call_id":"c2","name":"apply_patch","input":"*** Begin Patch"}]}`,
			conversation.Message{Role: "assistant", Reasoning: "first\n\nsecond",
				ReasoningItems: []conversation.ReasoningItem{{ID: "rs_1", EncryptedContent: "E", Summary: []string{"first", "second"}}},
				ToolCalls:      []conversation.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}, {ID: "c2", Name: "apply_patch", Freeform: "*** Begin Patch"}}},
			"tool_calls"},
		{"raw reasoning of an open model", `{"status":"completed","output":[{"type":"reasoning","id":"rs_1","summary":[],"content":[{"type":"reasoning_text","text":"hmm"}]},{"type":"message","content":[{"type":"output_text","text":"ok"}]}]}`,
			conversation.Message{Role: "assistant", Content: "ok", Reasoning: "hmm", ReasoningItems: []conversation.ReasoningItem{{ID: "rs_1"}}}, "stop"},
		{"cut at max_output_tokens", `{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[{"type":"message","content":[{"type":"output_text","text":"par"}]}]}`,
			conversation.Message{Role: "assistant", Content: "par"}, "length"},
	}
	a := New(Config{})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var r responses.Response
			require.NoError(t, json.Unmarshal([]byte(tc.raw), &r))
			got, err := a.fromResponse("gpt-5", &r, 1)
			require.NoError(t, err)
			require.Equal(t, tc.want, got.Message)
			require.Equal(t, tc.wantFinish, got.FinishReason)
		})
	}
	var r responses.Response
	require.NoError(t, json.Unmarshal([]byte(`{"status":"completed","model":"gpt-5","output":[{"type":"message","content":[{"type":"output_text","text":"x"}]}],
		"usage":{"input_tokens":1000000,"input_tokens_details":{"cached_tokens":600000},"output_tokens":100000,"output_tokens_details":{"reasoning_tokens":70000},"total_tokens":1100000}}`), &r))
	got, err := a.fromResponse("gpt-5", &r, 1)
	require.NoError(t, err)
	require.Equal(t, conversation.Usage{PromptTokens: 1_000_000, CompletionTokens: 100_000, TotalTokens: 1_100_000,
		CachedTokens: 600_000, ReasoningTokens: 70_000, CostUSD: 0.4*1.25 + 0.6*0.125 + 0.1*10}, roundCost(got.Usage))
	_, err = a.fromResponse("gpt-5", &responses.Response{}, MaxMalformedAttempts)
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, ErrTypeModelBadReply, appErr.Type())
}

func roundCost(u conversation.Usage) conversation.Usage {
	u.CostUSD = float64(int64(u.CostUSD*1e9+0.5)) / 1e9
	return u
}

// Against the scripted server, streamed and not: the request is stateless
// with the encrypted reasoning included, the reply's reasoning item comes
// back whole and goes out again on the next request with the call's output.
func TestCallModelResponsesRoundTrip(t *testing.T) {
	t.Parallel()
	for _, noStream := range []bool{false, true} {
		srv := sm.New(
			sm.Reply{Text: "Reading.", Reasoning: "I need the file.", EncryptedReasoning: "ENC-1",
				ToolCalls: []sm.Call{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}, {ID: "c2", Name: "read", Arguments: `{"path":"b"}`}},
				Usage:     &sm.Usage{PromptTokens: 50, CompletionTokens: 10, CachedTokens: 30, ReasoningTokens: 4}},
			sm.Text("done"))
		a := New(Config{Model: ModelConfig{BaseURL: srv.URL(), DefaultModel: "gpt-5-codex", NoStream: noStream}})
		defs := []ToolDef{{Name: "read", Description: "read a file", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
		resp, err := a.CallModel(context.Background(), ModelRequest{Messages: hello.Messages, Tools: defs})
		require.NoError(t, err)
		require.Equal(t, "Reading.", resp.Message.Content)
		require.Equal(t, "I need the file.", resp.Message.Reasoning)
		require.Equal(t, []conversation.ReasoningItem{{ID: "rs_scripted_1", EncryptedContent: "ENC-1", Summary: []string{"I need the file."}}}, resp.Message.ReasoningItems)
		require.Len(t, resp.Message.ToolCalls, 2)
		require.Equal(t, conversation.Usage{PromptTokens: 50, CompletionTokens: 10, TotalTokens: 60, CachedTokens: 30, ReasoningTokens: 4,
			CostUSD: resp.Usage.CostUSD}, resp.Usage)
		require.NotZero(t, resp.Usage.CostUSD, "gpt-5-codex has a price")

		req := srv.Requests()[0]
		require.Equal(t, sm.APIResponses, req.API)
		require.Equal(t, !noStream, req.Stream)
		require.NotNil(t, req.Store)
		require.False(t, *req.Store, "stateless")
		require.Equal(t, []string{"reasoning.encrypted_content"}, req.Include)
		require.Equal(t, "read", req.Tools[0].Function.Name)
		require.Equal(t, "function", req.Tools[0].Type)

		msgs := append(hello.Messages, resp.Message,
			conversation.ToolMessage(conversation.ToolResult{CallID: "c1", Name: "read", Content: "A"}),
			conversation.ToolMessage(conversation.ToolResult{CallID: "c2", Name: "read", Content: "B"}))
		_, err = a.CallModel(context.Background(), ModelRequest{Messages: msgs, Tools: defs})
		require.NoError(t, err)
		next := srv.Requests()[1]
		srv.Close()
		rs := next.ItemsOfType("reasoning")
		require.Len(t, rs, 1)
		require.Equal(t, "ENC-1", rs[0].EncryptedContent, "the reasoning goes back whole")
		require.Len(t, next.ItemsOfType("function_call"), 2)
		out := next.ItemsOfType("function_call_output")
		require.Len(t, out, 2)
		require.Equal(t, "c2", out[1].CallID)
		require.Equal(t, "B", out[1].Output)
		got, ok := next.LastToolResult("c1")
		require.True(t, ok)
		require.Equal(t, "A", got)
	}
}

// A custom tool call over the Responses API keeps its raw input and goes
// back as a custom_tool_call with a custom_tool_call_output.
func TestCallModelResponsesCustomCall(t *testing.T) {
	t.Parallel()
	patch := "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"
	srv := sm.New(sm.Tools(sm.Call{ID: "p1", Name: "apply_patch", Arguments: patch, Custom: true}), sm.Text("ok"))
	defer srv.Close()
	a := New(Config{Model: ModelConfig{BaseURL: srv.URL(), DefaultModel: "m", API: ModelAPIResponses}})
	resp, err := a.CallModel(context.Background(), hello)
	require.NoError(t, err)
	require.Equal(t, patch, resp.Message.ToolCalls[0].Freeform)
	require.JSONEq(t, `{"input":"*** Begin Patch\n*** Add File: a\n+x\n*** End Patch"}`, resp.Message.ToolCalls[0].Arguments)
	msgs := append(hello.Messages, resp.Message, conversation.ToolMessage(conversation.ToolResult{CallID: "p1", Name: "apply_patch", Content: "Success"}))
	_, err = a.CallModel(context.Background(), ModelRequest{Messages: msgs})
	require.NoError(t, err)
	next := srv.Requests()[1]
	require.Equal(t, patch, next.ItemsOfType("custom_tool_call")[0].Input)
	require.Equal(t, "Success", next.ItemsOfType("custom_tool_call_output")[0].Output)
}

// Faults are typed as on chat completions: HTTP errors by classify,
// broken streams as malformed replies, failed responses and error events
// by their code.
func TestCallModelResponsesFaults(t *testing.T) {
	t.Parallel()
	failed := func(code string) string {
		return `event: response.failed` + "\n" + `data: {"type":"response.failed","sequence_number":1,"response":{"id":"r","status":"failed","output":[],"error":{"code":"` + code + `","message":"it broke"}}}` + "\n\n"
	}
	cases := []struct {
		name         string
		reply        sm.Reply
		wantType     string
		nonRetryable bool
	}{
		{"server error", sm.Reply{Status: 500}, ErrTypeModelFault, false},
		{"bad request", sm.Reply{Status: 400}, ErrTypeModelRejected, true},
		{"context length", sm.Reply{Status: 400, ErrorCode: "context_length_exceeded", ErrorMessage: "Your input exceeds the context window of this model."}, ErrTypeContextLength, true},
		{"dropped mid-stream", sm.Reply{Text: longText, DropAfter: 600}, ErrTypeModelFault, false},
		{"ends without a final response", sm.Reply{RawBody: "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"r\",\"status\":\"in_progress\",\"output\":[]}}\n\n"}, ErrTypeModelFault, false},
		{"failed: server error", sm.Reply{RawBody: failed("server_error")}, ErrTypeModelFault, false},
		{"failed: context length", sm.Reply{RawBody: failed("context_length_exceeded")}, ErrTypeContextLength, true},
		{"failed: invalid prompt", sm.Reply{RawBody: failed("invalid_prompt")}, ErrTypeModelRejected, true},
		{"error event", sm.Reply{RawBody: "event: error\ndata: {\"type\":\"error\",\"sequence_number\":0,\"code\":\"rate_limit_exceeded\",\"message\":\"slow down\"}\n\n"}, ErrTypeModelFault, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := sm.New(tc.reply)
			defer srv.Close()
			a := New(Config{Model: ModelConfig{BaseURL: srv.URL(), DefaultModel: "m", API: ModelAPIResponses}})
			_, err := a.CallModel(context.Background(), hello)
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "got %v", err)
			require.Equal(t, tc.wantType, appErr.Type(), appErr.Error())
			require.Equal(t, tc.nonRetryable, appErr.NonRetryable(), appErr.Error())
			require.Len(t, srv.Requests(), 1, "the client must not retry on its own")
		})
	}
}

// A slow Responses stream heartbeats its reasoning, then its text.
func TestCallModelResponsesHeartbeats(t *testing.T) {
	t.Parallel()
	srv := sm.New(sm.Reply{Text: longText, Reasoning: "Let me think about foxes and dogs for a while.", ChunkDelay: 150 * time.Millisecond})
	defer srv.Close()
	a := New(Config{Model: ModelConfig{BaseURL: srv.URL(), DefaultModel: "m", API: ModelAPIResponses}})
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
	const thinking = "Let me think about foxes and dogs for a while."
	partial := 0
	for _, b := range beats {
		if b == progressWaitingStream {
			continue
		}
		partial++
		r, isThinking := strings.CutPrefix(b, "thinking: ")
		require.True(t, isThinking && strings.HasPrefix(thinking, r) || strings.HasPrefix(longText, b), "heartbeat %q is not the reply so far", b)
	}
	require.NotZero(t, partial, "no heartbeat showed a partial reply: %q", beats)
}
