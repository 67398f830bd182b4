package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/untrusted"
)

// publishWaiting publishes the session's branch while it waits for the
// person's next message (SessionInput.PublishWhenWaiting): the worker
// holding the checkout commits what it holds on the branch and pushes it,
// and the pull request is opened or updated, as at the end. A session
// without the input's flag issues no command here. A failure is logged:
// the session waits either way, and its end pushes again.
func (s *driver) publishWaiting(ctx workflow.Context) {
	if !s.in.PublishWhenWaiting || s.in.IdleTimeout == 0 || !s.isolated() || s.in.Checkout != nil || s.Checkout.Copy || len(s.Inbox) > 0 {
		return
	}
	pushed, err := s.pushCall(ctx, activities.PushRequest{
		Checkout: s.Checkout.Info, Summary: s.FinalText, Open: true,
		Message: session.CommitMessage(s.FinalText, s.workflowID), Review: s.prReview(),
	})
	if err != nil {
		s.logger(ctx).Warn("could not publish the session's branch while it waits", "branch", s.Checkout.Branch, "error", err)
		s.PushError = rootMessage(err)
		return
	}
	s.PushError = ""
	if pushed.URL != "" {
		s.PullRequest = pushed.URL
	}
}

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
	pushed, err := s.pushCall(ctx, activities.PushRequest{Checkout: s.Checkout.Info, Summary: s.FinalText, LeftOut: closed.LeftOut, Review: s.prReview()})
	if err != nil {
		s.logger(ctx).Warn("could not publish the session's branch", "branch", s.Checkout.Branch, "error", err)
		res.PushError = rootMessage(err)
		s.PushError = res.PushError
		return
	}
	s.PushError = ""
	s.PullRequest = pushed.URL
	res.PullRequest = pushed.URL
}

// pullRequestDetails is the Web UI's line for the session's pull
// request and the latest publish's failure, "" when it has neither. The
// URL is the forge's answer: a link only when it is a web URL
// (untrusted.MarkdownLink), inert text otherwise.
func (s *driver) pullRequestDetails() string {
	var b strings.Builder
	if s.PullRequest != "" {
		fmt.Fprintf(&b, "\n**pull request:** %s\n", untrusted.MarkdownLink(s.PullRequest))
	}
	if s.PushError != "" {
		fmt.Fprintf(&b, "\n**push error:** %s\n", untrusted.MarkdownText(s.PushError))
	}
	return b.String()
}

// prReview is what the pull request's body shows a reviewer: the record
// the session kept of its calls (session.ObserveReview) and the steps of
// the model's plan it did not mark completed. nil when there is none of
// it, so a session without any sends the request it always sent.
func (s *driver) prReview() *record.Review {
	plan := session.UnfinishedPlan(s.Todos)
	if s.Review == nil && len(plan) == 0 {
		return nil
	}
	r := record.Review{}
	if s.Review != nil {
		r = *s.Review
	}
	r.Plan = plan
	return &r
}
