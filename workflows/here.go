package workflows

import (
	"errors"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
)

// Local where the checkout is. A read and the checkpoint of an isolated
// session must run on the worker holding its checkout. When that worker
// also runs the session's workflow task (one worker, or sticky execution
// there: the common case), they run as local activities inside the task,
// one round trip fewer each; when another worker runs the task, the
// local activity answers activities.ErrTypeNotHere and the call goes to
// the checkout's queue as an activity, as it always did. The workflow
// never asks which worker it runs on (host, clock and environment are
// not for workflow code): it learns it from that recorded answer, so a
// replay takes the same way.

// localRetryTurns is how many turns an isolated session sends its reads
// and checkpoints straight to the checkout's queue after a local call
// found the checkout elsewhere, before it tries locally again: a
// workflow task that moved to another worker tends to stay there
// (sticky), and each try costs a marker in the history, but it may move
// back (that worker restarted), which nothing in the history says.
const localRetryTurns = 8

// localMiss is where and when a local call last found the checkout on
// another worker.
type localMiss struct {
	queue string // the checkout's queue then
	turn  int
}

// localHere reports whether a call that may run locally (a read-only
// tool that says so, or the checkpoint) is tried as a local activity:
// with local_reads, in place always, and in a checkout unless a local
// call found it on another worker in the last localRetryTurns turns,
// while it was pinned to the same queue (a restore elsewhere moves it).
func (s *driver) localHere() bool {
	if !s.in.localReads() {
		return false
	}
	if !s.isolated() {
		return true
	}
	m := s.missed
	return m.queue != s.Checkout.Queue || s.Turn >= m.turn+localRetryTurns
}

// runHere runs fn with the argument arg makes, locally or not as local
// says. In a checkout a local try carries the checkout's queue (arg's
// parameter), so a worker that does not hold the checkout answers
// ErrTypeNotHere; the call then runs as an activity with actx's options,
// which pin it to that queue.
func (s *driver) runHere(ctx, actx workflow.Context, local bool, fn any, arg func(queue string) any, out any) error {
	if !local || !s.isolated() {
		return schedule(actx, local, fn, arg("")).Get(ctx, out)
	}
	queue := s.Checkout.Queue
	err := schedule(actx, true, fn, arg(queue)).Get(ctx, out)
	if !notHere(err) {
		return err
	}
	if s.missed.queue != queue {
		s.logger(ctx).Info("the checkout is on another worker than the workflow task: its calls go to its queue", "queue", queue)
	}
	s.missed = localMiss{queue: queue, turn: s.Turn}
	return schedule(actx, false, fn, arg("")).Get(ctx, out)
}

// notHere reports whether a local activity found the checkout on another
// worker.
func notHere(err error) bool {
	var appErr *temporal.ApplicationError
	return errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeNotHere
}
