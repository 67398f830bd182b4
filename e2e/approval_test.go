package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// An unattended session denies an ask at once, without waiting.
func TestUnattendedSessionFailsClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Tools(sm.Call{ID: "c_sh", Name: "shell", Arguments: `{"command": "touch pwned"}`}), sm.Text("ok"))
	id := e.start(workflows.SessionInput{Prompt: "go", Approval: workflows.ApproverNone})
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	msgs := e.checkSession(id)
	require.Equal(t, conversation.ReasonDeniedByPolicy, resultFor(msgs, "c_sh").Reason)
	require.NoFileExists(t, e.workspace+"/pwned")
}

// A 2-second approval timeout gives the call the reason timeout.
func TestApprovalTimeout(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Tools(sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "x", "content": "x"}`}), sm.Text("ok"))
	id := e.start(workflows.SessionInput{Prompt: "go", ApprovalTimeout: workflows.Duration(2 * time.Second)})
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	r := resultFor(e.checkSession(id), "c_w")
	require.Equal(t, conversation.ReasonTimeout, r.Reason)
	content, _ := e.model.Requests()[1].LastToolResult("c_w")
	require.Contains(t, content, "timeout")
	require.NotContains(t, content, "user denied")
	require.Contains(t, content, "not a denial")
	recordHistory(t, id, "approval_timeout")
}

// The CLI approves through the update: a bad call id is an error to the
// person and adds nothing to history. `pending --all` finds the session
// through the search attributes.
func TestApproveUpdateAndPendingAll(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Tools(sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "x", "content": "x"}`}), sm.Text("ok"))
	id := e.start(workflows.SessionInput{Prompt: "go"})
	waitPending(t, id, 1)

	// Straight to the update, as a script would: rejected, nothing recorded.
	before := len(history(t, id).Events)
	h, err := tc.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{
		WorkflowID: id, UpdateName: workflows.UpdateApprove, WaitForStage: client.WorkflowUpdateStageCompleted,
		Args: []any{workflows.Approval{CallID: "c_nope", Decision: "approve"}},
	})
	require.NoError(t, err)
	require.ErrorContains(t, h.Get(context.Background(), nil), `unknown call id "c_nope" (waiting: c1)`)
	require.Len(t, history(t, id).Events, before, "a rejected update must not touch history")

	var listed string
	waitFor(t, "pending --all to list the session", 20*time.Second, func() bool {
		out, err := e.starter("pending", "--all")
		listed = out
		return err == nil && strings.Contains(out, id) && strings.Contains(out, `"path": "x"`)
	})
	require.Contains(t, listed, "temporal workflow signal")
	resp, err := tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
		Query: `WorkflowId = "` + id + `" AND LongrunPendingApprovals = 1 AND LongrunPhase = "waiting-approval"`,
	})
	require.NoError(t, err)
	require.Len(t, resp.GetExecutions(), 1)

	out, err := e.starter("approve", id, "c_w")
	require.NoError(t, err, out)
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	e.checkSession(id)
	var updates int
	for _, ev := range history(t, id).Events {
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED {
			updates++
		}
	}
	require.Equal(t, 1, updates, "only the valid approval is in history")
	out, err = e.starter("approve", id, "c_w")
	require.Error(t, err, out)
}
