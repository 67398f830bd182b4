package workflows

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
)

// A call whose tool prepares it (lsp_rename) is completed by a prepare
// activity before it is shown for approval: the pending call carries the
// prepared arguments (the patch), approval is refused while it is being
// prepared, and the run gets exactly those arguments.
func TestPreparedCallIsApprovedAsPrepared(t *testing.T) {
	t.Parallel()
	const patch = "*** Begin Patch\n*** Update File: a.go\n@@\n-func Old() {}\n+func New() {}\n*** End Patch\n"
	replies := []activities.ModelResponse{
		toolReply(call("rn", tools.LSPRenameName, `{"path":"a.go","symbol":"Old","new_name":"New"}`)),
		textReply("done"),
	}
	h := &harness{env: newSessionEnv(&Sessions{})}
	specs := append(catalog().Tools, tools.NewRegistry(tools.LSPTools(nil)...).Specs()...)
	h.env.OnActivity(a.ListTools, mock.Anything).Return(activities.Catalog{Tools: specs}, nil)
	h.env.OnActivity(a.LoadWorkspaceConfig, mock.Anything, mock.Anything).Return(activities.WorkspaceConfig{}, nil)
	i := 0
	h.env.OnActivity(a.CallModel, mock.Anything, mock.Anything).Return(
		func(_ context.Context, _ activities.ModelRequest) (activities.ModelResponse, error) {
			i++
			return replies[i-1], nil
		})
	var mu sync.Mutex
	var prepared, ran []activities.ToolRequest
	h.env.OnActivity(a.RunTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			if r.Prepare {
				prepared = append(prepared, r)
				var args map[string]any
				_ = json.Unmarshal(r.Arguments, &args)
				args["patch"] = patch
				out, _ := json.Marshal(args)
				return tools.Result{Prepared: out, Files: []tools.FileVersion{{Path: "a.go", SHA256: "abc"}}}, nil
			}
			ran = append(ran, r)
			return tools.Result{Content: "renamed"}, nil
		}).After(time.Second) // the preparation takes a while: approvals meanwhile are refused
	var earlyErr error
	h.env.RegisterDelayedCallback(func() {
		require.Empty(t, h.pending(t), "not shown before it is prepared")
		h.env.UpdateWorkflow(UpdateApprove, "early", &testUpdateCallback{onReject: func(err error) { earlyErr = err }}, Approval{CallID: "rn", Decision: "approve"})
	}, 500*time.Millisecond)
	h.env.RegisterDelayedCallback(func() {
		p := h.pending(t)
		require.Len(t, p, 1)
		var args struct {
			Patch string `json:"patch"`
		}
		require.NoError(t, json.Unmarshal([]byte(p[0].Arguments), &args))
		require.Equal(t, patch, args.Patch, "the approval shows the prepared patch")
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "rn", Decision: "approve"})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "rename"})
	require.NoError(t, h.env.GetWorkflowError())
	require.ErrorContains(t, earlyErr, `call c1 is being prepared`)
	require.Len(t, prepared, 1)
	require.Len(t, ran, 1)
	require.Contains(t, string(ran[0].Arguments), `"patch":`, "the run gets the prepared arguments")
	require.Equal(t, map[string]string{"a.go": "abc"}, ran[0].Seen, "the files the preparation read count as seen")
	require.Equal(t, conversation.ReasonRan, byID(h.conversation(t), "rn").Reason)
}

// testUpdateCallback records an update's rejection.
type testUpdateCallback struct{ onReject func(error) }

func (c *testUpdateCallback) Accept()             {}
func (c *testUpdateCallback) Reject(err error)    { c.onReject(err) }
func (c *testUpdateCallback) Complete(any, error) {}

// A rename after an edit in the same reply is prepared once the edit is
// done: computed before it, its patch would be stale on arrival.
func TestPreparationWaitsForTheCallsBeforeIt(t *testing.T) {
	t.Parallel()
	replies := []activities.ModelResponse{
		toolReply(call("w", "write", `{"path":"a.go","content":"package m"}`),
			call("rn", tools.LSPRenameName, `{"path":"a.go","symbol":"m","new_name":"n"}`)),
		textReply("done"),
	}
	h := &harness{env: newSessionEnv(&Sessions{})}
	specs := append(catalog().Tools, tools.NewRegistry(tools.LSPTools(nil)...).Specs()...)
	h.env.OnActivity(a.ListTools, mock.Anything).Return(activities.Catalog{Tools: specs}, nil)
	h.env.OnActivity(a.LoadWorkspaceConfig, mock.Anything, mock.Anything).Return(activities.WorkspaceConfig{}, nil)
	i := 0
	h.env.OnActivity(a.CallModel, mock.Anything, mock.Anything).Return(
		func(_ context.Context, _ activities.ModelRequest) (activities.ModelResponse, error) {
			i++
			return replies[i-1], nil
		})
	var mu sync.Mutex
	var order []string
	h.env.OnActivity(a.RunTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
			mu.Lock()
			defer mu.Unlock()
			if r.Prepare {
				order = append(order, "prepare "+r.CallID)
				return tools.Result{Prepared: json.RawMessage(`{"path":"a.go","symbol":"m","new_name":"n","patch":"*** Begin Patch\n*** End Patch\n"}`)}, nil
			}
			order = append(order, "run "+r.CallID)
			return tools.Result{Content: "ok"}, nil
		})
	h.env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"w"}, pendingIDs(h.pending(t)), "the rename is not shown before the write it follows is done")
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: "approve"})
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"rn"}, pendingIDs(h.pending(t)))
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "rn", Decision: "approve"})
	}, 2*time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "edit then rename"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, []string{"run w", "prepare rn", "run rn"}, order)
}

func pendingIDs(ps []PendingApproval) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.CallID)
	}
	return out
}
