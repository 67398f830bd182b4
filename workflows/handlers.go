package workflows

import (
	"errors"
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
)

// maxRejected bounds the list of rejected signals kept for the status query.
const maxRejected = 20

// maxRejectedLen bounds the text of one rejected signal.
const maxRejectedLen = 500

func (s *driver) registerHandlers(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryConversation, func() ([]conversation.Message, error) {
		return s.fullConversation(false)
	}); err != nil {
		return fmt.Errorf("register %s query: %w", QueryConversation, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryConversationOriginal, func() ([]conversation.Message, error) {
		return s.fullConversation(true)
	}); err != nil {
		return fmt.Errorf("register %s query: %w", QueryConversationOriginal, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryPendingApprovals, func() ([]PendingApproval, error) {
		return s.pending(), nil
	}); err != nil {
		return fmt.Errorf("register %s query: %w", QueryPendingApprovals, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryTodos, func() ([]Todo, error) {
		return append([]Todo{}, s.Todos...), nil
	}); err != nil {
		return fmt.Errorf("register %s query: %w", QueryTodos, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryStatus, func() (Status, error) {
		return s.status(), nil
	}); err != nil {
		return fmt.Errorf("register %s query: %w", QueryStatus, err)
	}

	// Signals are taken by their own goroutines for the whole run, so a
	// signal is never left unhandled whatever the main loop waits on.
	s.receiveSignals(ctx)
	// The update is the checked path (our CLI uses it): a bad call id is
	// an error to the caller and never reaches history.
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateApprove,
		func(ctx workflow.Context, ap Approval) (ApprovalOutcome, error) {
			out, err := s.applyApproval(ctx, ap)
			workflow.SetCurrentDetails(ctx, s.details())
			return out, err
		},
		workflow.UpdateHandlerOptions{
			Validator: func(ap Approval) error {
				_, err := s.checkApproval(ap)
				return err
			},
			Description: "decide a pending tool call: {\"id\", \"digest\", \"decision\": \"approve\"|\"deny\", \"feedback\", \"all\"} (\"call_id\", the model's id, instead of \"id\" while it names one call)",
		},
	); err != nil {
		return fmt.Errorf("register %s update: %w", UpdateApprove, err)
	}
	if err := s.registerEvents(ctx); err != nil {
		return err
	}
	return s.registerRewind(ctx)
}

// checkApproval returns the calls an approval applies to, or why it
// cannot be used. It changes nothing, so it doubles as the update's
// validator (a rejected update leaves no trace in history). Which call
// an approval names is callref.Match's: the session's id first, the
// model's only while it names one call, and never a call whose
// arguments differ from the digest the person saw.
func (s *driver) checkApproval(ap Approval) ([]int, error) {
	named := ap.ID
	if named == "" {
		named = ap.CallID
	}
	decision := strings.ToLower(strings.TrimSpace(ap.Decision))
	if decision != DecisionApprove && decision != DecisionDeny {
		return nil, fmt.Errorf("approval for %q: decision %q is not %q or %q", named, ap.Decision, DecisionApprove, DecisionDeny)
	}
	switch ap.Remember {
	case "":
	case RememberSession:
		if decision != DecisionApprove {
			return nil, fmt.Errorf("remember applies to approvals, not to %q", decision)
		}
	default:
		return nil, fmt.Errorf("remember %q: the only value is %q", ap.Remember, RememberSession)
	}
	waiting := s.batch.Pending()
	if ap.All {
		if len(waiting) == 0 {
			return nil, fmt.Errorf("no calls are waiting for approval")
		}
		return waiting, nil
	}
	if _, _, ok, err := s.childCall(ap); ok || err != nil {
		return nil, err // a sub-agent's call: applyApproval forwards it
	}
	return s.namedCall(ap, named, waiting)
}

// namedCall is the one call of the batch a decision names, if it waits
// for a person; otherwise why not (unknown, ambiguous, other arguments,
// decided already, being prepared or reviewed).
func (s *driver) namedCall(ap Approval, named string, waiting []int) ([]int, error) {
	known := s.knownCalls()
	i, err := callref.Match(known, callref.Request{ID: ap.ID, ModelID: ap.CallID, Digest: ap.Digest})
	switch {
	case errors.Is(err, callref.ErrNoID):
		return nil, fmt.Errorf("approval without an id (waiting: %s)", orNone(s.callIDs(waiting)))
	case errors.Is(err, callref.ErrUnknown):
		return nil, fmt.Errorf("unknown call id %q (waiting: %s)", named, orNone(s.callIDs(waiting)))
	case err != nil:
		return nil, err
	case i < len(s.Earlier):
		// A call of an earlier turn: the record says what became of it.
		return nil, fmt.Errorf("call %s is not waiting for approval: already decided (%s) (waiting: %s)", known[i].ID, s.Earlier[i].Fate, orNone(s.callIDs(waiting)))
	}
	at := i - len(s.Earlier)
	c := s.batch.Calls[at]
	id := c.Call.Ref
	switch c.State.(type) {
	case session.Waiting:
		return []int{at}, nil
	case session.Preparing:
		return nil, fmt.Errorf("call %s is being prepared (its tool computes what it will change); decide it once it is shown", id)
	case session.Reviewing:
		return nil, fmt.Errorf("call %s is being reviewed by the guardian; it waits for a person only if the guardian does not decide it", id)
	}
	return nil, fmt.Errorf("%s", notWaiting(c))
}

// knownCalls are the calls a decision may name, for callref.Match: the
// record of earlier turns' calls, then the batch in progress.
func (s *driver) knownCalls() []callref.Call {
	var calls []session.Call
	if s.batch != nil {
		calls = s.batch.Calls
	}
	known := make([]callref.Call, 0, len(s.Earlier)+len(calls))
	for _, r := range s.Earlier {
		known = append(known, callref.Call{ID: r.ID, ModelKey: r.Model})
	}
	for _, c := range calls {
		known = append(known, callref.Call{ID: c.Call.Ref, ModelKey: callref.Key(c.Call.ID), Digest: digest(c.Call)})
	}
	return known
}

// applyApproval records the decision on every call it applies to.
func (s *driver) applyApproval(ctx workflow.Context, ap Approval) (ApprovalOutcome, error) {
	calls, err := s.checkApproval(ap)
	if err != nil {
		return ApprovalOutcome{}, err
	}
	if child, call, ok, _ := s.childCall(ap); ok && !ap.All {
		out := s.forwardApproval(ctx, child, call, ap)
		s.show(ctx)
		return out, nil
	}
	d := ap
	d.Decision = strings.ToLower(strings.TrimSpace(ap.Decision))
	out := ApprovalOutcome{Decision: d.Decision}
	for _, i := range calls {
		before := s.batch.Calls[i].State
		if err := s.batch.Tell(i, session.DecideEvent{Approval: d}); err != nil {
			return out, err // checkApproval let only waiting calls through
		}
		s.callEvents(ctx, i, before, session.DecideEvent{Approval: d})
		c := s.batch.Calls[i].Call
		out.CallIDs = append(out.CallIDs, c.ID)
		out.IDs = append(out.IDs, c.Ref)
	}
	s.personDecided()
	if d.Remember == RememberSession {
		released, err := s.remember(ctx, d, calls)
		if err != nil {
			return out, err
		}
		out.Released = released
	}
	return out, nil
}

// callIDs are the session's ids of the batch's calls at, for messages.
func (s *driver) callIDs(at []int) []string {
	ids := make([]string, len(at))
	for n, i := range at {
		ids[n] = s.batch.Calls[i].Call.Ref
	}
	return ids
}

func (s *driver) reject(ctx workflow.Context, msg string) {
	// The text quotes what the sender sent (a call id, a child's id): cut,
	// so a flood of huge signals cannot grow the state that status shows
	// and continue-as-new carries.
	msg = truncate(msg, maxRejectedLen)
	s.logger(ctx).Warn("signal rejected", "reason", msg)
	s.Rejected = append(s.Rejected, msg)
	if len(s.Rejected) > maxRejected {
		s.Rejected = s.Rejected[len(s.Rejected)-maxRejected:]
	}
}

func (s *driver) pending() []PendingApproval {
	out := []PendingApproval{}
	for _, i := range s.batch.Pending() {
		c := s.batch.Calls[i]
		w := c.State.(session.Waiting)
		out = append(out, PendingApproval{
			CallID: c.Call.ID, ID: c.Call.Ref, Digest: digest(c.Call), Tool: c.Call.Name, Arguments: c.Call.Arguments,
			Reason: w.Reason, Turn: s.Turn, RequestedAt: w.Since, Guardian: w.Guardian,
		})
	}
	return append(out, s.childPendingList()...)
}

func orNone(ids []string) string {
	if len(ids) == 0 {
		return "none"
	}
	return strings.Join(ids, ", ")
}
