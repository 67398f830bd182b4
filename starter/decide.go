package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/workflows"
)

// How long the CLI waits on a session that may have no worker. A query
// and the approve update are answered by a worker; the approval signal
// and history are not, so when no worker answers in this time the CLI
// checks history and falls back to the signal instead of failing.
const (
	// probeTimeout bounds the pending query approve asks first: a live
	// worker answers it in milliseconds.
	probeTimeout = 8 * time.Second
	// decisionWait bounds one approve update.
	decisionWait = 20 * time.Second
	// staleAfter is how old a task queue's newest poll may be for its
	// worker to still count as running: a live worker's long poll is
	// renewed about every minute, and the server lists a gone poller for
	// five more minutes.
	staleAfter = 90 * time.Second
)

// workerGone says why no worker can answer session's update, or "" when
// one may (pollers seen recently on the session's own task queue). The
// check needs no worker: describe and DescribeTaskQueue are the server's.
func (a *app) workerGone(ctx context.Context, c sessionClient, session string) (string, error) {
	desc, err := c.DescribeWorkflowExecution(ctx, session, "")
	if err != nil {
		return "", sessionError(err, "describe", session, a.cfg.Namespace)
	}
	if !isOpen(desc.GetWorkflowExecutionInfo().GetStatus()) {
		how := statusName(desc.GetWorkflowExecutionInfo().GetStatus().String())
		return "", fmt.Errorf("session %s already ended (%s): nothing to decide", session, how)
	}
	tq := desc.GetExecutionConfig().GetTaskQueue().GetName()
	if tq == "" {
		tq = a.cfg.TaskQueue
	}
	return noPoller(ctx, c, tq), nil // "" also when the server cannot tell: let the update try
}

// noWorker reports whether err means no worker answered a query or an
// update in time (as opposed to the session refusing it).
func noWorker(err error) bool {
	var fp *serviceerror.FailedPrecondition
	var dl *serviceerror.DeadlineExceeded
	var ut *client.WorkflowUpdateServiceTimeoutOrCanceledError
	return errors.As(err, &fp) || errors.As(err, &dl) || errors.As(err, &ut) || errors.Is(err, context.DeadlineExceeded)
}

// decisionOutcome is what became of one decision sent with the update.
type decisionOutcome int

const (
	// decided: the session answered the update.
	decided decisionOutcome = iota
	// decidedUnanswered: no answer came, but the session's history shows
	// it took the update (a lost reply, e.g. the server restarted).
	decidedUnanswered
	// notTaken: no answer came and history shows no such update: no
	// worker took it.
	notTaken
)

