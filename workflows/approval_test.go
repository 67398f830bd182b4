package workflows

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
)

func TestUnattendedSessionDeniesWithoutWaiting(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("r", "read", `{"path":"a"}`), call("w", "write", `{"path":"b","content":"x"}`)),
		textReply("ok"),
	}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Approval: ApproverNone})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, []string{"r"}, h.ran)
	msgs := h.conversation(t)
	w := byID(msgs, "w")
	require.Equal(t, conversation.ReasonDeniedByPolicy, w.Reason)
	require.Contains(t, w.Content, "no approver is attached")
}

func TestApprovalTimeoutIsNotADenial(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w", "write", `{"path":"b","content":"x"}`)),
		textReply("ok"),
	}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", ApprovalTimeout: Duration(2 * time.Second)})
	require.NoError(t, h.env.GetWorkflowError())
	require.Empty(t, h.ran)
	w := byID(h.conversation(t), "w")
	require.Equal(t, conversation.ReasonTimeout, w.Reason)
	require.Contains(t, w.Content, "not a denial")
}

func TestApproveUpdateValidates(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w1", "write", `{"path":"b","content":"x"}`), call("w2", "write", `{"path":"c","content":"y"}`)),
		textReply("ok"),
	}, nil)
	var rejected []error
	var outcomes []ApprovalOutcome
	cb := func(id string) *testsuite.TestUpdateCallback {
		return &testsuite.TestUpdateCallback{
			OnAccept: func() {},
			OnReject: func(err error) { rejected = append(rejected, err) },
			OnComplete: func(v any, err error) {
				require.NoError(t, err, id)
				outcomes = append(outcomes, v.(ApprovalOutcome))
			},
		}
	}
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(UpdateApprove, "u1", cb("u1"), Approval{CallID: "nope", Decision: "approve"})
		h.env.UpdateWorkflow(UpdateApprove, "u2", cb("u2"), Approval{CallID: "w1", Decision: "later"})
		h.env.UpdateWorkflow(UpdateApprove, "u3", cb("u3"), Approval{CallID: "w1", Decision: "approve"})
		h.env.UpdateWorkflow(UpdateApprove, "u4", cb("u4"), Approval{CallID: "w1", Decision: "deny"})
		h.env.UpdateWorkflow(UpdateApprove, "u5", cb("u5"), Approval{All: true, Decision: "deny", Feedback: "no"})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Len(t, rejected, 3)
	require.ErrorContains(t, rejected[0], `unknown call id "nope" (waiting: c1, c2)`)
	require.ErrorContains(t, rejected[1], `decision "later"`)
	require.ErrorContains(t, rejected[2], `not waiting for approval`)
	require.Equal(t, []ApprovalOutcome{{Decision: "approve", CallIDs: []string{"w1"}, IDs: []string{"c1"}}, {Decision: "deny", CallIDs: []string{"w2"}, IDs: []string{"c2"}}}, outcomes)
	msgs := h.conversation(t)
	require.Equal(t, conversation.ReasonRan, byID(msgs, "w1").Reason)
	require.Equal(t, conversation.ReasonDenied, byID(msgs, "w2").Reason)
}

func TestBadApproverFailsClearly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Approval: "robot"})
	require.ErrorContains(t, h.env.GetWorkflowError(), `approval "robot"`)
}

func TestInterruptStopsTheTurnAndWaitsForInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("r", "read", `{"path":"a"}`), call("w", "write", `{"path":"b","content":"x"}`)),
		textReply("ok, what next?"),
	}, nil)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(SignalInterrupt, nil)
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		var st Status
		require.NoError(t, v.Get(&st))
		require.Equal(t, PhaseWaitingInput, st.Phase)
		h.env.SignalWorkflow(SignalUserMessage, UserMessage{Text: "stop writing, just summarise"})
	}, 2*time.Hour)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	msgs := h.conversation(t)
	require.Equal(t, conversation.ReasonRan, byID(msgs, "r").Reason)
	require.Equal(t, conversation.ReasonInterrupted, byID(msgs, "w").Reason)
	require.Len(t, h.requests, 2)
	for _, m := range h.requests[1].Messages {
		t.Logf("%s: %s", m.Role, m.Content)
	}
	last := h.requests[1].Messages[len(h.requests[1].Messages)-1]
	require.Equal(t, "stop writing, just summarise", last.Content)
}
