// Package eventlog is a session's event stream: a bounded,
// sequence-numbered log of what the session did (phase changes, model
// turns, the reply's text and reasoning, each call proposed, decided,
// started and finished, the session's end), which every client reads the
// same way (the `events` query) so none needs to know the workflow's
// internals. It is plain Go with no Temporal import: the workflow appends
// to it deterministically and carries its tail across continue-as-new.
//
// Every string an event carries that the model or a tool controls (text,
// reasoning, a call's summary, a result's preview, feedback) is data: a
// client shows it through package untrusted, never raw.
package eventlog

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
)

// Kinds of event. These names are product (docs/EVENTS.md): extend,
// never rename.
const (
	KindPhase        = "phase"         // Phase is the session's new phase
	KindTurnStarted  = "turn_started"  // a model call began (Turn)
	KindTurnFinished = "turn_finished" // the model call ended; Outcome "ok" or "failed" (Text: why)
	KindText         = "text"          // the reply's text, as recorded
	KindReasoning    = "reasoning"     // the reply's reasoning, as recorded
	KindUserMessage  = "user_message"  // a person's message taken into the conversation
	KindCallProposed = "call_proposed" // the model asked for a call; Outcome: what the policy made of it
	KindCallDecided  = "call_decided"  // a person, a rule, the guardian or the timeout decided it
	KindCallStarted  = "call_started"  // the call's tool began to run
	KindCallFinished = "call_finished" // the call has its one result; Outcome is the result's reason
	KindEnded        = "session_ended" // the session closed; Outcome is its status
	KindRewound      = "rewound"       // the session went back to Turn (rewind); Outcome "from turn N"
	// KindSubagentStarted says a task call's sub-agent, a child session
	// with an event stream of its own, has started: Session is its id,
	// Call the task call, Text what it is for. A client that shows
	// sub-agents follows Session from here (package follow).
	KindSubagentStarted = "subagent_started"
)

// Bounds of the log. A reply of megabytes or a session of days keeps the
// log (and what continue-as-new carries of it) small: a client that wants
// a whole reply reads the conversation query.
const (
	// MaxText is the most bytes of text one event carries; Cut says how
	// many more there were.
	MaxText = 4 << 10
	// MaxEvents and MaxBytes bound the log the workflow keeps in memory:
	// the oldest events go first.
	MaxEvents = 1000
	MaxBytes  = 512 << 10
	// CarryEvents and CarryBytes bound the tail continue-as-new carries
	// into the next run's input, which is written to history.
	CarryEvents = 200
	CarryBytes  = 64 << 10
	// MaxPage is the most events one query answer holds.
	MaxPage = 500
)

// Event is one thing the session did. Seq numbers the session's events
// from 1, across runs; the same event always has the same Seq.
type Event struct {
	Seq     int64     `json:"seq"`
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Run     int       `json:"run"`            // which run of the session (continue-as-new) it happened in
	Turn    int       `json:"turn,omitempty"` // the model turn it belongs to
	Phase   string    `json:"phase,omitempty"`
	Call    *Call     `json:"call,omitempty"`
	Outcome string    `json:"outcome,omitempty"`
	// Text is the model's text or reasoning, a person's message or
	// feedback, a failure: untrusted, at most MaxText bytes.
	Text string `json:"text,omitempty"`
	// Cut is how many bytes of Text were left out (from its end).
	Cut int `json:"cut,omitempty"`
	// Session is, on KindSubagentStarted, the sub-agent's session id.
	Session string `json:"session,omitempty"`
}

// Call is the call an event is about.
type Call struct {
	// ID is the session's id of the call ("c17"), as pending-approvals
	// and every decision name it.
	ID   string `json:"id"`
	Tool string `json:"tool"`
	// Summary is the call on one line, as its tool declares it
	// ("shell: go test ./..."): model-controlled.
	Summary string `json:"summary,omitempty"`
	// By is who decided or let it run: policy, person, rule, guardian,
	// timeout.
	By string `json:"by,omitempty"`
	// IsError is set on a finished call whose result is an error.
	IsError bool `json:"is_error,omitempty"`
}

// Log is the session's events, oldest first, and the number the next
// one gets. Its JSON is what continue-as-new carries.
type Log struct {
	// Next is the Seq of the next event: one more than the last one
	// appended, in any run.
	Next   int64   `json:"next"`
	Events []Event `json:"events,omitempty"`
}

// Page is the answer to a read of the log after a sequence number.
type Page struct {
	Events []Event `json:"events"`
	// Next is the Seq the next event will get: ask again after Next-1.
	Next int64 `json:"next"`
	// First is the oldest Seq the log still holds (Next when it holds
	// none).
	First int64 `json:"first"`
	// Missed is how many events after the one asked for are no longer
	// kept (the log is bounded; continue-as-new carries its tail): the
	// reader says so instead of showing a silent gap.
	Missed int64 `json:"missed,omitempty"`
	// More is set when more events follow these than one page holds.
	More bool `json:"more,omitempty"`
	// Run is the session's current run.
	Run int `json:"run"`
}

