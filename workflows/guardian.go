package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/untrusted"
)

// maxGuardianLog bounds the guardian decisions status keeps.
const maxGuardianLog = 20

// GuardianDecision is one decision of the guardian (session.GuardianDecision).
type GuardianDecision = session.GuardianDecision

// GuardianState is what a session knows of its guardian (session.GuardianState).
type GuardianState = session.GuardianState

// guardianOn reports whether this session's asks go to the guardian first.
func (s *driver) guardianOn() bool {
	return s.in.Approval == ApproverGuardian && s.engine != nil
}

// reviews reports whether a call the engine decided to ask about (d)
// goes to the guardian first instead of to a person: when the session
// has a guardian and the call is one it may decide (guardian.Eligible:
// never a control file, a hard block, an obscured program).
func (s *driver) reviews(c conversation.ToolCall, d session.Decision) bool {
	if !s.guardianOn() {
		return false
	}
	if d.Perm.Kind == permission.KindCommand && !s.engine.Sandboxed() {
		// Its approval would run the command as an unapproved one, which
		// a worker without a sandbox refuses: only a person can help.
		return false
	}
	ok, _ := guardian.Eligible(d.Perm, d.Permission)
	return ok
}

// review runs the guardian on a call in review and tells the batch its
// verdict (session.Batch.Review): an approval lets the call run as an
// unapproved call (it was not a person, so the sandbox's rules for
// unapproved commands still hold), a denial answers it, and anything
// else (ask, a timeout, an error, a malformed answer, the denial streak)
// leaves it waiting for a person with the guardian's reason.
func (s *driver) review(ctx workflow.Context, cs callRef) {
	call := cs.call()
	key := guardian.Key(call.Name, call.Arguments)
	v, known := s.guard.Memory.Lookup(key)
	if !known {
		why := cs.state().(session.Reviewing).Reason
		req := guardian.Request{Model: s.in.Model, Tool: call.Name, Arguments: call.Arguments,
			Why: why, Head: s.Head, Recent: guardian.Recent(s.Messages), Task: guardian.Task(s.Messages)}
		if err := s.reviewCall(ctx, cs, req, &v); err != nil {
			if ctx.Err() != nil {
				s.stop(ctx, cs) // cancelled or interrupted
				return
			}
			v = guardian.Failed(guardian.FailError, "the guardian's activity failed: "+rootMessage(err))
		}
		v = guardian.Normalize(v)
		if v.Usage != nil {
			s.Usage = s.Usage.Add(*v.Usage) // reviews count toward the budgets
		}
	}
	s.guard.Memory.Record(key, v)
	s.guard.Log = append(s.guard.Log, GuardianDecision{CallID: call.ID, ID: call.Ref, Tool: call.Name, Turn: s.Turn, Verdict: v})
	if len(s.guard.Log) > maxGuardianLog {
		s.guard.Log = s.guard.Log[len(s.guard.Log)-maxGuardianLog:]
	}
	s.logger(ctx).Info("guardian", "id", call.Ref, "call_id", call.ID, "tool", call.Name, "decision", v.Decision,
		"failure", v.Failure, "cached", v.Cached, "reason", v.Reason)
	s.tell(ctx, cs.i, session.ReviewEvent{Verdict: v, Now: workflow.Now(ctx)})
	s.afterDecision(ctx)
}

// personDecided ends the guardian's denial streak: a person has looked.
func (s *driver) personDecided() { s.guard.Memory.PersonDecided() }

// guardianDetails is the guardian's part of the current details.
func (s *driver) guardianDetails() string {
	if len(s.guard.Log) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n**guardian (latest first):**\n")
	for i := len(s.guard.Log) - 1; i >= 0 && i >= len(s.guard.Log)-5; i-- {
		d := s.guard.Log[i]
		cached := ""
		if d.Cached {
			cached = " (cached)"
		}
		fmt.Fprintf(&b, "\n- %s **%s** → %s%s — %s\n", untrusted.MarkdownCode(d.ID), untrusted.MarkdownText(d.Tool), untrusted.MarkdownText(d.Decision), cached,
			untrusted.MarkdownText(untrusted.Preview(session.DescribeVerdict(d.Verdict), 300, "")))
	}
	return b.String()
}
