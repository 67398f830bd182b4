package session

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/permission"
)

// carriedCall is a Call's JSON: the shape recorded histories hold, so a
// batch carried by an earlier version still decodes. "by" is new and
// optional.
type carriedCall struct {
	Call        conversation.ToolCall    `json:"call"`
	State       string                   `json:"state"` // waiting, reviewing, approved or done
	Why         string                   `json:"why,omitempty"`
	RequestedAt time.Time                `json:"requested_at"`
	Decision    *Approval                `json:"decision,omitempty"`
	Result      *conversation.ToolResult `json:"result,omitempty"`
	Perm        permission.Call          `json:"perm"`
	// ReadOnlySandbox and Released keep how the call came to run: allowed
	// by the read-only classifier alone, or released by a remembered rule
	// or the guardian rather than approved by a person.
	ReadOnlySandbox bool              `json:"read_only_sandbox,omitempty"`
	Released        bool              `json:"released,omitempty"`
	Guardian        *guardian.Verdict `json:"guardian,omitempty"`
	By              Approver          `json:"by,omitempty"`
}

// Carried call states, as the JSON names them.
const (
	carriedWaiting   = "waiting"
	carriedReviewing = "reviewing"
	carriedApproved  = "approved"
	carriedDone      = "done"
)

// MarshalJSON writes the batch as the list of its calls.
func (b Batch) MarshalJSON() ([]byte, error) {
	if b.Calls == nil {
		return []byte("[]"), nil
	}
	return json.Marshal(b.Calls)
}

// UnmarshalJSON reads the list of a batch's calls.
func (b *Batch) UnmarshalJSON(data []byte) error {
	return json.Unmarshal(data, &b.Calls)
}

// MarshalJSON writes a call in a state that may be carried: a call
// being prepared is carried as what it becomes once prepared (the next
// run prepares it again), and one the guardian is to review once it is
// prepared is reviewed in the next run. A running call cannot be carried
// (Batch.CanCarry).
func (c Call) MarshalJSON() ([]byte, error) {
	cc := carriedCall{Call: c.Call, Perm: c.Perm}
	st := c.State
	if p, ok := st.(Preparing); ok {
		st = p.Then
	}
	switch s := st.(type) {
	case Waiting:
		cc.State, cc.Why, cc.RequestedAt, cc.Guardian = carriedWaiting, s.Reason, s.Since, s.Guardian
	case Reviewing:
		cc.State, cc.Why = carriedReviewing, s.Reason
	case Decided:
		d := s.Decision
		cc.State, cc.Decision, cc.By, cc.Released = carriedApproved, &d, s.By, s.By != ByPerson
	case Approved:
		cc.State, cc.Decision, cc.By, cc.ReadOnlySandbox = carriedApproved, s.Decision, s.By, s.ReadOnlySandbox
		cc.Released = s.By == ByRule || s.By == ByGuardian
	case Done:
		r := s.Result
		cc.State, cc.Result, cc.Decision = carriedDone, &r, s.Decision
	default:
		return nil, fmt.Errorf("call %s: a call %s cannot be carried across continue-as-new", c.Call.Ref, st.Name())
	}
	return json.Marshal(cc)
}

// UnmarshalJSON reads a carried call. A call carried approved with a
// decision is Decided (Batch.Resume takes it in); one without, allowed by
// the policy.
func (c *Call) UnmarshalJSON(data []byte) error {
	var cc carriedCall
	if err := json.Unmarshal(data, &cc); err != nil {
		return err
	}
	*c = Call{Call: cc.Call, Perm: cc.Perm}
	switch cc.State {
	case carriedWaiting:
		c.State = Waiting{Reason: cc.Why, Since: cc.RequestedAt, Guardian: cc.Guardian}
	case carriedReviewing:
		c.State = Reviewing{Reason: cc.Why}
	case carriedApproved:
		c.State = carriedApproval(cc)
	case carriedDone:
		if cc.Result == nil {
			return fmt.Errorf("carried call %s: done without a result", cc.Call.Ref)
		}
		c.State = Done{Result: *cc.Result, Decision: cc.Decision}
	default:
		return fmt.Errorf("carried call %s: unknown state %q", cc.Call.Ref, cc.State)
	}
	return nil
}

// carriedApproval is the state of a call carried "approved": a denial
// not yet taken in is Decided (Batch.Resume answers it), an approval lets
// it run as it was let.
func carriedApproval(cc carriedCall) CallState {
	if cc.Decision == nil {
		return Approved{By: ByPolicy, ReadOnlySandbox: cc.ReadOnlySandbox}
	}
	by := cc.By
	switch {
	case by != "":
	case cc.Released: // carried before "by" was written
		by = ByRule
	default:
		by = ByPerson
	}
	if cc.Decision.Decision == DecisionDeny {
		return Decided{By: by, Decision: *cc.Decision}
	}
	return Approved{By: by, Decision: cc.Decision, ReadOnlySandbox: cc.ReadOnlySandbox}
}