// Request is the argument of the events query: {"after": N} asks for the
// events with Seq > N (0: from the first one kept); Limit caps how many
// (0 or more than MaxPage: MaxPage). Tail, when set, asks for only the
// last Tail of them (a page that shows the latest events): the ones
// skipped are not Missed, they were not asked for.
type Request struct {
	After int64 `json:"after"`
	Limit int   `json:"limit,omitempty"`
	Tail  int   `json:"tail,omitempty"`
}

// Errors of a read the log cannot answer.
var (
	ErrNegative = errors.New("after, limit and tail must be 0 or more")
	ErrFuture   = errors.New("after is past the last event")
)

// Append adds e with the next sequence number, its text cut to MaxText,
// and drops the oldest events past MaxEvents or MaxBytes. It returns the
// event as kept.
func (l *Log) Append(e Event) Event {
	if l.Next < 1 {
		l.Next = 1
	}
	e.Seq = l.Next
	l.Next++
	e.Text, e.Cut = cut(e.Text, MaxText)
	l.Events = append(l.Events, e)
	l.Events = keepTail(l.Events, MaxEvents, MaxBytes)
	return e
}

// After is the page of events with Seq > req.After. A negative After, or
// one past the last event, is an error saying what may be asked: a
// reader never mistakes a wrong number for a quiet session.
func (l *Log) After(req Request, run int) (Page, error) {
	next := max(l.Next, 1)
	p := Page{Events: []Event{}, Next: next, First: next, Run: run}
	if len(l.Events) > 0 {
		p.First = l.Events[0].Seq
	}
	switch {
	case req.After < 0 || req.Limit < 0 || req.Tail < 0:
		return p, fmt.Errorf("events after %d (limit %d, tail %d): %w (ask after 0 to read from the first event kept, %d)", req.After, req.Limit, req.Tail, ErrNegative, p.First)
	case req.After > next-1:
		return p, fmt.Errorf("events after %d: %w (the last is %d; ask after %d or less)", req.After, ErrFuture, next-1, next-1)
	}
	limit := req.Limit
	if limit <= 0 || limit > MaxPage {
		limit = MaxPage
	}
	if req.After+1 < p.First {
		p.Missed = p.First - req.After - 1
	}
	evs := l.Events
	if req.Tail > 0 && len(evs) > req.Tail {
		evs = evs[len(evs)-req.Tail:]
		if evs[0].Seq > req.After+1 {
			p.Missed = 0
		}
	}
	for _, e := range evs {
		if e.Seq <= req.After {
			continue
		}
		if len(p.Events) == limit {
			p.More = true
			break
		}
		p.Events = append(p.Events, e)
	}
	return p, nil
}

// LastPhase is the phase of the newest phase event the log holds, "" if
// none.
func (l *Log) LastPhase() string {
	for i := len(l.Events) - 1; i >= 0; i-- {
		if l.Events[i].Kind == KindPhase {
			return l.Events[i].Phase
		}
	}
	return ""
}

// Carried is the log continue-as-new carries: the same Next, and the
// newest events within CarryEvents and CarryBytes. A reader behind the
// carried tail is told how many it missed (Page.Missed).
func (l Log) Carried() *Log {
	return &Log{Next: l.Next, Events: keepTail(append([]Event(nil), l.Events...), CarryEvents, CarryBytes)}
}

// keepTail drops the oldest events until at most n remain, holding at
// most size bytes of text and summaries between them.
func keepTail(evs []Event, n, size int) []Event {
	if len(evs) > n {
		evs = evs[len(evs)-n:]
	}
	total := 0
	for i := len(evs) - 1; i >= 0; i-- {
		total += weight(evs[i])
		if total > size {
			return evs[i+1:]
		}
	}
	return evs
}

// weight is roughly an event's size in bytes: its strings and a little
// for the rest.
func weight(e Event) int {
	w := 64 + len(e.Kind) + len(e.Phase) + len(e.Outcome) + len(e.Text) + len(e.Session)
	if e.Call != nil {
		w += len(e.Call.ID) + len(e.Call.Tool) + len(e.Call.Summary) + len(e.Call.By)
	}
	return w
}

// cut is s within n bytes, cut at a character boundary, and how many
// bytes were left out.
func cut(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], len(s) - i
}

// Short is s cut to n bytes at a character boundary, for a summary or a
// preview an event carries (the cut is not counted: Text's is).
func Short(s string, n int) string {
	out, _ := cut(s, n)
	return out
}
