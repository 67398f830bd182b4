package workflows

import (
	"fmt"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
)

// notWaiting is the refusal of a decision for a call of the batch that
// no longer waits, saying how it was decided rather than calling it
// unknown: a person who approves twice, or after someone else, learns
// what happened.
func notWaiting(c session.Call) string {
	how := "allowed without asking"
	switch d := c.Decision(); {
	case d != nil && d.Decision == DecisionDeny && d.Feedback != "":
		how = "denied: " + d.Feedback
	case d != nil && d.Decision == DecisionDeny:
		how = "denied"
	case d != nil:
		how = "approved"
	}
	return fmt.Sprintf("call %s is not waiting for approval: already decided (%s)", c.Call.Ref, truncate(how, 200))
}

// digest is callref.Digest of the call as it is now (a prepared call's
// arguments are the prepared ones): what a decision on it must carry.
func digest(c conversation.ToolCall) string { return callref.Digest(c.Name, c.Arguments) }
