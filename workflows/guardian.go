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

// toGuardian puts a call the engine decided to ask about (d) in review
// instead of in front of a person, when the session has a guardian and
// the call is one it may decide (guardian.Eligible: never a control file,
// a hard block, an obscured program). Called from decide.
func (s *driver) toGuardian(cs *callState, d permission.Decision) {
	if !s.guardianOn() {
		return
	}
	if cs.perm.Kind == permission.KindCommand && !s.engine.Sandboxed() {
		// Its approval would run the command as an unapproved one, which
		// a worker without a sandbox refuses: only a person can help.
		return
	}
	if ok, _ := guardian.Eligible(cs.perm, d); ok {
		cs.state = stateReviewing
	}
}

// review runs the guardian on a call in review and applies its verdict: an
// approval lets the call run (as an unapproved call: it was not a person,
// so the sandbox's rules for unapproved commands still hold: a shell
// command runs read-only and offline), a denial
// answers it with the reason for the model, and anything else (ask, a
// timeout, an error, a malformed answer, the denial streak) leaves it
// waiting for a person with the guardian's reason. It returns true when
// the call is answered.
func (s *driver) review(ctx workflow.Context, cs *callState) bool {
	key := guardian.Key(cs.call.Name, cs.call.Arguments)
	v, known := s.guard.Memory.Lookup(key)
	if !known {
		req := guardian.Request{Model: s.in.Model, Tool: cs.call.Name, Arguments: cs.call.Arguments,
			Why: cs.why, Head: s.Head, Recent: guardian.Recent(s.Messages), Task: guardian.Task(s.Messages)}
		if err := s.reviewCall(ctx, cs, req, &v); err != nil {
			if ctx.Err() != nil {
				cs.state = stateWaiting // cancelled or interrupted: runCall says so
				return false
			}
			v = guardian.Failed(guardian.FailError, "the guardian's activity failed: "+rootMessage(err))
		}
		v = guardian.Normalize(v)
		if v.Usage != nil {
			s.Usage = s.Usage.Add(*v.Usage) // reviews count toward the budgets
		}
	}
	s.guard.Memory.Record(key, v)
	cs.verdict = &v
	s.guard.Log = append(s.guard.Log, GuardianDecision{CallID: cs.call.ID, ID: cs.call.Ref, Tool: cs.call.Name, Turn: s.Turn, Verdict: v})
	if len(s.guard.Log) > maxGuardianLog {
		s.guard.Log = s.guard.Log[len(s.guard.Log)-maxGuardianLog:]
	}
	s.logger(ctx).Info("guardian", "id", cs.call.Ref, "call_id", cs.call.ID, "tool", cs.call.Name, "decision", v.Decision,
		"failure", v.Failure, "cached", v.Cached, "reason", v.Reason)
	answered := false
	switch v.Decision {
	case guardian.Approve:
		cs.decision = &Approval{CallID: cs.call.ID, ID: cs.call.Ref, Decision: DecisionApprove, Feedback: "guardian: " + v.Reason}
		// Not a person's approval, so it loosens nothing a person's would:
		// released keeps Env.ApprovedByPerson false (no control file may
		// change), and readOnlySandbox runs a shell command as one nobody
		// approved runs: in the sandbox with the working directory
		// read-only and no network, and not at all on a worker without a
		// sandbox. Both flags are carried across continue-as-new.
		cs.released = true
		cs.readOnlySandbox = true
		cs.state = stateRunning
	case guardian.Deny:
		cs.decision = &Approval{CallID: cs.call.ID, ID: cs.call.Ref, Decision: DecisionDeny, Feedback: v.Reason}
		cs.finish(conversation.ToolResult{Content: guardianDenialText(v), IsError: true, Reason: conversation.ReasonDenied})
		answered = true
	default:
		cs.state = stateWaiting
		cs.why = fmt.Sprintf("%s; the guardian asks a person: %s", cs.why, describeVerdict(v))
		cs.requestedAt = workflow.Now(ctx) // a person is asked from now
	}
	s.afterDecision(ctx)
	return answered
}

// personDecided ends the guardian's denial streak: a person has looked.
func (s *driver) personDecided() { s.guard.Memory.PersonDecided() }

func guardianDenialText(v guardian.Verdict) string {
	return "denied by the guardian, the reviewer that decides for the user in this session: " +
		strings.TrimSuffix(v.Reason, ".") + ". It did not run; do not retry it unchanged. Change the approach, or ask the user."
}

// describeVerdict says why the guardian did not decide, for a person.
func describeVerdict(v guardian.Verdict) string {
	what := v.Reason
	if what == "" {
		what = "no reason given"
	}
	switch v.Failure {
	case guardian.FailTimeout, guardian.FailError, guardian.FailMalformed:
		return fmt.Sprintf("it could not decide (%s): %s", v.Failure, what)
	case guardian.FailStreak:
		return what
	}
	return what
}

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
			untrusted.MarkdownText(untrusted.Preview(describeVerdict(d.Verdict), 300, "")))
	}
	return b.String()
}
