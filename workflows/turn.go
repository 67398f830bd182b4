package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/session"
)

// outcome is how a step of the session leaves it: on to the next turn, or
// ended with res and err (errSwitch: continue as new).
type outcome struct {
	done bool
	res  SessionResult
	err  error
}

var proceed = outcome{}

func end(res SessionResult, err error) outcome { return outcome{done: true, res: res, err: err} }

// runLoop is the session: set up, take up where the previous run left
// off (or wait for a first message), then one turn after another until a
// step ends it.
func (s *driver) runLoop(ctx workflow.Context) (SessionResult, error) {
	if err := s.openCheckout(ctx); err != nil {
		return SessionResult{}, err
	}
	if err := s.loadCatalog(ctx); err != nil {
		return SessionResult{}, err
	}
	if err := s.setupPolicy(ctx); err != nil {
		return SessionResult{}, err
	}
	o := s.begin(ctx)
	for !o.done {
		o = s.turn(ctx)
	}
	return o.res, o.err
}

// turn is one model turn: check the limits, call the model, record the
// reply, decide and run (or wait for) its calls and record their results;
// or, when the model is done, wait for the person.
func (s *driver) turn(ctx workflow.Context) outcome {
	if o := s.beforeTurn(ctx); o.done {
		return o
	}
	s.Turn++
	s.logger(ctx).Info("turn", "model", s.Model, "messages", len(s.Messages))
	turnCtx, cancelTurn := s.startTurn(ctx)
	s.emit(ctx, eventlog.Event{Kind: eventlog.KindTurnStarted})
	resp, err := s.callModel(turnCtx)
	if err != nil {
		s.emitTurnFailed(ctx, err)
		return s.modelFailed(ctx, err)
	}
	s.emitReply(ctx, resp.Message)
	s.cancelTurn = nil
	s.nameCalls(resp.Message.ToolCalls)
	s.appendReply(resp)
	if len(resp.Message.ToolCalls) == 0 {
		s.MarkTurn()
		return s.awaitNext(ctx)
	}
	s.cancelTurn = cancelTurn
	err = s.runBatch(turnCtx, resp.Message.ToolCalls)
	s.cancelTurn = nil
	cancelTurn()
	return s.afterBatch(ctx, err)
}

// startTurn gives the turn its own context, so an interrupt can stop it
// without ending the session.
func (s *driver) startTurn(ctx workflow.Context) (workflow.Context, workflow.CancelFunc) {
	turnCtx, cancelTurn := workflow.WithCancel(ctx)
	s.cancelTurn, s.interrupted = cancelTurn, false
	return turnCtx, cancelTurn
}

// beforeTurn ends the session at a limit, switches runs when it is time,
// and compacts a conversation about to outgrow the window.
func (s *driver) beforeTurn(ctx workflow.Context) outcome {
	switch stop, why := s.limits.CheckStop(s.Turn, s.Usage); stop {
	case session.StopMaxTurns:
		return end(s.result(ResultMaxTurns, why), nil)
	case session.StopBudget:
		return end(s.result(ResultBudget, why), nil)
	}
	if s.wantSwitch(ctx) || s.wantUpgrade(ctx) {
		return end(SessionResult{}, errSwitch)
	}
	if err := s.compactIfNeeded(ctx); err != nil {
		return end(SessionResult{}, err)
	}
	return proceed
}

// begin takes up a run: a new session waits for its first message when it
// has no prompt; a continued one restores its permissions and resumes the
// batch it carried, or takes in its inbox, or waits as it was waiting.
func (s *driver) begin(ctx workflow.Context) outcome {
	r := s.in.Resume
	if r == nil {
		if s.endsWithUser() {
			return proceed
		}
		return s.awaitNext(ctx) // no prompt: wait like an idle session
	}
	if r.Permissions != nil {
		if err := s.engine.Restore(*r.Permissions); err != nil {
			return end(SessionResult{}, fmt.Errorf("restore permissions after continue-as-new: %w", err))
		}
	}
	switch {
	case r.Batch != nil && len(r.Batch.Calls) > 0:
		// The turn was in progress: its calls still wait for a person.
		turnCtx, cancelTurn := s.startTurn(ctx)
		err := s.resumeBatch(turnCtx, r.Batch)
		s.cancelTurn = nil
		cancelTurn()
		return s.afterBatch(ctx, err)
	case len(s.Inbox) > 0:
		s.drainInbox(ctx)
	case s.modelIsDone():
		return s.awaitNext(ctx)
	}
	return proceed
}

// modelFailed handles a model call that failed: the session was
// cancelled or interrupted, the conversation outgrew the window (compact
// and run the turn again), or the failure is reported and the session
// waits for the person to say what to do (a new message retries).
func (s *driver) modelFailed(ctx workflow.Context, err error) outcome {
	if ctx.Err() != nil {
		return end(SessionResult{}, err)
	}
	if s.interrupted {
		return s.afterInterrupt(ctx)
	}
	if s.compactOnOverflow(ctx, err) {
		s.Turn-- // the turn did not happen; it runs again on the smaller conversation
		return proceed
	}
	s.LastError, s.LastErrorType = modelFailure(s.Turn, err)
	s.logger(ctx).Error("model call failed", "error", err)
	if ok, werr := s.waitForInput(ctx); werr != nil || !ok {
		return end(s.result(ResultFailed, s.LastError), werr)
	}
	return proceed
}

// afterBatch handles how a batch ended: on to the next turn, or the
// session ends (or switches runs).
func (s *driver) afterBatch(ctx workflow.Context, err error) outcome {
	if errors.Is(err, errSwitch) || (err != nil && ctx.Err() != nil) {
		return end(SessionResult{}, err)
	}
	if o := s.checkpoint(ctx); o.done {
		return o
	}
	s.MarkTurn()
	// An interrupt may land after every call already finished, so the
	// flag, not the error, decides.
	if s.interrupted {
		return s.afterInterrupt(ctx)
	}
	if err != nil {
		return end(SessionResult{}, err)
	}
	s.drainInbox(ctx)
	return proceed
}

// afterInterrupt waits for the person who stopped the turn.
func (s *driver) afterInterrupt(ctx workflow.Context) outcome {
	if ok, err := s.waitAfterInterrupt(ctx); err != nil || !ok {
		return end(s.result(ResultCompleted, ""), err)
	}
	return proceed
}

// awaitNext waits for the person's next message once the model is done;
// the session completes when none comes.
func (s *driver) awaitNext(ctx workflow.Context) outcome {
	s.publishWaiting(ctx)
	if ok, err := s.waitForInput(ctx); err != nil || !ok {
		return end(s.result(ResultCompleted, ""), err)
	}
	return proceed
}

// nameCalls gives each call of the model's reply the session's id
// (callref.Name), before the reply is recorded: the id every surface
// shows and every decision names.
func (s *driver) nameCalls(calls []conversation.ToolCall) {
	for i := range calls {
		s.Named++
		calls[i].Ref = callref.Name(s.Named)
	}
}
