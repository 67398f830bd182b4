package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/session"
)

// registerEvents answers the events query from the log the run keeps.
//
// There is deliberately no update that blocks until a new event exists.
// An accepted update is two history events (accepted, completed) plus
// the workflow task that accepts it, for every wait of every client; one
// that waits with a timer adds the timer's events too. The server also
// admits at most 10 updates in flight per workflow (history.maxInFlightUpdates)
// and 2,000 per run (history.maxTotalUpdates): a few watchers parked in
// such an update would make a person's `approve` or `rewind` update be
// refused, and a long watch would spend a run's update budget. Clients
// poll this query instead (package follow), which costs no history at
// all; the text the model is writing comes from the model activity's
// heartbeat, which costs none either.
func (s *driver) registerEvents(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryEvents, func(req EventsRequest) (EventsPage, error) {
		return s.Events.After(req, s.Run)
	}); err != nil {
		return fmt.Errorf("register %s query: %w", QueryEvents, err)
	}
	return nil
}

// emit appends e to the session's event log, stamped with the workflow's
// clock, the run and, unless it has one, the current turn. It issues no
// command: the log is state, rebuilt the same on replay.
func (s *driver) emit(ctx workflow.Context, e eventlog.Event) {
	e.Time, e.Run = workflow.Now(ctx), s.Run
	if e.Turn == 0 {
		e.Turn = s.Turn
	}
	s.Events.Append(e)
}

// callEvents emits what telling call i of the batch ev did to it, the
// call having been in state before (session.CallEvents).
func (s *driver) callEvents(ctx workflow.Context, i int, before session.CallState, ev session.Event) {
	cs := s.ref(i)
	summary := s.callSummary(cs)
	for _, e := range session.CallEvents(before, s.batch.Calls[i], ev, summary) {
		s.emit(ctx, e)
	}
	s.Review = session.ObserveReview(s.Review, before, s.batch.Calls[i], ev, summary, workflow.Now(ctx))
}

// emitReply emits a model turn's end and the reply's reasoning and text,
// as recorded (each cut to eventlog.MaxText).
func (s *driver) emitReply(ctx workflow.Context, m conversation.Message) {
	s.emit(ctx, eventlog.Event{Kind: eventlog.KindTurnFinished, Outcome: "ok"})
	if m.Reasoning != "" {
		s.emit(ctx, eventlog.Event{Kind: eventlog.KindReasoning, Text: m.Reasoning})
	}
	if m.Content != "" {
		s.emit(ctx, eventlog.Event{Kind: eventlog.KindText, Text: m.Content})
	}
}

// emitTurnFailed emits the end of a model call that failed: interrupted,
// cancelled, or why.
func (s *driver) emitTurnFailed(ctx workflow.Context, err error) {
	e := eventlog.Event{Kind: eventlog.KindTurnFinished, Outcome: "failed", Text: rootMessage(err)}
	switch {
	case ctx.Err() != nil:
		e.Outcome, e.Text = "cancelled", ""
	case s.interrupted:
		e.Outcome, e.Text = "interrupted", ""
	}
	s.emit(ctx, e)
}

// emitEnded emits the session's end: its result's status (and error), or
// the error it ended with.
func (s *driver) emitEnded(ctx workflow.Context, res SessionResult, err error) {
	e := eventlog.Event{Kind: eventlog.KindEnded, Outcome: res.Status, Text: res.Error}
	if err != nil {
		e.Outcome, e.Text = ResultFailed, rootMessage(err)
	}
	s.emit(ctx, e)
}
