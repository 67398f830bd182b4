package session

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/permission"
)

// Bounds of the review record (State.Review): the pull request's body
// shows the latest of each, and says how many earlier ones it leaves out.
const (
	// ReviewCommands is how many of the latest commands the session ran
	// the record keeps.
	ReviewCommands = 20
	// ReviewApproved and ReviewUndone bound the approvals and the calls
	// left undone it keeps.
	ReviewApproved = 50
	ReviewUndone   = 50
	// reviewSummaryBytes bounds each call's summary and feedback.
	reviewSummaryBytes = 300
)

// undone are the results of a call that did not run, or may not have
// finished: what a reviewer must know was left undone.
var undone = map[conversation.Reason]bool{
	conversation.ReasonDenied:                true,
	conversation.ReasonDeniedByPolicy:        true,
	conversation.ReasonBlocked:               true,
	conversation.ReasonTimeout:               true,
	conversation.ReasonWorkerLost:            true,
	conversation.ReasonInterrupted:           true,
	conversation.ReasonCancelledBeforeRun:    true,
	conversation.ReasonCancelledWhileRunning: true,
}

// exitRe is the footer a command tool writes as the last line of its
// result ("[exit code 1, 0.4s]"): the output comes before it, so the
// command's own output cannot stand in for it.
var exitRe = regexp.MustCompile(`\[exit code (\d+)[,( ]`)

// ExitCode is the exit code a command's result ends with, if its last
// line is the tool's footer.
func ExitCode(content string) (int, bool) {
	content = strings.TrimRight(content, "\n")
	last := content[strings.LastIndexByte(content, '\n')+1:]
	if !strings.HasPrefix(last, "[exit code ") {
		return 0, false
	}
	m := exitRe.FindStringSubmatch(last)
	if m == nil {
		return 0, false
	}
	n, err := strconv.Atoi(m[1])
	return n, err == nil
}

// ObserveReview adds to the review record r what telling c the event ev
// did, c having been in state before: a person's, a remembered rule's or
// the guardian's approval, with the decision's author (for the
// guardian, its reason as Text) and at, the time the workflow took it
// in; a command call's result, with its exit code when the result says
// it; a call that ended without running, or without finishing. summary is the call on one line. It decides on the call's
// kind and result, never on the tool's name. It returns the record, nil
// while there is nothing in it.
func ObserveReview(r *record.Review, before CallState, c Call, ev Event, summary string, at time.Time) *record.Review {
	entry := func() record.ReviewCall {
		return record.ReviewCall{ID: c.Call.Ref, Summary: eventlog.Short(summary, reviewSummaryBytes), At: at}
	}
	if _, ok := ev.(DecideEvent); ok || isRelease(ev) {
		if d, ok := c.State.(Decided); ok && d.Decision.Decision == DecisionApprove {
			e := entry()
			e.Outcome, e.By, e.Author = DecisionApprove, string(d.By), eventlog.Short(d.Decision.Author, 100)
			r = orNew(r)
			r.Approved, r.DroppedApproved = keepLast(append(r.Approved, e), ReviewApproved, r.DroppedApproved)
		}
	}
	if _, ok := ev.(ReviewEvent); ok {
		// The guardian let it run (in the read-only sandbox): a reviewer
		// sees which calls a model judged safe, and why.
		if a, ok := c.State.(Approved); ok && a.By == ByGuardian && a.Decision != nil {
			e := entry()
			e.Outcome, e.By = DecisionApprove, string(ByGuardian)
			e.Text = eventlog.Short(strings.TrimPrefix(a.Decision.Feedback, guardianFeedbackPrefix), reviewSummaryBytes)
			r = orNew(r)
			r.Approved, r.DroppedApproved = keepLast(append(r.Approved, e), ReviewApproved, r.DroppedApproved)
		}
	}
	d, done := c.State.(Done)
	if _, wasDone := before.(Done); !done || wasDone {
		return r
	}
	res := d.Result
	switch {
	case undone[res.Reason]:
		e := entry()
		e.Outcome = string(res.Reason)
		if d.Decision != nil {
			e.Text = eventlog.Short(d.Decision.Feedback, reviewSummaryBytes)
			e.Author = eventlog.Short(d.Decision.Author, 100)
		}
		r = orNew(r)
		r.Undone, r.DroppedUndone = keepLast(append(r.Undone, e), ReviewUndone, r.DroppedUndone)
	case c.Perm.Kind == permission.KindCommand && (res.Reason == conversation.ReasonRan || res.Reason == conversation.ReasonFailed):
		e := entry()
		if c.Perm.Subject != "" {
			e.Summary = eventlog.Short(c.Perm.Subject, reviewSummaryBytes)
		}
		e.Outcome = string(res.Reason)
		if n, ok := ExitCode(res.Content); ok {
			e.Exit = &n
		}
		r = orNew(r)
		r.Commands, r.DroppedCommands = keepLast(append(r.Commands, e), ReviewCommands, r.DroppedCommands)
	}
	return r
}

func isRelease(ev Event) bool {
	_, ok := ev.(ReleaseEvent)
	return ok
}

func orNew(r *record.Review) *record.Review {
	if r == nil {
		return &record.Review{}
	}
	return r
}

// keepLast keeps the newest n of calls, counting what it drops.
func keepLast(calls []record.ReviewCall, n, dropped int) ([]record.ReviewCall, int) {
	if over := len(calls) - n; over > 0 {
		return append([]record.ReviewCall(nil), calls[over:]...), dropped + over
	}
	return calls, dropped
}

// UnfinishedPlan is the model's plan items (todos) not marked completed:
// what it said it meant to do and did not say it did.
func UnfinishedPlan(todos []Todo) []string {
	var out []string
	for _, t := range todos {
		if t.Status != TodoCompleted && len(out) < ReviewUndone {
			out = append(out, eventlog.Short(t.Content, reviewSummaryBytes)+" ("+t.Status+")")
		}
	}
	return out
}
