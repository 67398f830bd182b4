package activities

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
)

// A chat reply's reasoning, in either field a provider uses, is kept on
// the message, streamed or not.
func TestCallModelKeepsChatReasoning(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		field    string
		noStream bool
	}{
		{"reasoning_content streamed", "", false},
		{"reasoning_content whole", "", true},
		{"reasoning streamed", "reasoning", false},
		{"reasoning whole", "reasoning", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := sm.New(sm.Reply{Text: "It is 4.", Reasoning: "The user asks for two plus two. That is four.", ReasoningField: tc.field})
			defer srv.Close()
			a := New(Config{Model: ModelConfig{BaseURL: srv.URL(), DefaultModel: "m", NoStream: tc.noStream}})
			resp, err := a.CallModel(context.Background(), hello)
			require.NoError(t, err)
			require.Equal(t, "It is 4.", resp.Message.Content)
			require.Equal(t, "The user asks for two plus two. That is four.", resp.Message.Reasoning)
		})
	}
}

// DeepSeek's thinking mode wants reasoning_content back on an assistant
// message with tool calls; a plain answer's reasoning, and reasoning that
// came from the Responses API, are not sent.
func TestChatSendsReasoningBackWithToolCalls(t *testing.T) {
	t.Parallel()
	srv := sm.New(sm.Text("done"))
	defer srv.Close()
	a := New(Config{Model: ModelConfig{BaseURL: srv.URL(), DefaultModel: "m"}})
	call := conversation.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}
	msgs := []conversation.Message{
		{Role: conversation.RoleUser, Content: "q1"},
		{Role: conversation.RoleAssistant, Content: "a1", Reasoning: "plain thoughts"},
		{Role: conversation.RoleUser, Content: "q2"},
		{Role: conversation.RoleAssistant, Reasoning: "I should read a", ToolCalls: []conversation.ToolCall{call}},
		conversation.ToolMessage(conversation.ToolResult{CallID: "c1", Name: "read", Content: "x"}),
		{Role: conversation.RoleAssistant, Reasoning: "from responses", ReasoningItems: []conversation.ReasoningItem{{ID: "rs_1"}},
			ToolCalls: []conversation.ToolCall{{ID: "c2", Name: "read", Arguments: `{}`}}},
		conversation.ToolMessage(conversation.ToolResult{CallID: "c2", Name: "read", Content: "y"}),
	}
	_, err := a.CallModel(context.Background(), ModelRequest{Messages: msgs})
	require.NoError(t, err)
	got := srv.Requests()[0].Messages
	require.Equal(t, "", got[1].ReasoningContent, "a plain answer's reasoning stays home")
	require.Equal(t, "I should read a", got[3].ReasoningContent)
	require.Equal(t, "", got[5].ReasoningContent, "Responses reasoning is not chat's")
}

// Cached and reasoning tokens are read from the usage details, streamed
// or not, and cached tokens are priced at the cached price.
func TestCallModelCountsAndPricesCachedTokens(t *testing.T) {
	t.Parallel()
	for _, noStream := range []bool{false, true} {
		srv := sm.New(sm.Reply{Text: "ok", Usage: &sm.Usage{PromptTokens: 1_000_000, CompletionTokens: 100_000, CachedTokens: 800_000, ReasoningTokens: 60_000}})
		a := New(Config{Model: ModelConfig{BaseURL: srv.URL(), DefaultModel: "gpt-4.1", NoStream: noStream}})
		resp, err := a.CallModel(context.Background(), hello)
		srv.Close()
		require.NoError(t, err)
		u := resp.Usage
		require.Equal(t, int64(800_000), u.CachedTokens)
		require.Equal(t, int64(60_000), u.ReasoningTokens)
		// gpt-4.1: 200k uncached at $2, 800k cached at $0.50, 100k out at $8.
		require.InDelta(t, 0.4+0.4+0.8, u.CostUSD, 1e-9, "stream=%v", !noStream)
	}
}

