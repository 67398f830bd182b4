package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// uiSignal sends a signal the way the Web UI's "Send Signal" does: the text
// typed in the box, as it was typed, in one json/plain payload.
func uiSignal(t *testing.T, id, name, typed string) {
	t.Helper()
	_, err := tc.WorkflowService().SignalWorkflowExecution(context.Background(), &workflowservice.SignalWorkflowExecutionRequest{
		Namespace:         "default",
		WorkflowExecution: &commonpb.WorkflowExecution{WorkflowId: id},
		SignalName:        name,
		Input: &commonpb.Payloads{Payloads: []*commonpb.Payload{{
			Metadata: map[string][]byte{"encoding": []byte("json/plain")},
			Data:     []byte(typed),
		}}},
		Identity: "temporal-ui",
	})
	require.NoError(t, err)
}

// A person at the Web UI approves one call and denies another with
// feedback by typing plain, hand-formatted JSON, then sends a message.
func TestSignalsTypedInTheWebUI(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(
			sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "ui.txt", "content": "from the UI\n"}`},
			sm.Call{ID: "c_sh", Name: "shell", Arguments: `{"command": "touch nope"}`},
		),
		sm.Text("what next?"),
		sm.Text("bye"),
	)
	id := e.start(workflows.SessionInput{Prompt: "go", IdleTimeout: workflows.Duration(time.Minute)})
	waitPending(t, id, 2)
	uiSignal(t, id, workflows.SignalApproval, "{\n  \"call_id\": \"c_w\",\n  \"decision\": \"approve\"\n}\n")
	uiSignal(t, id, workflows.SignalApproval, `{"call_id":"c_sh", "decision":"deny", "feedback":"not from the UI, please"}`)
	waitFor(t, "the session to wait for input", 30*time.Second, func() bool {
		return query[workflows.Status](t, id, workflows.QueryStatus).Phase == workflows.PhaseWaitingInput
	})
	uiSignal(t, id, workflows.SignalUserMessage, `{"text": "thanks"}`)
	waitFor(t, "the second reply", 30*time.Second, func() bool { return len(e.model.Requests()) == 3 })
	out, err := e.starter("cancel", id)
	require.NoError(t, err, out)
	msgs := e.checkSession(id)
	require.Equal(t, conversation.ReasonRan, resultFor(msgs, "c_w").Reason)
	require.Equal(t, "from the UI\n", readFile(t, e.workspace+"/ui.txt"))
	denied := resultFor(msgs, "c_sh")
	require.Equal(t, conversation.ReasonDenied, denied.Reason)
	require.Contains(t, denied.Content, "not from the UI, please")
	require.NoFileExists(t, e.workspace+"/nope")
	last := e.model.Requests()[2].Messages
	require.Equal(t, "thanks", last[len(last)-1].Content)
	require.Empty(t, query[workflows.Status](t, id, workflows.QueryStatus).Rejected)
}
