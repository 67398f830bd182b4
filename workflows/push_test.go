package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/tools"
)

// TestPushAfterCloseWhenTheWorkerPublishes: a worker that publishes says
// so in the close's result (push_due); the session then asks the same
// worker to push, with its final text and the control files left out,
// and the pull request's URL is in the result and the status query. A
// worker that does not publish gets no push command at all.
func TestPushAfterCloseWhenTheWorkerPublishes(t *testing.T) {
	t.Parallel()
	for _, due := range []bool{true, false} {
		h := newHarness(t, []activities.ModelResponse{
			toolReply(call("w1", "write", `{"path":"a","content":"x"}`)),
			textReply("Changed a\n\nBecause."),
		}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
			return tools.Result{Content: "ok"}, nil
		})
		h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{Commit: "c0ffee", LeftOut: []string{"AGENTS.md"}, PushDue: due}, nil)
		var mu sync.Mutex
		var pushed []activities.PushRequest
		h.env.OnActivity(a.PushBranch, mock.Anything, mock.Anything).Return(
			func(_ context.Context, r activities.PushRequest) (activities.PushResult, error) {
				mu.Lock()
				pushed = append(pushed, r)
				mu.Unlock()
				return activities.PushResult{URL: "https://forge.test/acme/app/pull/7", Number: 7, Commit: "c0ffee"}, nil
			}).Maybe()
		queues := map[string]string{}
		h.env.SetOnActivityStartedListener(func(i *activity.Info, _ context.Context, _ converter.EncodedValues) {
			mu.Lock()
			queues[i.ActivityType.Name] = i.TaskQueue
			mu.Unlock()
		})
		h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase})
		require.NoError(t, h.env.GetWorkflowError())
		var r SessionResult
		require.NoError(t, h.env.GetWorkflowResult(&r))
		v, err := h.env.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		var st Status
		require.NoError(t, v.Get(&st))
		if !due {
			require.Empty(t, pushed, "no push command without a push remote")
			require.Empty(t, r.PullRequest)
			require.Empty(t, st.PullRequest)
			continue
		}
		require.Len(t, pushed, 1)
		require.Equal(t, testCheckoutQueue, queues["PushBranch"], "the push runs on the worker holding the branch")
		require.Equal(t, "Changed a\n\nBecause.", pushed[0].Summary)
		require.Equal(t, []string{"AGENTS.md"}, pushed[0].LeftOut)
		require.Equal(t, "longrun/s1", pushed[0].Checkout.Branch)
		require.Equal(t, "https://forge.test/acme/app/pull/7", r.PullRequest)
		require.Equal(t, "https://forge.test/acme/app/pull/7", st.PullRequest)
		require.Empty(t, st.PushError)
		require.Contains(t, currentDetails(t, h), "**pull request:** [https://forge.test/acme/app/pull/7](https://forge.test/acme/app/pull/7)")
	}
}

// TestPushRefusedIsInTheResultNotAFailure: the forge refusing the push
// leaves the session completed, with the reason in push_error.
func TestPushRefusedIsInTheResultNotAFailure(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w1", "write", `{"path":"a","content":"x"}`)),
		textReply("done"),
	}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
		return tools.Result{Content: "ok"}, nil
	})
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{Commit: "c0ffee", PushDue: true}, nil)
	calls := 0
	h.env.OnActivity(a.PushBranch, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.PushRequest) (activities.PushResult, error) {
			calls++
			return activities.PushResult{}, temporal.NewNonRetryableApplicationError("the forge refused: 401 Bad credentials", activities.ErrTypePushRefused, nil)
		})
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, ResultCompleted, r.Status)
	require.Equal(t, 1, calls, "a refusal is not retried")
	require.Contains(t, r.PushError, "Bad credentials")
	require.Empty(t, r.PullRequest)
	v, err := h.env.QueryWorkflow(QueryStatus)
	require.NoError(t, err)
	var st Status
	require.NoError(t, v.Get(&st))
	require.Equal(t, r.PushError, st.PushError)
	require.Contains(t, currentDetails(t, h), "**push error:** ")
	require.Contains(t, currentDetails(t, h), "Bad credentials")
}

