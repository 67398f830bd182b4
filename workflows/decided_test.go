package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/activities"
)

// A decision for a call that no longer waits says how that call was
// decided (this turn's or an earlier one's), not "unknown"; and the
// update's name sent as a signal is refused into rejected_signals with
// the name of the signal to use.
func TestDecidingADecidedCallSaysHowItWasDecided(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w1", "write", `{"path":"b","content":"x"}`)),
		toolReply(call("w2", "write", `{"path":"c","content":"y"}`)),
		textReply("ok"),
	}, nil)
	rejected := map[string]string{}
	cb := func(id string) *testsuite.TestUpdateCallback {
		return &testsuite.TestUpdateCallback{
			OnAccept:   func() {},
			OnReject:   func(err error) { rejected[id] = err.Error() },
			OnComplete: func(any, error) {},
		}
	}
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(UpdateApprove, "u1", cb("u1"), Approval{CallID: "w1", Decision: DecisionApprove})
		h.env.UpdateWorkflow(UpdateApprove, "u2", cb("u2"), Approval{CallID: "w1", Decision: DecisionDeny})
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(UpdateApprove, Approval{CallID: "w2", Decision: DecisionApprove})
		h.env.UpdateWorkflow(UpdateApprove, "u3", cb("u3"), Approval{CallID: "w1", Decision: DecisionApprove})
		h.env.UpdateWorkflow(UpdateApprove, "u4", cb("u4"), Approval{CallID: "w2", Decision: DecisionDeny, Feedback: "not c"})
		h.env.UpdateWorkflow(UpdateApprove, "u5", cb("u5"), Approval{CallID: "w2", Decision: DecisionApprove})
	}, 2*time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, []string{"w1"}, h.ran)
	require.Equal(t, `call c1 is not waiting for approval: already decided (approved)`, rejected["u2"])
	require.Equal(t, `call c1 is not waiting for approval: already decided (approved (or allowed by a rule); it ran) (waiting: c2)`, rejected["u3"])
	require.Contains(t, rejected["u5"], `call c2 is not waiting for approval: already decided (denied: not c)`)
	require.Len(t, rejected, 3, "%q", rejected)
	st := h.status(t)
	require.Len(t, st.Rejected, 1, "%q", st.Rejected)
	require.Contains(t, st.Rejected[0], `a signal named "approve" refused: "approve" is an update, not a signal, so nothing was decided; send the "approval" signal`)
}
