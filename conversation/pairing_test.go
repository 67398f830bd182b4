package conversation

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func call(id, name string) ToolCall { return ToolCall{ID: id, Name: name, Arguments: "{}"} }

func result(id string) Message {
	return ToolMessage(ToolResult{CallID: id, Name: "read", Content: "ok", Reason: ReasonRan})
}

func TestCheckPairing(t *testing.T) {
	t.Parallel()
	asst := func(calls ...ToolCall) Message { return Message{Role: RoleAssistant, ToolCalls: calls} }
	user := Message{Role: RoleUser, Content: "hi"}
	cases := []struct {
		name    string
		msgs    []Message
		wantErr string
	}{
		{"empty", nil, ""},
		{"text only", []Message{user, {Role: RoleAssistant, Content: "hello"}}, ""},
		{"paired batch", []Message{user, asst(call("a", "read"), call("b", "write")), result("b"), result("a"), {Role: RoleAssistant, Content: "done"}}, ""},
		{"missing result at end", []Message{user, asst(call("a", "read"), call("b", "write")), result("a")}, "tool call b (write) has no result"},
		{"missing result before user", []Message{user, asst(call("a", "read")), user}, "tool call a (read) has no result"},
		{"double result", []Message{user, asst(call("a", "read")), result("a"), result("a")}, "second result for tool call a"},
		{"unknown result", []Message{user, asst(call("a", "read")), result("a"), result("zz")}, "result for unknown tool call zz"},
		{"late result", []Message{user, asst(call("a", "read")), {Role: RoleAssistant, Content: "x"}, result("a")}, "tool call a (read) has no result"},
		{"reused id", []Message{user, asst(call("a", "read")), result("a"), asst(call("a", "read")), result("a")}, "tool call id a is used twice"},
		{"no reason", []Message{user, asst(call("a", "read")), ToolMessage(ToolResult{CallID: "a"})}, "records no reason"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := CheckPairing(tc.msgs)
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}
