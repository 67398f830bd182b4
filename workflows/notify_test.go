package workflows

import (
	"github.com/longrun/longrun/callref"

	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/notify"
)

// notified records the Notify activity's events; fail makes every post
// fail after its retries.
type notified struct {
	mu     sync.Mutex
	events []notify.Event
}

func (n *notified) mock(h *harness, fail bool) {
	h.env.OnActivity(a.Notify, mock.Anything, mock.Anything).Return(
		func(_ context.Context, ev notify.Event) (notify.Result, error) {
			n.mu.Lock()
			n.events = append(n.events, ev)
			n.mu.Unlock()
			if fail {
				return notify.Result{}, temporal.NewNonRetryableApplicationError("sink refused", activities.ErrTypeNotifyRejected, nil)
			}
			return notify.Result{Delivered: []string{"webhook 1"}}, nil
		})
}

func (n *notified) kinds() []string {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []string
	for _, ev := range n.events {
		out = append(out, ev.Event)
	}
	return out
}

func TestSignalNameMatchesNotify(t *testing.T) {
	t.Parallel()
	require.Equal(t, SignalApproval, notify.SignalApproval)
	require.Equal(t, "NotifyRejected", activities.ErrTypeNotifyRejected)
}

// Two calls waiting at once are one notification listing both; the
// session then completes, notified before it returns.
func TestNotifyOncePerWaitThenCompleted(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, activities.WorkspaceConfig{Notify: true}, []activities.ModelResponse{
		toolReply(call("w", "write", `{"path":"b","content":"x"}`), call("s", "shell", `{"command":"touch x"}`)),
		toolReply(call("w2", "write", `{"path":"c","content":"y"}`)),
		textReply("done"),
	}, nil)
	var n notified
	n.mock(h, false)
	h.env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"waiting"}, n.kinds(), "one notification for the wait, sent while it waits")
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: "approve"})
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"waiting"}, n.kinds(), "still the same wait: not notified again")
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "s", Decision: "deny", Feedback: "no"})
	}, 2*time.Minute)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "w2", Decision: "approve"})
	}, 3*time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "\n  go and fix it  \nin detail"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, []string{"waiting", "waiting", "completed"}, n.kinds())
	first := n.events[0]
	require.Equal(t, "default-test-workflow-id", first.Session)
	for _, ev := range n.events {
		// Every notification says what was asked and where (issue 29).
		require.Equal(t, "go and fix it", ev.Task, ev.Event)
		require.Equal(t, ".", ev.Workspace, "in place, at the workspace's top")
		require.Empty(t, ev.Repo)
	}
	require.Equal(t, []notify.Call{
		{CallID: "w", ID: "c1", Digest: callref.Digest("write", `{"path":"b","content":"x"}`), Tool: "write", Arguments: `{"path":"b","content":"x"}`, Reason: first.Pending[0].Reason},
		{CallID: "s", ID: "c2", Digest: callref.Digest("shell", `{"command":"touch x"}`), Tool: "shell", Arguments: `{"command":"touch x"}`, Reason: first.Pending[1].Reason},
	}, first.Pending)
	require.NotEmpty(t, first.Pending[0].Reason)
	runID := "default-test-run-id"
	require.Equal(t, "default-test-workflow-id/"+runID+"/waiting/1.1", first.Key)
	require.Equal(t, "default-test-workflow-id/"+runID+"/waiting/2.1", n.events[1].Key)
	done := n.events[2]
	require.Equal(t, "default-test-workflow-id/"+runID+"/completed/3.1", done.Key)
	require.Equal(t, ResultCompleted, done.Status)
	require.Equal(t, "done", done.FinalText)
	require.Empty(t, done.Pending)
}

