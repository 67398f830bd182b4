package workflows

import (
	"fmt"

	"github.com/longrun/longrun/conversation"
)

// notWaiting is the refusal of a decision for a call that no longer
// waits, saying how it was decided rather than calling it unknown: a
// person who approves twice, or after someone else, learns what happened.
// It is "" for an id this session never saw.
func (s *driver) notWaiting(callID string) string {
	for _, c := range s.batch {
		if c.call.ID != callID {
			continue
		}
		how := "allowed without asking"
		switch {
		case c.decision != nil && c.decision.Decision == DecisionDeny && c.decision.Feedback != "":
			how = "denied: " + c.decision.Feedback
		case c.decision != nil && c.decision.Decision == DecisionDeny:
			how = "denied"
		case c.decision != nil:
			how = "approved"
		}
		return fmt.Sprintf("call %q is not waiting for approval: already decided (%s)", callID, truncate(how, 200))
	}
	// A call of an earlier turn: its result says what became of it.
	if fate := conversation.Fate(s.Messages, callID); fate != "" {
		return fmt.Sprintf("call %q is not waiting for approval: already decided (%s)", callID, fate)
	}
	return ""
}
