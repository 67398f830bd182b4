package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
)

// A model that reuses its call ids, across turns and within one reply,
// decides nothing a person did not see: every call has the session's own
// id, a model id that names more than one call is refused, a digest of
// other arguments is refused (the update with an error, the signal into
// rejected_signals with the call left waiting), and only the calls
// approved under their own id and digest run.
func TestReusedModelCallIDsDecideNothingUnseen(t *testing.T) {
	t.Parallel()
	benign, hostile := `{"command":"go test ./..."}`, `{"command":"touch pwned"}`
	var mu sync.Mutex
	var ran []string
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("dup", "write", `{"path":"a","content":"x"}`)),
		toolReply(call("dup", "shell", benign), call("dup", "shell", hostile)),
		textReply("ok"),
	}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		ran = append(ran, r.Name+" "+string(r.Arguments))
		return tools.Result{Content: "ok"}, nil
	})
	refused := map[string]string{}
	var outcomes []ApprovalOutcome
	cb := func(id string) *testsuite.TestUpdateCallback {
		return &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { refused[id] = err.Error() },
			OnComplete: func(v any, err error) {
				require.NoError(t, err, id)
				outcomes = append(outcomes, v.(ApprovalOutcome))
			},
		}
	}
	var pending []PendingApproval
	h.env.RegisterDelayedCallback(func() {
		// One call has the model's "dup" so far: its id is taken.
		h.env.UpdateWorkflow(UpdateApprove, "u1", cb("u1"), Approval{CallID: "dup", Decision: DecisionApprove})
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(QueryPendingApprovals)
		require.NoError(t, err)
		require.NoError(t, v.Get(&pending))
		// "dup" now names c1 (decided), c2 and c3: refused, whatever it meant.
		h.env.UpdateWorkflow(UpdateApprove, "u2", cb("u2"), Approval{CallID: "dup", Decision: DecisionApprove})
		// A page that showed the benign command, sent for the hostile call.
		h.env.UpdateWorkflow(UpdateApprove, "u3", cb("u3"), Approval{ID: "c3", Digest: callref.Short(callref.Digest("shell", benign)), Decision: DecisionApprove})
		h.env.SignalWorkflow(SignalApproval, Approval{ID: "c3", Digest: callref.Digest("shell", benign), Decision: DecisionApprove})
		// --all from a signal approves nothing here; the session's ids do.
		h.env.UpdateWorkflow(UpdateApprove, "u4", cb("u4"), Approval{ID: "c1", Decision: DecisionDeny, Feedback: "again"})
	}, 2*time.Minute)
	h.env.RegisterDelayedCallback(func() {
		st := h.status(t)
		require.Len(t, st.Rejected, 1, "%q", st.Rejected)
		require.Contains(t, st.Rejected[0], "call c3 has other arguments than the ones you saw")
		v, err := h.env.QueryWorkflow(QueryPendingApprovals)
		require.NoError(t, err)
		var still []PendingApproval
		require.NoError(t, v.Get(&still))
		require.Len(t, still, 2, "the refused signal left c3 waiting")
		h.env.UpdateWorkflow(UpdateApprove, "u5", cb("u5"), Approval{ID: "c2", Digest: callref.Digest("shell", benign), Decision: DecisionApprove})
		h.env.UpdateWorkflow(UpdateApprove, "u6", cb("u6"), Approval{ID: "c3", Digest: callref.Digest("shell", hostile), Decision: DecisionDeny, Feedback: "no"})
	}, 3*time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())

	require.Len(t, pending, 2)
	for i, want := range []struct{ id, args string }{{"c2", benign}, {"c3", hostile}} {
		require.Equal(t, want.id, pending[i].ID)
		require.Equal(t, "dup", pending[i].CallID)
		require.Equal(t, callref.Digest("shell", want.args), pending[i].Digest)
	}
	require.Contains(t, refused["u2"], `call id "dup" names 3 calls (c1, c2, c3)`)
	require.Contains(t, refused["u2"], "name the call by the session's id")
	require.Contains(t, refused["u3"], "call c3 has other arguments than the ones you saw")
	require.Contains(t, refused["u4"], "call c1 is not waiting for approval: already decided (approved (or allowed by a rule); it ran)")
	require.Len(t, refused, 3, "%q", refused)
	require.Equal(t, []ApprovalOutcome{
		{Decision: DecisionApprove, CallIDs: []string{"dup"}, IDs: []string{"c1"}},
		{Decision: DecisionApprove, CallIDs: []string{"dup"}, IDs: []string{"c2"}},
		{Decision: DecisionDeny, CallIDs: []string{"dup"}, IDs: []string{"c3"}},
	}, outcomes)
	require.Equal(t, []string{`write {"path":"a","content":"x"}`, "shell " + benign}, ran, "the hostile call never ran")
	v, err := h.env.QueryWorkflow(QueryConversation)
	require.NoError(t, err)
	var msgs []conversation.Message // not paired: the model used "dup" three times
	require.NoError(t, v.Get(&msgs))
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			require.NotEmpty(t, c.Ref, "every call carries the session's id")
		}
		if m.Result != nil {
			require.NotEmpty(t, m.Result.Ref)
		}
	}
}
