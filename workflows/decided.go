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

// recordBatch keeps the finished batch's calls in the record of earlier
// calls (callref.Record): a later decision naming one is told what
// became of it, and a model id the model uses again is ambiguous.
func (s *driver) recordBatch() {
	for _, c := range s.batch.Calls {
		r, _ := c.Result()
		fate := conversation.Fate([]conversation.Message{conversation.ToolMessage(r)}, c.Call.Ref)
		s.Earlier = callref.Remember(s.Earlier, callref.Record{ID: c.Call.Ref, Model: callref.Key(c.Call.ID), Fate: fate})
	}
}

// digest is callref.Digest of the call as it is now (a prepared call's
// arguments are the prepared ones): what a decision on it must carry.
func digest(c conversation.ToolCall) string { return callref.Digest(c.Name, c.Arguments) }
