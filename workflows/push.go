package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
)

// publishBranch asks the worker holding the session's branch to push it
// and open or update its pull request, when that worker said it
// publishes (CloseCheckoutResult.PushDue: a push remote is configured
// there, and the branch has a commit). A session on a worker without a
// push remote issues no command here. The history keeps the outcome only
// (URL, number, commit); the credentials stay on the worker. A failure is
// logged and put in the result, not fatal: the branch is there either
// way, and `longrun push` publishes it later.
func (s *driver) publishBranch(ctx workflow.Context, closed activities.CloseCheckoutResult, res *SessionResult) {
	if !closed.PushDue || res == nil {
		return
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              s.Checkout.Queue,
		ScheduleToStartTimeout: s.workerWait(),
		StartToCloseTimeout:    5 * time.Minute, // a first push sends the base's objects
		RetryPolicy: &temporal.RetryPolicy{
			MaximumAttempts:        5,
			NonRetryableErrorTypes: []string{activities.ErrTypePushRefused},
		},
		Summary: "push " + s.Checkout.Branch + " and open its pull request",
	})
	req := activities.PushRequest{Checkout: s.Checkout.Info, Summary: s.FinalText, LeftOut: closed.LeftOut}
	var pushed activities.PushResult
	if err := workflow.ExecuteActivity(actx, activities.PushBranch, req).Get(ctx, &pushed); err != nil {
		s.logger(ctx).Warn("could not publish the session's branch", "branch", s.Checkout.Branch, "error", err)
		res.PushError = rootMessage(err)
		return
	}
	s.pullRequest = pushed.URL
	res.PullRequest = pushed.URL
}
