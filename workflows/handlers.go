package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/conversation"
)

// maxRejected bounds the list of rejected signals kept for the status query.
const maxRejected = 20

func (s *session) registerHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryConversation, func() ([]conversation.Message, error) {
		return s.messages, nil
	}); err != nil {
		return fmt.Errorf("register %s query: %w", QueryConversation, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryPendingApprovals, func() ([]PendingApproval, error) {
		return s.pending(), nil
	}); err != nil {
		return fmt.Errorf("register %s query: %w", QueryPendingApprovals, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) {
		return s.status(), nil
	}); err != nil {
		return fmt.Errorf("register %s query: %w", QueryStatus, err)
	}

	// Signals are drained by their own goroutines for the whole run, so a
	// signal is never left unhandled whatever the main loop waits on.
	userCh := workflow.GetSignalChannel(ctx, SignalUserMessage)
	workflow.GoNamed(ctx, "signal:"+SignalUserMessage, func(ctx workflow.Context) {
		for {
			var m UserMessage
			if !userCh.Receive(ctx, &m) {
				return
			}
			if strings.TrimSpace(m.Text) == "" {
				s.reject(ctx, "user-message with empty text ignored (send {\"text\": \"...\"})")
				continue
			}
			s.inbox = append(s.inbox, m.Text)
		}
	})
	approvalCh := workflow.GetSignalChannel(ctx, SignalApproval)
	workflow.GoNamed(ctx, "signal:"+SignalApproval, func(ctx workflow.Context) {
		for {
			var ap Approval
			if !approvalCh.Receive(ctx, &ap) {
				return
			}
			if msg := s.applyApproval(ap); msg != "" {
				s.reject(ctx, msg)
			}
			workflow.SetCurrentDetails(ctx, s.details())
		}
	})
	return nil
}

// applyApproval records a decision for a waiting call. It returns why the
// signal was not used, or "" when it was.
func (s *session) applyApproval(ap Approval) string {
	decision := strings.ToLower(strings.TrimSpace(ap.Decision))
	if decision != DecisionApprove && decision != DecisionDeny {
		return fmt.Sprintf("approval for %q: decision %q is not %q or %q", ap.CallID, ap.Decision, DecisionApprove, DecisionDeny)
	}
	for _, c := range s.batch {
		if c.call.ID != ap.CallID {
			continue
		}
		if c.state != stateWaiting {
			return fmt.Sprintf("approval for %q ignored: the call is no longer waiting for approval", ap.CallID)
		}
		ap.Decision = decision
		c.decision = &ap
		return ""
	}
	var ids []string
	for _, p := range s.pending() {
		ids = append(ids, p.CallID)
	}
	return fmt.Sprintf("approval for unknown call id %q ignored (waiting: %s)", ap.CallID, orNone(ids))
}

func (s *session) reject(ctx workflow.Context, msg string) {
	workflow.GetLogger(ctx).Warn("signal rejected", "reason", msg)
	s.rejected = append(s.rejected, msg)
	if len(s.rejected) > maxRejected {
		s.rejected = s.rejected[len(s.rejected)-maxRejected:]
	}
}

func (s *session) pending() []PendingApproval {
	out := []PendingApproval{}
	for _, c := range s.batch {
		if c.state == stateWaiting && c.decision == nil {
			out = append(out, PendingApproval{
				CallID: c.call.ID, Tool: c.call.Name, Arguments: c.call.Arguments,
				Reason: c.why, Turn: s.turn, RequestedAt: c.requestedAt,
			})
		}
	}
	return out
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
