package follow

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/untrusted"
)

// textBytes is how much of a text, a reasoning or a message one line
// shows; `longrun conversation` has them whole.
const textBytes = 300

// Line is e for a terminal or a page: one line, every string the model,
// a tool or a person controls rendered by package untrusted, so a
// control sequence in the model's text cannot reach the terminal raw.
// hint says where the whole text is, for a cut one.
func Line(e Event, hint string) string {
	var b strings.Builder
	if e.Seq > 0 {
		fmt.Fprintf(&b, "#%d ", e.Seq)
	}
	if !e.Time.IsZero() {
		b.WriteString(e.Time.Local().Format("15:04:05") + " ")
	}
	if e.SubAgent != "" {
		// A sub-agent's event, merged into its parent's stream.
		b.WriteString("[" + untrusted.Token(e.SubAgent) + "] ")
	}
	b.WriteString(describe(e, hint))
	return b.String()
}

// text is an event's text on one line, cut, with what was cut when it
// was recorded counted too.
func text(e Event, hint string) string {
	head, c := untrusted.Head(strings.TrimSpace(e.Text), textBytes, 0)
	c = c.Plus(untrusted.Cut{Bytes: e.Cut})
	out := untrusted.Line(head)
	if note := c.Note(hint); note != "" {
		out += " " + note
	}
	return out
}

func call(c *eventlog.Call) string {
	if c == nil {
		return "call"
	}
	s := "call " + untrusted.Token(c.ID) + " " + untrusted.Token(c.Tool)
	if c.Summary != "" {
		s += " (" + untrusted.Preview(c.Summary, 120, "") + ")"
	}
	return s
}

func describe(e Event, hint string) string {
	with := func(s string) string {
		if t := text(e, hint); t != "" {
			return s + ": " + t
		}
		return s
	}
	by := func() string {
		if e.Call != nil && e.Call.By != "" {
			return " by " + untrusted.Token(e.Call.By)
		}
		return ""
	}
	outcome := untrusted.Token(e.Outcome)
	switch e.Kind {
	case eventlog.KindPhase:
		return "phase " + untrusted.Token(e.Phase)
	case eventlog.KindTurnStarted:
		return fmt.Sprintf("turn %d: calling the model", e.Turn)
	case eventlog.KindTurnFinished:
		if e.Outcome == "ok" {
			return fmt.Sprintf("turn %d: the model answered", e.Turn)
		}
		return with(fmt.Sprintf("turn %d: the model call %s", e.Turn, outcome))
	case eventlog.KindText:
		return with("text")
	case eventlog.KindReasoning:
		return with("reasoning")
	case eventlog.KindUserMessage:
		return with("message")
	case eventlog.KindCallProposed:
		return with(call(e.Call) + " proposed: " + outcome + by())
	case eventlog.KindCallDecided:
		return with(call(e.Call) + " decided: " + outcome + by())
	case eventlog.KindCallStarted:
		return call(e.Call) + " started"
	case eventlog.KindCallFinished:
		s := call(e.Call) + " finished: " + outcome
		if e.Call != nil && e.Call.IsError {
			s += " (error)"
		}
		return with(s)
	case eventlog.KindRewound:
		return fmt.Sprintf("rewound to turn %d %s", e.Turn, outcome)
	case eventlog.KindSubagentStarted:
		return with(call(e.Call) + ": sub-agent " + untrusted.Token(e.Session) + " started")
	case eventlog.KindEnded:
		return with("session ended: " + outcome)
	case KindPartial:
		// The end of what is being written is what there is to see.
		t := strings.TrimSpace(e.Text)
		if len(t) > textBytes {
			i := len(t) - textBytes
			for i < len(t) && !utf8.RuneStart(t[i]) {
				i++
			}
			t = "…" + t[i:]
		}
		return "writing: " + untrusted.Line(t)
	case KindMissed, KindLost, KindNoWorker, KindError:
		return with(untrusted.Token(e.Kind))
	case KindBack:
		return "back: the session's events read again"
	case KindClosed:
		return "closed: " + outcome
	}
	return with(untrusted.Token(e.Kind))
}
