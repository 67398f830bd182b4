package workflows

import (
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/toolspec"
)

// Checkpoints and a lost worker. After every batch whose calls may have
// changed files (what the tools declare, session.MayChangeFiles), the
// session records its checkout as a checkpoint commit on the worker
// holding it, which pushes it to the checkpoint remote; the history holds
// its id. When nobody polls that worker's queue for WorkerLostAfter, the
// worker is lost: its calls in flight were answered worker_lost, and the
// checkout is restored from the last checkpoint on any other worker, the
// session pinned there, and the model told. When it cannot be restored
// the session says workspace_lost and waits for a person.

// workerWait is how long a call waits for the worker holding the
// checkout before that worker counts as lost.
func (s *driver) workerWait() time.Duration {
	if d := time.Duration(s.in.WorkerLostAfter); d > 0 {
		return d
	}
	return checkoutWorkerWait
}

// noteCall records what a finished call means for the next checkpoint:
// due when it may have changed files, and a call its worker never
// answered (a timeout) is one the worker may have taken with it.
func (s *driver) noteCall(cs callRef, res toolspec.Result, err error) {
	if !s.isolated() {
		return
	}
	var timeoutErr *temporal.TimeoutError
	timedOut := errors.As(err, &timeoutErr)
	if timedOut {
		s.Checkout.Lost = append(s.Checkout.Lost, cs.call().Name+" "+cs.call().ID)
	}
	if session.MayChangeFiles(cs.spec, cs.readOnlySandbox(), timedOut) {
		s.Checkout.NoteChange(cs.spec.EditsFiles && err == nil && !res.IsError, res.Files)
	}
}

// checkpoint records the checkout after a batch that may have changed
// it. A sub-agent leaves it to its parent, whose task call changed files
// too. A checkpoint that fails otherwise is logged and tried again after
// the next batch: the session goes on either way.
func (s *driver) checkpoint(ctx workflow.Context) outcome {
	if !s.isolated() || s.in.Checkout != nil || !s.Checkout.Due {
		return proceed
	}
	res, err := s.checkpointCall(ctx)
	switch {
	case err == nil:
		s.Checkout.CheckpointBundled(res.Commit != s.Checkout.Checkpoint, res.Bundle, res.Note)
		s.Checkout.Checkpointed(res.Commit)
		s.recordChanges(ctx, res.Changes)
		if res.Remote != "" {
			s.Checkout.Remote = res.Remote
		}
		s.logger(ctx).Info("checkpoint", "commit", res.Commit, "remote", s.Checkout.Remote, "bundle", s.Checkout.Bundle)
		if res.Note != "" {
			s.logger(ctx).Warn("checkpoint not stored", "note", res.Note)
		}
	case nobodyPolls(err):
		return s.workerLost(ctx)
	case ctx.Err() == nil:
		s.logger(ctx).Warn("checkpoint failed", "checkout", s.Checkout.Dir, "error", err)
	}
	return proceed
}

// workerLost restores the lost worker's checkout on another worker and
// tells the model; when it cannot, it reports workspace_lost and waits
// for a person, whose next message tries again.
func (s *driver) workerLost(ctx workflow.Context) outcome {
	lostQueue := s.Checkout.Queue
	s.logger(ctx).Warn("the worker holding the checkout is lost", "queue", lostQueue, "checkpoint", s.Checkout.Checkpoint)
	for {
		res, err := s.restoreCheckoutCall(ctx)
		if err == nil && res.Checkout != nil {
			s.restored(res)
			return proceed
		}
		if ctx.Err() != nil {
			return end(SessionResult{}, ctx.Err())
		}
		why := "no worker could restore it"
		if err != nil {
			why = rootMessage(err)
		}
		if s.Checkout.BundleNote != "" {
			why += " (" + s.Checkout.BundleNote + ")"
		}
		s.LastError, s.LastErrorType = session.WorkspaceLostText(lostQueue, why), session.ReasonWorkspaceLost
		s.logger(ctx).Error("workspace lost", "error", s.LastError)
		if ok, werr := s.waitForInput(ctx); werr != nil || !ok {
			return end(s.result(ResultFailed, s.LastError), werr)
		}
	}
}

// restored pins the session to the worker that restored its checkout and
// tells the model what happened.
func (s *driver) restored(res activities.CheckoutResult) {
	in := res.Checkout
	old := s.Checkout
	s.Checkout = old.MovedTo(*in, res.WorkerQueue)
	s.Messages = append(s.Messages, conversation.Message{Role: conversation.RoleUser,
		Content: session.WorkerLostText(old.Lost, old.Checkpoint, in.Dir, in.Branch, res.Kept)})
	if s.LastErrorType == session.ReasonWorkspaceLost {
		s.LastError, s.LastErrorType = "", "" // a person's message restored it
	}
}

// childChanges tells the parent, through a sub-agent's result, that the
// sub-agent's calls may have changed the checkout they share: the task
// tool declares itself read-only (its child's calls are decided by the
// child), so the parent would not know otherwise.
func (s *driver) childChanges(res *SessionResult) {
	if res != nil && s.in.Checkout != nil && s.Checkout.Due {
		res.CheckpointDue = true
	}
}

// afterChild takes a sub-agent's result in: its changes make a checkpoint
// due after the parent's batch.
func (s *driver) afterChild(res SessionResult) {
	if s.isolated() && res.CheckpointDue {
		s.Checkout.NoteChange(false, nil)
	}
}

// workerGone reports whether a call's error means the worker that was to
// run it is gone (worker_lost): a call that changes things and timed out,
// or, in an isolated session, any call nobody took or whose heartbeat
// stopped: it could run only on the worker holding the checkout.
func (s *driver) workerGone(cs callRef, err error) bool {
	var timeoutErr *temporal.TimeoutError
	if !errors.As(err, &timeoutErr) {
		return false
	}
	return !cs.spec.ReadOnly || (s.isolated() && timeoutErr.TimeoutType() != enumspb.TIMEOUT_TYPE_START_TO_CLOSE)
}

// nobodyPolls reports whether an activity failed because nobody took it
// from its queue in time: the worker that polls it is gone.
func nobodyPolls(err error) bool {
	var timeoutErr *temporal.TimeoutError
	return errors.As(err, &timeoutErr) && timeoutErr.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START
}

// closeOnAnother ends the session's checkout when the worker holding it
// was lost after the last checkpoint: the checkout is restored on another
// worker (the last checkpoint holds every batch's files) and committed
// there. The session is ending: the model is not told.
func (s *driver) closeOnAnother(ctx workflow.Context) (activities.CloseCheckoutResult, error) {
	s.logger(ctx).Warn("the worker holding the checkout is lost at the end", "queue", s.Checkout.Queue, "checkpoint", s.Checkout.Checkpoint)
	res, err := s.restoreCheckoutCall(ctx)
	if err != nil {
		return activities.CloseCheckoutResult{}, err
	}
	s.Checkout = s.Checkout.MovedTo(*res.Checkout, res.WorkerQueue)
	return s.closeCheckoutCall(ctx)
}
