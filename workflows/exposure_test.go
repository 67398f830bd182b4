package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
)

// A catalog of 60 deferred tools (as a large MCP server gives) sends only
// the direct ones plus tool_search; the model finds a deferred tool by
// searching, and it is sent, and callable, from the next turn on. Hidden
// tools are never sent and a call to one is an unknown tool.
func TestDeferredToolsAndToolSearch(t *testing.T) {
	t.Parallel()
	cat := catalog()
	for i := 0; i < 60; i++ {
		cat.Tools = append(cat.Tools, tools.Spec{
			Name:        fmt.Sprintf("crm__lookup_%02d", i),
			Description: fmt.Sprintf("Look up record kind %02d in the CRM", i),
			Parameters:  json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}}}`),
			ReadOnly:    true, Exposure: tools.ExposureDeferred, Server: "crm",
		})
	}
	cat.Tools = append(cat.Tools,
		tools.Spec{Name: "crm__invoice_search", Description: "Search invoices by customer name", Parameters: json.RawMessage(`{"type":"object","properties":{"customer":{"type":"string"}}}`), ReadOnly: true, Exposure: tools.ExposureDeferred},
		tools.Spec{Name: "runtime_only", Description: "internal", Parameters: json.RawMessage(`{"type":"object"}`), ReadOnly: true, Exposure: tools.ExposureHidden},
	)
	env := newSessionEnv(&Sessions{})
	env.OnActivity(a.ListTools, mock.Anything).Return(cat, nil)
	env.OnActivity(a.LoadWorkspaceConfig, mock.Anything, mock.Anything).Return(activities.WorkspaceConfig{}, nil)
	replies := []activities.ModelResponse{
		toolReply(conversation.ToolCall{ID: "s1", Name: "tool_search", Arguments: `{"query":"invoices for a customer","limit":3}`}),
		toolReply(
			conversation.ToolCall{ID: "c1", Name: "crm__invoice_search", Arguments: `{"customer":"ACME"}`},
			conversation.ToolCall{ID: "h1", Name: "runtime_only", Arguments: `{}`},
		),
		textReply("done"),
	}
	var reqs []activities.ModelRequest
	env.OnActivity(a.CallModel, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req activities.ModelRequest) (activities.ModelResponse, error) {
			reqs = append(reqs, req)
			return replies[len(reqs)-1], nil
		})
	var ran []string
	env.OnActivity(a.RunTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
			ran = append(ran, r.Name)
			return tools.Result{Content: "3 invoices"}, nil
		})
	env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "find ACME's invoices"})
	require.NoError(t, env.GetWorkflowError())

	first := toolNamesSent(reqs[0])
	require.Less(t, len(first), 15, "deferred tools are not sent: %v", first)
	require.Contains(t, first, "tool_search")
	require.NotContains(t, first, "crm__invoice_search")
	require.NotContains(t, first, "runtime_only")
	require.Contains(t, toolNamesSent(reqs[1]), "crm__invoice_search", "found tools are sent from the next turn")
	require.Contains(t, reqs[1].Messages[len(reqs[1].Messages)-1].Content, "crm__invoice_search")
	require.Equal(t, []string{"crm__invoice_search"}, ran, "tool_search ran in the workflow; the hidden tool not at all")
	var hidden *conversation.ToolResult
	for _, m := range reqs[2].Messages {
		if m.Result != nil && m.Result.CallID == "h1" {
			hidden = m.Result
		}
	}
	require.NotNil(t, hidden)
	require.Equal(t, conversation.ReasonUnknownTool, hidden.Reason)
	// Only name, description and parameters reach the model.
	raw, err := json.Marshal(reqs[1].Tools)
	require.NoError(t, err)
	var sent []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &sent))
	for _, d := range sent {
		for key := range d {
			require.Contains(t, []string{"name", "description", "parameters"}, key)
		}
	}
}

// Once a worker stored the run's tool definitions (ModelResponse.ToolsRef),
// later requests name them instead of carrying them; when tool_search
// changes what is sent, the definitions go inline again and the new
// reference is used from then on.
func TestToolDefinitionsByReference(t *testing.T) {
	t.Parallel()
	cat := catalog()
	cat.Tools = append(cat.Tools, tools.Spec{Name: "crm__invoice_search", Description: "Search invoices by customer name",
		Parameters: json.RawMessage(`{"type":"object","properties":{"customer":{"type":"string"}}}`), ReadOnly: true, Exposure: tools.ExposureDeferred})
	env := newSessionEnv(&Sessions{})
	env.OnActivity(a.ListTools, mock.Anything).Return(cat, nil)
	env.OnActivity(a.LoadWorkspaceConfig, mock.Anything, mock.Anything).Return(activities.WorkspaceConfig{}, nil)
	replies := []activities.ModelResponse{
		toolReply(call("r1", "read", `{"path":"a"}`)),
		toolReply(conversation.ToolCall{ID: "s1", Name: "tool_search", Arguments: `{"query":"invoices for a customer","limit":3}`}),
		toolReply(call("r2", "read", `{"path":"b"}`)),
		textReply("done"),
	}
	var reqs []activities.ModelRequest
	env.OnActivity(a.CallModel, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req activities.ModelRequest) (activities.ModelResponse, error) {
			reqs = append(reqs, req)
			r := replies[len(reqs)-1]
			if len(req.Tools) > 0 { // the worker stores what it was sent
				r.ToolsRef = fmt.Sprintf("tools-%d", len(req.Tools))
			} else {
				r.ToolsRef = req.ToolsRef
			}
			return r, nil
		})
	env.OnActivity(a.RunTool, mock.Anything, mock.Anything).Return(tools.Result{Content: "ok"}, nil)
	env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto"})
	require.NoError(t, env.GetWorkflowError())
	require.Len(t, reqs, 4)
	n := len(reqs[0].Tools)
	require.NotZero(t, n)
	require.Empty(t, reqs[0].ToolsRef)
	require.Empty(t, reqs[1].Tools, "the same definitions go by reference")
	require.Equal(t, fmt.Sprintf("tools-%d", n), reqs[1].ToolsRef)
	require.Len(t, reqs[2].Tools, n+1, "tool_search found one: the new list goes inline")
	require.Empty(t, reqs[2].ToolsRef)
	require.Empty(t, reqs[3].Tools)
	require.Equal(t, fmt.Sprintf("tools-%d", n+1), reqs[3].ToolsRef)
}