// TestPublishWhenWaitingPushesAtEachAnswer: a session started with
// publish_when_waiting (as `longrun serve` starts one) asks the worker
// holding its checkout to commit and publish each time the model is done
// and it waits; the person's next message sends it back to work, and its
// next answer is published again; its end publishes as always. Without
// the flag, waiting publishes nothing.
func TestPublishWhenWaitingPushesAtEachAnswer(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{true, false} {
		h := newHarness(t, []activities.ModelResponse{
			toolReply(call("w1", "write", `{"path":"a","content":"x"}`)),
			textReply("Changed a\n\nFirst."),
			toolReply(call("w2", "write", `{"path":"a","content":"y"}`)),
			textReply("Changed a again\n\nSecond."),
		}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
			return tools.Result{Content: "ok"}, nil
		})
		h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{Commit: "c0ffee", PushDue: true}, nil)
		var mu sync.Mutex
		var pushed []activities.PushRequest
		h.env.OnActivity(a.PushBranch, mock.Anything, mock.Anything).Return(
			func(_ context.Context, r activities.PushRequest) (activities.PushResult, error) {
				mu.Lock()
				pushed = append(pushed, r)
				mu.Unlock()
				return activities.PushResult{URL: "https://forge.test/acme/app/pull/7", Number: 7, Commit: "c0ffee"}, nil
			}).Maybe()
		h.env.RegisterDelayedCallback(func() {
			h.env.SignalWorkflow(SignalUserMessage, UserMessage{Text: "Review comment: say y"})
		}, 10*time.Minute)
		h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase,
			IdleTimeout: Duration(time.Hour), PublishWhenWaiting: on})
		require.NoError(t, h.env.GetWorkflowError())
		var r SessionResult
		require.NoError(t, h.env.GetWorkflowResult(&r))
		require.Equal(t, "Changed a again\n\nSecond.", r.FinalText)
		if !on {
			require.Len(t, pushed, 1, "the end's push only")
			require.False(t, pushed[0].Open)
			continue
		}
		require.Len(t, pushed, 3, "two answers and the end")
		require.True(t, pushed[0].Open)
		require.Equal(t, "Changed a\n\nFirst.", pushed[0].Summary)
		require.Contains(t, pushed[0].Message, "Changed a")
		require.True(t, pushed[1].Open)
		require.Equal(t, "Changed a again\n\nSecond.", pushed[1].Summary)
		require.False(t, pushed[2].Open, "the end pushes the closed branch")
		require.Equal(t, "https://forge.test/acme/app/pull/7", r.PullRequest)
	}
}

// TestPushCarriesWhatAReviewerNeeds: the push request holds the session's
// review record, from its state: the command with the exit code its
// result ends with and who approved it when, the call a person denied
// with the feedback, and the plan's step not done.
func TestPushCarriesWhatAReviewerNeeds(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("p", "todo", `{"todos":[{"content":"tests","status":"completed"},{"content":"docs","status":"pending"}]}`)),
		toolReply(call("s", "shell", `{"command":"go test ./..."}`), call("w", "write", `{"path":"a","content":"x"}`)),
		textReply("Tested\n\nDone."),
	}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
		return tools.Result{Content: "ok\n[exit code 0, 0.1s]"}, nil
	})
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{Commit: "c0ffee", PushDue: true}, nil)
	var pushed []activities.PushRequest
	h.env.OnActivity(a.PushBranch, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.PushRequest) (activities.PushResult, error) {
			pushed = append(pushed, r)
			return activities.PushResult{URL: "https://forge.test/acme/app/pull/7", Number: 7, Commit: "c0ffee"}, nil
		})
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "s", Decision: DecisionApprove, Author: "alice"})
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: DecisionDeny, Feedback: "not now", Author: "bob"})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Base: testCheckoutBase})
	require.NoError(t, h.env.GetWorkflowError())
	require.Len(t, pushed, 1)
	rev := pushed[0].Review
	require.NotNil(t, rev)
	require.Len(t, rev.Commands, 1, "%+v", rev)
	require.Equal(t, "go test ./...", rev.Commands[0].Summary)
	require.NotNil(t, rev.Commands[0].Exit)
	require.Equal(t, 0, *rev.Commands[0].Exit)
	require.Len(t, rev.Approved, 1, "%+v", rev)
	require.Equal(t, "c2", rev.Approved[0].ID)
	require.Equal(t, "alice", rev.Approved[0].Author)
	require.Equal(t, "person", rev.Approved[0].By)
	require.False(t, rev.Approved[0].At.IsZero())
	require.Len(t, rev.Undone, 1, "%+v", rev)
	require.Equal(t, "c3", rev.Undone[0].ID)
	require.Equal(t, "denied", rev.Undone[0].Outcome)
	require.Equal(t, "bob", rev.Undone[0].Author)
	require.Equal(t, "not now", rev.Undone[0].Text)
	require.Equal(t, []string{"docs (pending)"}, rev.Plan)
}
