package session

import (
	"github.com/longrun/longrun/eventlog"
)

// previewBytes is how much of a finished call's result its event
// carries: enough to say what happened; the conversation has the rest.
const previewBytes = 300

// CallEvents are the events of the session's stream (package eventlog)
// that telling c the event ev produced, c having been in state before:
// the policy's verdict proposes it, a decision (a person's, a rule's,
// the guardian's, the timeout) decides it, the start starts it, and
// whatever gives it its result finishes it. summary is the call on one
// line, as its tool declares it. Events carry no Seq, Time, Run or Turn:
// the log and the workflow fill those in.
func CallEvents(before CallState, c Call, ev Event, summary string) []eventlog.Event {
	call := func(by string) *eventlog.Call {
		return &eventlog.Call{ID: c.Call.Ref, Tool: c.Call.Name, Summary: eventlog.Short(summary, 200), By: by}
	}
	var out []eventlog.Event
	switch ev.(type) {
	case PolicyEvent:
		outcome, by, text := verdictOf(c.State)
		out = append(out, eventlog.Event{Kind: eventlog.KindCallProposed, Call: call(by), Outcome: outcome, Text: text})
	case DecideEvent, ReleaseEvent, ReviewEvent, TimeoutEvent:
		outcome, by, text := verdictOf(c.State)
		if _, ok := ev.(TimeoutEvent); ok {
			outcome, by, text = "timeout", "timeout", ""
		}
		if _, ok := ev.(ReviewEvent); ok && by == "" {
			by = string(ByGuardian) // it asks a person: the guardian's verdict all the same
		}
		out = append(out, eventlog.Event{Kind: eventlog.KindCallDecided, Call: call(by), Outcome: outcome, Text: text})
	case StartEvent:
		out = append(out, eventlog.Event{Kind: eventlog.KindCallStarted, Call: call("")})
	}
	_, wasDone := before.(Done)
	if d, done := c.State.(Done); done && !wasDone {
		fc := call("")
		fc.IsError = d.Result.IsError
		out = append(out, eventlog.Event{Kind: eventlog.KindCallFinished, Call: fc, Outcome: string(d.Result.Reason),
			Text: eventlog.Short(d.Result.Content, previewBytes)})
	}
	return out
}

// verdictOf says what a call's state means to someone watching: its
// outcome (allow, ask, review, approve, deny, or the result's reason),
// who decided, and the text that goes with it (why it asks, a person's
// feedback).
func verdictOf(st CallState) (outcome, by, text string) {
	switch s := st.(type) {
	case Approved:
		if s.Decision == nil {
			return "allow", string(s.By), ""
		}
		return DecisionApprove, string(s.By), s.Decision.Feedback
	case Decided:
		return s.Decision.Decision, string(s.By), s.Decision.Feedback
	case Waiting:
		return "ask", "", s.Reason
	case Reviewing:
		return "review", "", s.Reason
	case Preparing:
		o, b, t := verdictOf(s.Then)
		return o, b, t
	case Done:
		if s.Decision != nil {
			return s.Decision.Decision, "", s.Decision.Feedback
		}
		return string(s.Result.Reason), string(ByPolicy), ""
	}
	return st.Name(), "", ""
}
