package conversation

import (
	"fmt"
	"strings"
)

// Fate says what became of the tool call callID in msgs, for a person who
// tries to decide a call that no longer waits: "approved (or allowed by a
// rule); it ran", "denied: <the result the model got>", "running". It is
// "" when msgs hold no such call. callID is the session's id of the call
// (ToolCall.Ref): the model's own may name several.
func Fate(msgs []Message, callID string) string {
	asked := false
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.Ref == callID {
				asked = true
			}
		}
		r := m.Result
		if r == nil || r.Ref != callID {
			continue
		}
		switch r.Reason {
		case ReasonRan, ReasonFailed:
			return "approved (or allowed by a rule); it ran"
		case ReasonDenied:
			// The session's denial text ends with the person's words.
			if _, feedback, ok := strings.Cut(r.Content, "feedback: "); ok {
				return "denied: " + cutFate(feedback)
			}
			return "denied"
		case ReasonDeniedByPolicy, ReasonBlocked:
			return "denied by the session's rules; nobody was asked"
		case ReasonTimeout:
			return "timed out: nobody decided within the approval timeout; it did not run"
		case ReasonCancelledBeforeRun, ReasonCancelledWhileRunning, ReasonInterrupted:
			return fmt.Sprintf("%s; it has a result", r.Reason)
		}
		return string(r.Reason)
	}
	if asked {
		return "running"
	}
	return ""
}

// cutFate keeps a denial's text short enough for one error line.
func cutFate(s string) string {
	r := []rune(s)
	if len(r) > 200 {
		return string(r[:199]) + "…"
	}
	return s
}
