package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/forge"
)

// ErrTypePushRefused, PushRequest and PushResult: see package contract.
const ErrTypePushRefused = contract.ErrTypePushRefused

type (
	PushRequest = contract.PushRequest
	PushResult  = contract.PushResult
)

// pushDue reports whether CloseCheckout should ask the session to
// publish what it closed: this worker publishes (a push remote is
// configured), the branch has a commit, and it is a repository's branch
// (a copy of a directory outside git has no remote to share history
// with).
func (a *Activities) pushDue(in checkout.Info, c checkout.Closed) bool {
	return a.cfg.Forge != nil && a.cfg.Forge.Enabled() && c.Commit != "" && !in.Copy
}

// PushBranch publishes a closed session's branch (forge.Publish) from
// the repository on this worker that holds it: the person's, where the
// close brought it, else the session's own checkout (restored here, or
// kept). It runs on the worker holding the checkout, as the close does,
// with that worker's credentials; running it again is safe (forge.Publish
// finds what an earlier attempt did).
func (a *Activities) PushBranch(ctx context.Context, req PushRequest) (PushResult, error) {
	// The workflow's heartbeat timeout retries a push whose worker died
	// within seconds, not at start-to-close.
	defer heartbeatEvery(ctx, ctx, HeartbeatEvery)()
	if a.cfg.Forge == nil || !a.cfg.Forge.Enabled() {
		return PushResult{}, temporal.NewNonRetryableApplicationError("this worker publishes no branches: start it with --push-remote (and a forge token) to push sessions' branches and open pull requests", ErrTypePushRefused, nil)
	}
	in := req.Checkout
	if req.Open {
		return a.pushOpen(ctx, req)
	}
	dir := in.Repo
	if dir == "" || !checkout.HasBranch(ctx, dir, in.Branch) {
		own, err := a.ownCheckout(in.Name)
		if err != nil || !checkout.HasBranch(ctx, own, in.Branch) {
			return PushResult{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("branch %s is not on this worker (neither in %s nor in the session's checkout): push it by hand where it is (longrun push)", in.Branch, in.Repo), ErrTypePushRefused, nil)
		}
		dir = own
	}
	return a.publish(ctx, *a.cfg.Forge, dir, req)
}

// pushOpen publishes the branch of a checkout still open (PushRequest.Open):
// what it holds is committed on its branch first, control files left out,
// as the close does; then the branch is pushed from the checkout, to the
// remote the person's repository names. A branch still at its base
// publishes nothing: no pull request for no change.
func (a *Activities) pushOpen(ctx context.Context, req PushRequest) (PushResult, error) {
	in := req.Checkout
	if in.Copy {
		return PushResult{}, temporal.NewNonRetryableApplicationError("a copy of a directory outside git shares no history with a remote: nothing to push", ErrTypePushRefused, nil)
	}
	dir, err := a.ownCheckout(in.Name)
	if err != nil || !checkout.HasBranch(ctx, dir, in.Branch) {
		return PushResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the checkout of branch %s is not on this worker", in.Branch), ErrTypePushRefused, nil)
	}
	in.Dir = dir
	c, err := checkout.CommitOpen(ctx, in, req.Message)
	if err != nil {
		return PushResult{}, fmt.Errorf("commit %s before the push: %w", in.Branch, err)
	}
	if c.Commit == "" {
		return PushResult{}, nil
	}
	req.LeftOut = c.LeftOut
	cfg := *a.cfg.Forge
	origin := in.Repo
	if origin == "" || origin == in.Dir {
		origin = dir
	}
	cfg.Remote = checkout.RemoteURL(ctx, origin, cfg.Remote) // a name is the person's repository's remote
	return a.publish(ctx, cfg, dir, req)
}

// publish runs forge.Publish on the branch in dir: a refusal is not
// retried; the outcome is logged without the token.
func (a *Activities) publish(ctx context.Context, cfg forge.Config, dir string, req PushRequest) (PushResult, error) {
	in := req.Checkout
	ns := ""
	if activity.IsActivity(ctx) {
		ns = activity.GetInfo(ctx).Namespace
	}
	pub, err := forge.Publish(ctx, cfg, forge.Request{
		Dir: dir, Branch: in.Branch, BaseCommit: in.Base, Session: sessionID(ctx), Namespace: ns,
		Summary: req.Summary, LeftOut: req.LeftOut, Review: req.Review,
	})
	if errors.Is(err, forge.ErrRefused) {
		return PushResult(pub), temporal.NewNonRetryableApplicationError(err.Error(), ErrTypePushRefused, nil)
	}
	if err != nil {
		return PushResult(pub), fmt.Errorf("publish %s: %w", in.Branch, err)
	}
	if activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Info("published the session's branch", "branch", in.Branch, "remote", pub.Remote, "pull_request", pub.URL, "commit", pub.Commit, "created", pub.Created)
	}
	return PushResult(pub), nil
}
