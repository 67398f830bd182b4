package activities

import (
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
)

// FuzzFromResponse feeds arbitrary replies through the Responses
// conversion: it never panics, and what it keeps goes back out whole
// (every reasoning item with its encrypted content, every call).
func FuzzFromResponse(f *testing.F) {
	f.Add(`{"status":"completed","output":[{"type":"reasoning","id":"rs","encrypted_content":"E","summary":[{"text":"s"}]},{"type":"function_call","call_id":"c","name":"n","arguments":"{}"},{"type":"custom_tool_call","call_id":"d","name":"p","input":"x"},{"type":"message","content":[{"type":"output_text","text":"t"}]}]}`)
	f.Add(`{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[{"type":"message","content":[{"type":"refusal","refusal":"no"}]}]}`)
	f.Add(`{"output":[{"type":"function_call","arguments":{"q":1}}]}`)
	f.Add(`{"status":"incomplete","output":[{"type":"reasoning","id":"rs","encrypted_content":"E"}]}`)
	a := New(Config{})
	f.Fuzz(func(t *testing.T, raw string) {
		var r responses.Response
		if json.Unmarshal([]byte(raw), &r) != nil {
			return
		}
		resp, err := a.fromResponse("m", &r, 1)
		if err != nil {
			return
		}
		in, err := json.Marshal(toResponsesInput([]conversation.Message{resp.Message}))
		require.NoError(t, err)
		var items []map[string]any
		require.NoError(t, json.Unmarshal(in, &items))
		n := 0
		for _, it := range items {
			switch it["type"] {
			case "reasoning":
				ri := resp.Message.ReasoningItems[n]
				require.Equal(t, asJSON(t, ri.ID), it["id"])
				if ri.EncryptedContent != "" {
					require.Equal(t, asJSON(t, ri.EncryptedContent), it["encrypted_content"])
				}
				n++
			}
		}
		want := len(resp.Message.ReasoningItems)
		if resp.Message.Content == "" && len(resp.Message.ToolCalls) == 0 {
			want = 0 // reasoning that led to nothing is not sent
		}
		require.Equal(t, want, n)
		calls := 0
		for _, it := range items {
			if it["type"] == "function_call" || it["type"] == "custom_tool_call" {
				calls++
			}
		}
		require.Equal(t, len(resp.Message.ToolCalls), calls)
	})
}

// FuzzChatReasoning feeds arbitrary chat replies through the chat
// conversion: never a panic, and reasoning only from a string field.
func FuzzChatReasoning(f *testing.F) {
	f.Add(`{"choices":[{"message":{"content":"a","reasoning_content":"r"}}]}`)
	f.Add(`{"choices":[{"message":{"reasoning":{"x":1},"tool_calls":[{"id":"c","type":"custom","custom":{"name":"p","input":"i"}}]}}]}`)
	f.Add(`{"choices":[{"message":{"reasoning_content":null,"reasoning":"g"}}],"usage":{"prompt_tokens_details":{"cached_tokens":3}}}`)
	a := New(Config{})
	f.Fuzz(func(t *testing.T, raw string) {
		var c openai.ChatCompletion
		if json.Unmarshal([]byte(raw), &c) != nil {
			return
		}
		resp, err := a.response("m", &c, 1)
		if err != nil {
			return
		}
		_ = toWireMessages([]conversation.Message{resp.Message})
		if resp.Message.Reasoning != "" {
			_, inContent := c.Choices[0].Message.JSON.ExtraFields["reasoning_content"]
			_, inReasoning := c.Choices[0].Message.JSON.ExtraFields["reasoning"]
			require.True(t, inContent || inReasoning)
		}
	})
}

// asJSON is s as it reads back from JSON: encoding/json writes each byte
// that is not UTF-8 as U+FFFD, so an id the server sent with one (the
// fuzzer's "\x80") goes back out that way, which is all the request can
// carry.
func asJSON(t *testing.T, s string) string {
	b, err := json.Marshal(s)
	require.NoError(t, err)
	var out string
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}
