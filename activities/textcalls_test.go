package activities

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
)

// A model that writes its tool calls as text (a local model served
// without a tool-call parser) still gets them run: only tools the session
// offered count, typed by their schemas, ids carrying the turn.
func TestCallModelRecoversToolCallsWrittenAsText(t *testing.T) {
	t.Parallel()
	text := "Let me look.\n<tool_call>\n{\"name\": \"read\", \"arguments\": {\"path\": \"main.go\", \"limit\": 20}}\n</tool_call>\n" +
		"<tool_call>{\"name\": \"rm_everything\", \"arguments\": {}}</tool_call>"
	srv := sm.New(sm.Reply{Text: text}, sm.Reply{Text: "plain <b>html</b> is not a call"})
	defer srv.Close()
	a, _ := newActs(t, srv)
	cat, err := a.ListTools(context.Background())
	require.NoError(t, err)
	var defs []ToolDef
	for _, s := range cat.Tools {
		defs = append(defs, ToolDef{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	req := ModelRequest{Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}}, Tools: defs, Turn: 7}
	resp, err := a.CallModel(context.Background(), req)
	require.NoError(t, err)
	require.Len(t, resp.Message.ToolCalls, 1)
	c := resp.Message.ToolCalls[0]
	require.Equal(t, "read", c.Name)
	require.JSONEq(t, `{"path": "main.go", "limit": 20}`, c.Arguments)
	require.Contains(t, c.ID, "t7_")
	require.Contains(t, resp.Message.Content, "Let me look.")
	require.Contains(t, resp.Message.Content, "rm_everything", "a tool the session does not offer stays text")

	resp, err = a.CallModel(context.Background(), req)
	require.NoError(t, err)
	require.Empty(t, resp.Message.ToolCalls)
	require.Equal(t, "plain <b>html</b> is not a call", resp.Message.Content)
}
