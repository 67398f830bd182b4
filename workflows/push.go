package workflows

import (
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
	pushed, err := s.pushCall(ctx, activities.PushRequest{Checkout: s.Checkout.Info, Summary: s.FinalText, LeftOut: closed.LeftOut})
	if err != nil {
		s.logger(ctx).Warn("could not publish the session's branch", "branch", s.Checkout.Branch, "error", err)
		res.PushError = rootMessage(err)
		return
	}
	s.pullRequest = pushed.URL
	res.PullRequest = pushed.URL
}