// prompt_cache_key goes to OpenAI by default, to other endpoints only when
// the worker says so, and is the workflow id.
func TestPromptCacheKey(t *testing.T) {
	t.Parallel()
	require.True(t, isOpenAI(""))
	require.True(t, isOpenAI("https://api.openai.com/v1"))
	require.False(t, isOpenAI("http://localhost:11434/v1"))
	for _, tc := range []struct {
		setting, api string
		want         bool
	}{
		{"", "chat", false}, {PromptCacheKeyAuto, "responses", false},
		{PromptCacheKeyOn, "chat", true}, {PromptCacheKeyOn, "responses", true},
		{PromptCacheKeyOff, "chat", false},
	} {
		srv := sm.New(sm.Text("ok"))
		a := New(Config{Model: ModelConfig{BaseURL: srv.URL(), DefaultModel: "m", PromptCacheKey: tc.setting, API: tc.api}})
		var s testsuite.WorkflowTestSuite
		env := s.NewTestActivityEnvironment()
		env.RegisterActivity(a)
		_, err := env.ExecuteActivity(a.CallModel, hello)
		require.NoError(t, err)
		req := srv.Requests()[0]
		srv.Close()
		require.Equal(t, tc.api, req.API)
		if tc.want {
			require.NotEmpty(t, req.PromptCacheKey, "%+v", tc)
			require.Equal(t, "default-test-workflow-id", req.PromptCacheKey, "the key is the workflow id")
		} else {
			require.Empty(t, req.PromptCacheKey, "%+v", tc)
		}
	}
}

// A custom (freeform) tool call arrives with its raw input, gets the JSON
// arguments its tool validates, and goes back as a custom call.
func TestChatCustomToolCallRoundTrip(t *testing.T) {
	t.Parallel()
	patch := "*** Begin Patch\n*** Add File: a.txt\n+hi \"there\"\n*** End Patch\n"
	defs := []ToolDef{{Name: "apply_patch", Parameters: json.RawMessage(`{"type":"object","properties":{"patch":{"type":"string"}}}`)}}
	for _, noStream := range []bool{false, true} {
		srv := sm.New(sm.Tools(sm.Call{ID: "p1", Name: "apply_patch", Arguments: patch, Custom: true}), sm.Text("done"))
		// FreeformOn: the request offers apply_patch as a custom tool, so
		// the call goes back as one (offered as a function, it goes back
		// as a function call: TestCustomCallRoundTrip).
		a := New(Config{Model: ModelConfig{BaseURL: srv.URL(), DefaultModel: "m", NoStream: noStream, FreeformTools: FreeformOn}})
		resp, err := a.CallModel(context.Background(), ModelRequest{Messages: hello.Messages, Tools: defs})
		require.NoError(t, err)
		args, _ := json.Marshal(map[string]string{"patch": patch})
		require.Equal(t, []conversation.ToolCall{{ID: "p1", Name: "apply_patch", Freeform: patch, Arguments: string(args)}}, resp.Message.ToolCalls, "stream=%v", !noStream)
		msgs := append(hello.Messages, resp.Message, conversation.ToolMessage(conversation.ToolResult{CallID: "p1", Name: "apply_patch", Content: "Success"}))
		_, err = a.CallModel(context.Background(), ModelRequest{Messages: msgs, Tools: defs})
		require.NoError(t, err)
		sent := srv.Requests()[1].Messages[1].ToolCalls[0]
		srv.Close()
		require.Equal(t, "custom", sent.Type)
		require.Equal(t, patch, sent.Custom.Input)
	}
}

func TestFreeformArguments(t *testing.T) {
	t.Parallel()
	defs := []ToolDef{
		{Name: "apply_patch", Parameters: json.RawMessage(`{"type":"object","properties":{"patch":{"type":"string"}},"required":["patch"]}`)},
		{Name: "two", Parameters: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}}`)},
	}
	for _, tc := range []struct{ name, tool, want string }{
		{"the sole string property", "apply_patch", `{"patch":"x\"y"}`},
		{"two properties", "two", `{"input":"x\"y"}`},
		{"unknown tool", "nope", `{"input":"x\"y"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := freeformArguments(conversation.Message{ToolCalls: []conversation.ToolCall{{Name: tc.tool, Freeform: `x"y`}}}, defs)
			require.JSONEq(t, tc.want, msg.ToolCalls[0].Arguments)
		})
	}
}
