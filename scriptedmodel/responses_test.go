package scriptedmodel

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A Responses request is recorded as sent (Items) and regrouped as chat
// messages, so a Responder reads both protocols alike.
func TestDecodeResponsesRequest(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		body string
		want []Message
	}{
		{"string input", `{"input":"hi","instructions":"be brief"}`,
			[]Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}},
		{"items", `{"input":[
			{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_text","text":"b"}]},
			{"type":"reasoning","id":"rs","summary":[{"type":"summary_text","text":"think"}],"encrypted_content":"E"},
			{"type":"message","role":"assistant","content":"on it"},
			{"type":"function_call","call_id":"c1","name":"read","arguments":"{}"},
			{"type":"custom_tool_call","call_id":"c2","name":"apply_patch","input":"P"},
			{"type":"function_call_output","call_id":"c1","output":"X"},
			{"type":"custom_tool_call_output","call_id":"c2","output":[{"type":"input_text","text":"Y"}]}]}`,
			[]Message{
				{Role: "user", Content: "ab"},
				{Role: "assistant", Content: "on it", ReasoningContent: "think", ToolCalls: []WireCall{
					wireCallOf("c1", "function", "read", "{}", ""), wireCallOf("c2", "custom", "apply_patch", "", "P")}},
				{Role: "tool", ToolCallID: "c1", Content: "X"},
				{Role: "tool", ToolCallID: "c2", Content: "Y"},
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req, err := decodeResponsesRequest([]byte(tc.body))
			require.NoError(t, err)
			require.Equal(t, APIResponses, req.API)
			require.Equal(t, tc.want, req.Messages)
		})
	}
	req, err := decodeResponsesRequest([]byte(`{"input":[{"type":"reasoning","id":"rs","encrypted_content":"E"}],"store":false,"include":["reasoning.encrypted_content"],"prompt_cache_key":"k","tools":[{"type":"custom","name":"apply_patch","format":{"type":"grammar"}}]}`))
	require.NoError(t, err)
	require.Equal(t, "E", req.ItemsOfType("reasoning")[0].EncryptedContent)
	require.False(t, *req.Store)
	require.Equal(t, "k", req.PromptCacheKey)
	require.Equal(t, "apply_patch", req.Tools[0].Function.Name)
	require.JSONEq(t, `{"type":"grammar"}`, string(req.Tools[0].Format))
	_, err = decodeResponsesRequest([]byte(`{"input":7}`))
	require.ErrorContains(t, err, "neither a string nor a list")
}

func wireCallOf(id, typ, name, args, input string) WireCall {
	c := WireCall{ID: id, Type: typ}
	c.Function.Name, c.Function.Arguments = name, args
	if typ == "custom" {
		c.Custom.Name, c.Custom.Input = name, input
	}
	return c
}

// FuzzDecodeResponsesRequest: any body is decoded or refused, never a panic.
func FuzzDecodeResponsesRequest(f *testing.F) {
	f.Add(`{"input":"hi"}`)
	f.Add(`{"input":[{"type":"function_call_output","call_id":"c","output":[{"text":"x"}]}],"tools":[{"type":"function","name":"n"}]}`)
	f.Fuzz(func(t *testing.T, body string) {
		_, _ = decodeResponsesRequest([]byte(body))
	})
}