// sendDecision sends one decision with the approve update. The update,
// unlike the signal, is validated by the session: a call decided meanwhile
// is an error here, not a silently ignored signal. The update id is a
// business key, so a retried command is answered with the first outcome:
// ref is the session's id of the call the sender read ("c17"), unique in
// the session, so a decision on another call is never taken for a retry
// of this one (a model that reuses its call ids cannot make a second
// "deny" answer with the first one's outcome). When no answer comes in
// decisionWait, history says whether the session took it, so a lost
// reply is never reported as a failure.
func (a *app) sendDecision(ctx context.Context, c sessionClient, session, ref string, ap workflows.Approval) (decisionOutcome, error) {
	id := decisionUpdateID(ref, ap)
	uctx, cancel := context.WithTimeout(ctx, decisionWait)
	h, err := c.UpdateWorkflow(uctx, client.UpdateWorkflowOptions{
		WorkflowID:   session,
		UpdateID:     id,
		UpdateName:   workflows.UpdateApprove,
		Args:         []any{ap},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err == nil {
		var outcome workflows.ApprovalOutcome
		err = h.Get(uctx, &outcome)
	}
	cancel()
	if err == nil {
		return decided, nil
	}
	if ctx.Err() != nil {
		return notTaken, ctx.Err()
	}
	var refused *temporal.ApplicationError
	if errors.As(err, &refused) {
		// Message, not Error: the session's words without the SDK's
		// "(type: *errors.errorString, retryable: true)".
		return notTaken, fmt.Errorf("session %s refused the %s of %s: %s", session, ap.Decision, ref, refused.Message())
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return notTaken, sessionError(err, "update "+workflows.UpdateApprove, session, a.cfg.Namespace)
	}
	// No answer (a timeout, the server restarting, no worker): before
	// saying anything, ask history whether the session took it.
	if !a.ui.live && !a.cfg.JSON {
		fmt.Fprintf(a.stderr, "no reply to the %s of %s (%v); checking the session's history…\n", ap.Decision, showID(ref), shortErr(err))
	} else if !a.cfg.JSON {
		fmt.Fprintf(a.stdout, "no reply to the %s of %s; checking the session's history…\n", ap.Decision, showID(ref))
	}
	taken, failure, herr := a.updateInHistory(ctx, c, session, id)
	switch {
	case herr != nil:
		return notTaken, fmt.Errorf("%s of %s: no reply (%v), and history could not be read to check: %w", ap.Decision, ref, shortErr(err), herr)
	case taken && failure != "":
		return notTaken, fmt.Errorf("session %s refused the %s of %s: %s", session, ap.Decision, ref, failure)
	case taken:
		return decidedUnanswered, nil
	}
	return notTaken, nil
}

// decisionUpdateID is the approve update's id for a decision on the call
// the sender read as ref: "approve:c17". A decision that names the call
// by the model's id is another update ("approve:c17:call_id"): the
// session may refuse that one and take the same decision by its id.
func decisionUpdateID(ref string, ap workflows.Approval) string {
	id := ap.Decision + ":" + ref
	if ap.ID == "" {
		id += ":call_id"
	}
	return id
}

// shortErr is err's message without the SDK's wrapping of a timeout.
func shortErr(err error) string {
	var ut *client.WorkflowUpdateServiceTimeoutOrCanceledError
	if errors.As(err, &ut) && errors.Unwrap(ut) != nil {
		return errors.Unwrap(ut).Error()
	}
	return err.Error()
}

// updateInHistory reports whether the session accepted the update with
// this id, and the failure it completed with, if any. History is the
// server's: it needs no worker.
func (a *app) updateInHistory(ctx context.Context, c sessionClient, session, updateID string) (accepted bool, failure string, err error) {
	hctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	it := c.GetWorkflowHistory(hctx, session, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return false, "", err
		}
		if at := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes(); at != nil && at.GetAcceptedRequest().GetMeta().GetUpdateId() == updateID {
			accepted = true
		}
		if at := ev.GetWorkflowExecutionUpdateCompletedEventAttributes(); at != nil && at.GetMeta().GetUpdateId() == updateID {
			if f := at.GetOutcome().GetFailure(); f != nil {
				failure = f.GetMessage()
			}
		}
	}
	return accepted, failure, nil
}

// signalDecision sends the decision as the durable approval signal,
// which the server keeps until a worker runs the session again, and
// says so with the temporal CLI command that does the same.
func (a *app) signalDecision(ctx context.Context, c sessionClient, session string, ap workflows.Approval) error {
	if err := c.SignalWorkflow(ctx, session, "", workflows.SignalApproval, ap); err != nil {
		return sessionError(err, "signal "+workflows.SignalApproval, session, a.cfg.Namespace)
	}
	if !a.cfg.JSON {
		what := ap.ID
		if what == "" {
			what = ap.CallID
		}
		if ap.All {
			what = "every waiting call"
		}
		fmt.Fprintf(a.stdout, "sent the %s of %s as the durable %q signal; the session applies it when a worker runs it again\n  (the same with the temporal CLI: %s)\n",
			ap.Decision, what, workflows.SignalApproval, signalCommand(a.cfg, session, ap))
	}
	return nil
}

// fallbackNote tells, once, why the durable signal is used and where a
// refusal would show: the signal has no answer.
func (a *app) fallbackNote(session, why string) {
	if a.cfg.JSON {
		return
	}
	fmt.Fprintf(a.stdout, "%s: the approve update needs a running worker, so the decision goes as the approval signal instead.\n"+
		"A call id that is not waiting then shows under \"rejected signals\" in: %s status %s\n",
		why, progName, shellQuote(session))
}
