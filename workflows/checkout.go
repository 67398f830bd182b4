package workflows

import (
	"time"

	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/session"
)

// QueryCheckout returns the session's own checkout (session.Checkout:
// repository, directory, branch, base, and the worker queue holding it),
// or null when the session runs in place. starter diff, apply and discard
// read it.
const QueryCheckout = "checkout"

// openCheckout gives a new session its own checkout, on whichever worker
// takes the activity; from then on the session is pinned to that worker's
// queue. A sub-agent works in its parent's checkout (SessionInput.Checkout)
// and a session started --in-place in the workspace itself; a continued
// run carries its checkout in its state.
func (s *driver) openCheckout(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryCheckout, func() (*session.Checkout, error) {
		return s.Checkout, nil
	}); err != nil {
		return err
	}
	switch {
	case s.in.Resume != nil:
		return nil
	case s.in.Checkout != nil:
		s.Checkout = s.in.Checkout
		return nil
	case s.in.InPlace:
		return nil
	}
	res, err := s.openCheckoutFor(ctx)
	if err != nil {
		return err
	}
	if res.Checkout == nil {
		s.logger(ctx).Warn("session runs in place", "why", res.Note)
		return nil
	}
	if res.Note != "" {
		s.logger(ctx).Warn("the session's copy left things out", "note", res.Note)
	}
	s.Checkout = &session.Checkout{Info: *res.Checkout, Queue: res.WorkerQueue}
	if res.Setup != "" {
		s.setupCheckout(ctx, res.Setup)
	}
	return nil
}

// isolated reports whether the session's calls run in a checkout of its
// own, on the worker holding it.
func (s *driver) isolated() bool { return s.Checkout.Isolated() }

// inCheckout points a tool request at the session's checkout.
func (s *driver) inCheckout(req *activities.ToolRequest) {
	if s.isolated() {
		req.Checkout, req.WorkDir = s.Checkout.Name, s.Checkout.Sub
	}
}

// checkoutWorkerWait is how long a tool call waits for the worker holding
// the session's checkout to pick it up before it fails (worker_lost for a
// call that changes things). Longer than jobWorkerWait: every call of an
// isolated session waits in that one worker's queue, and a busy worker
// that is alive must not look lost. SessionInput.WorkerLostAfter sets it
// per session (s.workerWait); past it the checkout is restored on another
// worker (checkpoint.go).
const checkoutWorkerWait = 5 * time.Minute

// pin sends a tool activity to the worker holding the checkout.
func (s *driver) pin(o *workflow.ActivityOptions) {
	if s.isolated() && o.TaskQueue == "" {
		o.TaskQueue, o.ScheduleToStartTimeout = s.Checkout.Queue, s.workerWait()
	}
}

// checkoutEnvironment puts the session's checkout, not the workspace it
// was made from, in the system prompt's environment: the directory its
// tools and commands run in, and its branch.
func (s *driver) checkoutEnvironment(workDir, gitRoot, branch, head *string) {
	if !s.isolated() {
		return
	}
	*gitRoot, *branch, *head = s.Checkout.Dir, s.Checkout.Branch, ""
	*workDir = s.Checkout.Dir
	if s.Checkout.Sub != "" {
		*workDir = s.Checkout.Dir + "/" + s.Checkout.Sub
	}
}

// closeCheckout ends the session's own checkout: its changes become a
// commit on its branch, with the first line of the session's final text
// as the message, and the checkout is removed; the branch stays until the
// person discards it. A sub-agent leaves its parent's checkout alone. A
// failure is logged, not fatal: the session is ending either way, and the
// checkout is then still there for starter diff.
func (s *driver) closeCheckout(ctx workflow.Context, res *SessionResult) {
	if !s.isolated() || s.in.Checkout != nil {
		s.childChanges(res)
		return
	}
	closed, err := s.closeCheckoutCall(ctx)
	if nobodyPolls(err) {
		closed, err = s.closeOnAnother(ctx)
	}
	if err != nil {
		s.logger(ctx).Warn("could not commit the session's checkout", "checkout", s.Checkout.Dir, "error", err)
	}
	if len(closed.LeftOut) > 0 {
		s.logger(ctx).Warn("control files the session changed were left out of its branch", "files", closed.LeftOut)
	}
	if closed.Changes != nil {
		s.Changes = closed.Changes
	}
	if closed.Bundle != "" {
		s.Checkout.BranchBundle = closed.Bundle
	}
	if res != nil {
		res.Branch, res.Commit = s.Checkout.Branch, closed.Commit
		res.Changes, res.LeftOut = s.Changes, closed.LeftOut
	}
	if err == nil {
		s.publishBranch(ctx, closed, res)
	}
}
