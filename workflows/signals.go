package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/session"
)

// signalNames are the session's signals, in the order their goroutines
// start (as they always have: the order is part of how a recorded history
// replays) and drainSignals takes what is buffered of each.
// UpdateApprove comes last: it is not a signal, but the Web UI's and the
// temporal CLI's "signal" with that name would otherwise be dropped
// unseen, so it is taken only to be refused with the right name.
var signalNames = []string{SignalUserMessage, SignalInterrupt, SignalApproval, SignalChildPending, UpdateApprove}

// receiveSignals starts one goroutine per signal that hands every signal,
// for the whole run, to onSignal.
func (s *driver) receiveSignals(ctx workflow.Context) {
	for _, name := range signalNames {
		ch := workflow.GetSignalChannel(ctx, name)
		workflow.GoNamed(ctx, "signal:"+name, func(ctx workflow.Context) {
			for {
				// A raw value always arrives: decoding into the payload's
				// type here would let the SDK drop a payload that does not
				// decode, without a word to anyone.
				var raw converter.RawValue
				if !ch.Receive(ctx, &raw) {
					return
				}
				s.onSignal(ctx, name, raw)
			}
		})
	}
}

// drainSignals takes in signals that arrived but were not handled yet,
// before the run continues as new. It is the same path as receiveSignals,
// so the two cannot judge a signal differently.
func (s *driver) drainSignals(ctx workflow.Context) {
	for _, name := range signalNames {
		ch := workflow.GetSignalChannel(ctx, name)
		for {
			var raw converter.RawValue
			if !ch.ReceiveAsync(&raw) {
				break
			}
			s.onSignal(ctx, name, raw)
		}
	}
}

// onSignal is the one receive path of every signal: it decodes the payload
// and acts on it, or refuses it and lists why in status.rejected_signals.
// Nothing a client sends vanishes unexplained.
func (s *driver) onSignal(ctx workflow.Context, name string, raw converter.RawValue) {
	switch name {
	case SignalUserMessage:
		var m UserMessage
		if err := decodeSignal(raw, &m); err != nil {
			s.reject(ctx, fmt.Sprintf("user-message refused: %v (send {\"text\": \"...\"})", err))
			return
		}
		if strings.TrimSpace(m.Text) == "" {
			s.reject(ctx, "user-message with empty text ignored (send {\"text\": \"...\"})")
			return
		}
		if m.Delivery != "" {
			seen, err := session.TakeDelivery(s.Deliveries, m.Delivery)
			if err != nil {
				s.reject(ctx, "user-message refused: "+err.Error())
				return
			}
			s.Deliveries = seen
		}
		s.Inbox = append(s.Inbox, m.Text)
	case SignalApproval:
		var ap Approval
		if err := decodeSignal(raw, &ap); err != nil {
			s.reject(ctx, fmt.Sprintf("approval signal refused: %v (send {\"call_id\": \"...\", \"decision\": \"approve\"|\"deny\"})", err))
			return
		}
		if _, err := s.applyApproval(ctx, ap); err != nil {
			s.reject(ctx, "approval signal ignored: "+err.Error())
		}
		workflow.SetCurrentDetails(ctx, s.details())
	case SignalChildPending:
		var cp ChildPending
		if err := decodeSignal(raw, &cp); err != nil {
			s.reject(ctx, fmt.Sprintf("child-pending refused: %v", err))
			return
		}
		s.onChildPending(ctx, cp)
	case UpdateApprove:
		s.reject(ctx, fmt.Sprintf("a signal named %q refused: %q is an update, not a signal, so nothing was decided; "+
			"send the %q signal ({\"call_id\": \"...\", \"decision\": \"approve\"|\"deny\"}) or the %q update (longrun approve SESSION CALL_ID)",
			UpdateApprove, UpdateApprove, SignalApproval, UpdateApprove))
	case SignalInterrupt:
		// Any payload (or none, as the UI may send) is accepted.
		if s.cancelTurn == nil {
			s.reject(ctx, "interrupt ignored: no turn is running")
			return
		}
		s.interrupted = true
		s.cancelTurn()
	}
}

// decodeSignal decodes a signal's payload into v. The payload converter is
// the SDK's default, the one the worker's client uses: decoding is a pure
// function of the recorded payload, so it replays the same.
func decodeSignal(raw converter.RawValue, v any) error {
	if raw.Payload() == nil {
		return fmt.Errorf("no payload")
	}
	if err := converter.GetDefaultDataConverter().FromPayload(raw.Payload(), v); err != nil {
		return fmt.Errorf("payload does not decode: %w", err)
	}
	return nil
}

// onChildPending takes a sub-agent's list of waiting calls. Only a child
// this session started and that still runs may report, and the person can
// then answer only the call ids it reported (childCall): anyone can send a
// signal, and a phantom approval on the pending list would ask a person
// to approve something nobody is waiting for.
func (s *driver) onChildPending(ctx workflow.Context, cp ChildPending) {
	if !s.kids.children[cp.Child] {
		if len(cp.Pending) == 0 && s.startedChild(cp.Child) {
			// A finished child's last "nothing waits" may arrive after
			// its result: nothing to show, nothing to refuse.
			return
		}
		s.reject(ctx, fmt.Sprintf("child-pending for %q refused: not a sub-agent this session started and still runs", cp.Child))
		return
	}
	for _, p := range cp.Pending {
		if strings.TrimSpace(p.CallID) == "" {
			s.reject(ctx, fmt.Sprintf("child-pending from %q refused: a waiting call without a call_id", cp.Child))
			return
		}
	}
	if s.kids.pending == nil {
		s.kids.pending = map[string][]PendingApproval{}
	}
	s.kids.pending[cp.Child] = cp.Pending
	s.show(ctx)
}

// startedChild reports whether id names a sub-agent this session started
// at some point (its ids are task-1, task-2, ... in start order).
func (s *driver) startedChild(id string) bool {
	for n := 1; n <= s.Subagents; n++ {
		if id == childID(s.workflowID, n) {
			return true
		}
	}
	return false
}

// childID is the workflow id of a session's n-th sub-agent.
func childID(parent string, n int) string {
	return fmt.Sprintf("%s/task-%d", parent, n)
}