func TestNotifyBudgetAndFailed(t *testing.T) {
	t.Parallel()
	t.Run("budget", func(t *testing.T) {
		t.Parallel()
		h := newHarnessWith(t, activities.WorkspaceConfig{Notify: true}, []activities.ModelResponse{
			toolReply(call("r1", "read", `{"path":"a"}`)), toolReply(call("r2", "read", `{"path":"b"}`)),
		}, nil)
		var n notified
		n.mock(h, false)
		h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", TokenBudget: 25})
		require.NoError(t, h.env.GetWorkflowError())
		require.Equal(t, []string{"budget"}, n.kinds())
		require.Equal(t, ResultBudget, n.events[0].Status)
		require.Contains(t, n.events[0].Error, "token_budget is 25")
	})
	t.Run("failed result", func(t *testing.T) {
		t.Parallel()
		h := newHarnessWith(t, activities.WorkspaceConfig{Notify: true}, nil, nil)
		var n notified
		n.mock(h, false)
		h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
		require.NoError(t, h.env.GetWorkflowError())
		require.Equal(t, []string{"failed"}, n.kinds())
		require.Contains(t, n.events[0].Error, "script exhausted")
	})
	t.Run("failed error, posted before the error is returned", func(t *testing.T) {
		t.Parallel()
		h := newHarnessWith(t, activities.WorkspaceConfig{Notify: true, NoSandbox: true}, nil, nil)
		var n notified
		n.mock(h, false)
		h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto"})
		var appErr *temporal.ApplicationError
		require.True(t, errors.As(h.env.GetWorkflowError(), &appErr))
		require.Equal(t, ErrTypeSandboxRequired, appErr.Type())
		require.Equal(t, []string{"failed"}, n.kinds())
		require.Contains(t, n.events[0].Error, "profile auto needs the shell sandbox")
	})
}

// A post that fails is logged: the session goes on and ends as it would.
func TestNotifyFailureNeverFailsTheSession(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, activities.WorkspaceConfig{Notify: true}, []activities.ModelResponse{
		toolReply(call("w", "write", `{"path":"b","content":"x"}`)),
		textReply("done"),
	}, nil)
	var n notified
	n.mock(h, true)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: "approve"})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, ResultCompleted, r.Status)
	require.Equal(t, []string{"waiting", "completed"}, n.kinds())
}

// Without sinks (the worker said none), no notification is scheduled.
func TestNoSinksNoNotifyActivity(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w", "write", `{"path":"b","content":"x"}`)),
		textReply("done"),
	}, nil)
	var n notified
	n.mock(h, false)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: "approve"})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Empty(t, n.kinds())
}

// A call waiting when the session continues as new is notified again by
// the next run under the same key, so the sinks' records drop it: one
// notification for the wait, whichever run posts it.
func TestNotifyWaitCarriedAcrossContinueAsNewKeepsItsKey(t *testing.T) {
	t.Parallel()
	l := &longHarness{t: t, store: &memTranscript{heads: map[string][]conversation.Message{}}, wc: activities.WorkspaceConfig{Notify: true}}
	l.reply = func(turn int, _ activities.ModelRequest) activities.ModelResponse {
		switch {
		case turn == 10:
			return toolReply(readCall(turn), conversation.ToolCall{ID: "w10", Name: "write", Arguments: `{"path":"out","content":"x"}`})
		case turn < 12:
			return toolReply(readCall(turn))
		}
		return textReply("all done")
	}
	var n notified
	l.onRun = func(run int, env *testsuite.TestWorkflowEnvironment) {
		env.OnActivity(a.Notify, mock.Anything, mock.Anything).Return(
			func(_ context.Context, ev notify.Event) (notify.Result, error) {
				n.mu.Lock()
				n.events = append(n.events, ev)
				n.mu.Unlock()
				return notify.Result{}, nil
			})
		if run == 2 {
			env.RegisterDelayedCallback(func() {
				env.SignalWorkflow(SignalApproval, Approval{CallID: "w10", Decision: DecisionApprove})
			}, time.Minute)
		}
	}
	l.run(SessionInput{Prompt: "go", ContinueAsNewTurns: 5})
	require.Equal(t, ResultCompleted, l.result.Status)
	require.GreaterOrEqual(t, l.runs, 2)
	keys := map[string]bool{}
	for _, ev := range n.events {
		if ev.Event == notify.EventWaiting {
			require.Equal(t, "w10", ev.Pending[0].CallID)
			keys[ev.Key] = true
		}
	}
	require.Equal(t, map[string]bool{"default-test-workflow-id/default-test-run-id/waiting/10.1": true}, keys)
	require.Equal(t, notify.EventCompleted, n.events[len(n.events)-1].Event)
}
