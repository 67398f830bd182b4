package session

import (
	"errors"
	"fmt"
	"time"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/toolspec"
)

// Batch is the calls of one model reply, from the policy's verdict to
// each call's one result, as a pure state machine. Each call's state is
// one value (CallState); every change is a method named for the event
// that causes it, and an event the state does not allow is an error that
// changes nothing. The workflow asks the batch what a call needs next
// and tells it what happened; continue-as-new carries the Batch as it is
// (State.Batch).
type Batch struct {
	Calls []Call
}

// Call is one call of a batch: the model's call, how the permission
// engine saw it, and its state.
type Call struct {
	Call  conversation.ToolCall
	Perm  permission.Call
	State CallState
	// deps are the calls it waits for in the batch plan and queued says
	// it waits for them or a pool slot: the schedule, computed again in
	// each run (Schedule), never carried.
	deps   []int
	queued bool
}

// CallState is where one call is in its life: Proposed, Preparing,
// Reviewing, Waiting, Decided, Approved, Running or Done.
type CallState interface {
	// Name is the state's name, as the carried JSON and messages show it.
	Name() string
}

// Proposed is a call of the model's reply the policy has not judged yet.
type Proposed struct{}

// Preparing is a call whose tool completes its arguments before anyone
// decides it (toolspec.Spec.Prepares); Then is where it goes once prepared.
// Nobody may decide it before it is shown.
type Preparing struct{ Then CallState }

// Reviewing is a call the guardian judges before a person is asked.
type Reviewing struct {
	Reason string // why the policy asks
}

// Waiting is a call that waits for a person's decision.
type Waiting struct {
	Reason   string
	Since    time.Time         // when a person was asked: the approval timeout runs from here
	Guardian *guardian.Verdict // the guardian's, when it could not decide
}

// Decided is a waiting call a decision has reached (a person's, or a
// remembered rule's) that its goroutine has not taken in yet (TakeIn).
type Decided struct {
	By       Approver
	Decision Approval
}

// Approved is a call that may run when the batch plan admits it.
type Approved struct {
	By       Approver
	Decision *Approval // nil when the policy allowed it without asking
	// ReadOnlySandbox: it runs in the read-only sandbox, as a call nobody
	// approved (the read-only classifier or the guardian let it run).
	ReadOnlySandbox bool
}

// Running is a call whose activity was scheduled: it cannot be carried
// across continue-as-new.
type Running struct {
	Approved
	WorkerLost bool // the worker it had to run on is gone (background jobs)
}

// Done is a call with its result.
type Done struct {
	Result   conversation.ToolResult
	Decision *Approval // the decision on it, if one was made
}

// guardianFeedbackPrefix starts the feedback of the guardian's approval:
// its reason follows.
const guardianFeedbackPrefix = "guardian: "

// Approver is who let a call run.
type Approver string

// Approvers.
const (
	ByPolicy   Approver = "policy"   // the profile or a rule allowed it without asking
	ByPerson   Approver = "person"   // a person approved this very call
	ByRule     Approver = "rule"     // a rule a person remembered released it
	ByGuardian Approver = "guardian" // the guardian approved it
)

// Name is "proposed", and so on: each state's name, as messages and the
// table test show it.
func (Proposed) Name() string  { return "proposed" }
func (Preparing) Name() string { return "preparing" }
func (Reviewing) Name() string { return "reviewing" }
func (Waiting) Name() string   { return "waiting" }
func (Decided) Name() string   { return "decided" }
func (Approved) Name() string  { return "approved" }
func (Running) Name() string   { return "running" }
func (Done) Name() string      { return "done" }

// Errors of a forbidden event.
var (
	ErrUnknownCall = errors.New("no such call in the batch")
	ErrNotAllowed  = errors.New("not allowed in this state")
)

// NewBatch is the calls of a model reply, none judged yet.
func NewBatch(calls []conversation.ToolCall) *Batch {
	b := &Batch{Calls: make([]Call, len(calls))}
	for i, c := range calls {
		b.Calls[i] = Call{Call: c, State: Proposed{}}
	}
	return b
}

func (b *Batch) at(i int) (*Call, error) {
	if b == nil || i < 0 || i >= len(b.Calls) {
		return nil, fmt.Errorf("call %d: %w", i, ErrUnknownCall)
	}
	return &b.Calls[i], nil
}

func forbidden(c *Call, event string) error {
	return fmt.Errorf("call %s: %s while %s: %w", c.Call.Ref, event, c.State.Name(), ErrNotAllowed)
}

// finish gives c its result under its own ids.
func (c *Call) finish(r conversation.ToolResult, d *Approval) {
	r.CallID, r.Ref, r.Name = c.Call.ID, c.Call.Ref, c.Call.Name
	c.State = Done{Result: r, Decision: d}
}

// Policy is the policy's verdict (Decide): answered at once, allowed, or
// asked about, of a person or first of the guardian when review says so.
func (b *Batch) Policy(i int, d Decision, review bool, now time.Time) error {
	c, err := b.at(i)
	if err != nil {
		return err
	}
	if _, ok := c.State.(Proposed); !ok {
		return forbidden(c, "a policy verdict")
	}
	c.Perm = d.Perm
	switch d.Verdict {
	case Run:
		c.State = Approved{By: ByPolicy, ReadOnlySandbox: d.ReadOnlySandbox}
	case Ask:
		if review {
			c.State = Reviewing{Reason: d.Why}
		} else {
			c.State = Waiting{Reason: d.Why, Since: now}
		}
	default:
		c.finish(*d.Result, nil)
	}
	return nil
}

// Schedule computes the batch plan (Plan) from each call's tool and
// marks the calls its tool prepares: done first in each run, since a
// plan is never carried. spec is the session's tool of a name.
func (b *Batch) Schedule(spec func(name string) toolspec.Spec) {
	plan := make([]PlannedCall, len(b.Calls))
	for i, c := range b.Calls {
		plan[i] = PlanFor(spec(c.Call.Name), c.Call.Arguments)
	}
	for i, deps := range Plan(plan) {
		c := &b.Calls[i]
		c.deps, c.queued = deps, false
		if _, done := c.State.(Done); !done && spec(c.Call.Name).Prepares {
			if _, already := c.State.(Preparing); !already {
				c.State = Preparing{Then: c.State}
			}
		}
	}
}

// Prepared is its tool's completion of a prepared call: the arguments
// the person (or the guardian) now decides.
func (b *Batch) Prepared(i int, args string) error {
	c, err := b.at(i)
	if err != nil {
		return err
	}
	p, ok := c.State.(Preparing)
	if !ok {
		return forbidden(c, "a preparation")
	}
	c.Call.Arguments = args
	c.State = p.Then
	return nil
}

// Review is the guardian's verdict on a call in review: an approval lets
// it run as a call nobody approved (read-only sandbox, no control file),
// a denial answers it, and anything else asks a person from now on.
func (b *Batch) Review(i int, v guardian.Verdict, now time.Time) error {
	c, err := b.at(i)
	if err != nil {
		return err
	}
	r, ok := c.State.(Reviewing)
	if !ok {
		return forbidden(c, "a guardian verdict")
	}
	switch v.Decision {
	case guardian.Approve:
		ap := Approval{CallID: c.Call.ID, ID: c.Call.Ref, Decision: DecisionApprove, Feedback: guardianFeedbackPrefix + v.Reason}
		c.State = Approved{By: ByGuardian, Decision: &ap, ReadOnlySandbox: true}
	case guardian.Deny:
		ap := Approval{CallID: c.Call.ID, ID: c.Call.Ref, Decision: DecisionDeny, Feedback: v.Reason}
		c.finish(conversation.ToolResult{Content: GuardianDenialText(v), IsError: true, Reason: conversation.ReasonDenied}, &ap)
	default:
		c.State = Waiting{Reason: fmt.Sprintf("%s; the guardian asks a person: %s", r.Reason, DescribeVerdict(v)), Since: now, Guardian: &v}
	}
	return nil
}

// Decide is a person's decision on a waiting call (ap.Decision approve
// or deny). Its goroutine takes it in (TakeIn).
func (b *Batch) Decide(i int, ap Approval) error {
	c, err := b.at(i)
	if err != nil {
		return err
	}
	if _, ok := c.State.(Waiting); !ok {
		return forbidden(c, "a decision")
	}
	if ap.Decision != DecisionApprove && ap.Decision != DecisionDeny {
		return fmt.Errorf("call %s: decision %q is not %q or %q", c.Call.Ref, ap.Decision, DecisionApprove, DecisionDeny)
	}
	ap.ID, ap.CallID = c.Call.Ref, c.Call.ID // the call it applied to, whatever named it
	c.State = Decided{By: ByPerson, Decision: ap}
	return nil
}

// Release approves a waiting call by a rule a person remembered: not a
// person's look at this very call. A call still being prepared is
// released once it is shown.
func (b *Batch) Release(i int) error {
	c, err := b.at(i)
	if err != nil {
		return err
	}
	ap := Approval{CallID: c.Call.ID, ID: c.Call.Ref, Decision: DecisionApprove, Feedback: "released by a remembered rule"}
	switch st := c.State.(type) {
	case Waiting:
		c.State = Decided{By: ByRule, Decision: ap}
	case Preparing:
		if _, ok := st.Then.(Waiting); !ok {
			return forbidden(c, "a release")
		}
		c.State = Preparing{Then: Decided{By: ByRule, Decision: ap}}
	default:
		return forbidden(c, "a release")
	}
	return nil
}

// TakeIn acts on a decision: an approval lets the call run, a denial
// answers it with the person's feedback.
func (b *Batch) TakeIn(i int) error {
	c, err := b.at(i)
	if err != nil {
		return err
	}
	d, ok := c.State.(Decided)
	if !ok {
		return forbidden(c, "taking in a decision")
	}
	ap := d.Decision
	if ap.Decision == DecisionDeny {
		c.finish(AnswerDenied.Result(Facts{Feedback: ap.Feedback}), &ap)
		return nil
	}
	c.State = Approved{By: d.By, Decision: &ap}
	return nil
}

// Timeout answers a call nobody decided within timeout.
func (b *Batch) Timeout(i int, timeout time.Duration) error {
	c, err := b.at(i)
	if err != nil {
		return err
	}
	if _, ok := c.State.(Waiting); !ok {
		return forbidden(c, "the approval timeout")
	}
	c.finish(AnswerTimeout.Result(Facts{Timeout: timeout}), nil)
	return nil
}

// Stop answers a call that has not started when its turn is interrupted
// (interrupted) or the session cancelled, saying what it waited for.
func (b *Batch) Stop(i int, interrupted bool) error {
	c, err := b.at(i)
	if err != nil {
		return err
	}
	waited := "waited for the calls before it"
	switch c.State.(type) {
	case Waiting, Reviewing, Decided:
		waited = "waited for approval"
	case Done, Running:
		return forbidden(c, "a stop")
	}
	var d *Approval
	if dd, ok := c.State.(Decided); ok {
		d = &dd.Decision
	}
	if interrupted {
		c.finish(AnswerInterruptedBeforeRun.Result(Facts{}), d)
	} else {
		c.finish(AnswerCancelledBeforeRun.Result(Facts{Waited: waited}), d)
	}
	return nil
}

// Start is the call's activity (or the session's own answer) starting.
func (b *Batch) Start(i int) error {
	c, err := b.at(i)
	if err != nil {
		return err
	}
	a, ok := c.State.(Approved)
	if !ok {
		return forbidden(c, "a start")
	}
	c.State, c.queued = Running{Approved: a}, false
	return nil
}

// WorkerLost is a running call finding the worker it must run on gone.
func (b *Batch) WorkerLost(i int) error {
	c, err := b.at(i)
	if err != nil {
		return err
	}
	r, ok := c.State.(Running)
	if !ok {
		return forbidden(c, "a lost worker")
	}
	r.WorkerLost = true
	c.State = r
	return nil
}

// Ran is the result of a running call, or of the preparation of one
// (its tool refused, it failed or it was stopped in flight). A call
// whose worker was lost says so whatever its tool answered.
func (b *Batch) Ran(i int, r conversation.ToolResult) error {
	c, err := b.at(i)
	if err != nil {
		return err
	}
	switch st := c.State.(type) {
	case Running:
		if st.WorkerLost && (r.Reason == conversation.ReasonRan || r.Reason == conversation.ReasonFailed) {
			r.Reason = conversation.ReasonWorkerLost
		}
		c.finish(r, st.Decision)
	case Preparing:
		c.finish(r, nil)
	default:
		return forbidden(c, "a result")
	}
	return nil
}

// Resume takes up a batch carried across continue-as-new (the run
// switch): a decision taken in the task that switched runs, before its
// goroutine took it in, is taken in now, and a call whose tool the new
// run lacks is answered. known reports whether the run has a tool.
func (b *Batch) Resume(known func(name string) bool) {
	for i := range b.Calls {
		c := &b.Calls[i]
		if _, ok := c.State.(Decided); ok {
			_ = b.TakeIn(i)
		}
		if _, done := c.State.(Done); !done && !known(c.Call.Name) {
			c.finish(AnswerUnknownAfterSwitch.Result(Facts{Tool: c.Call.Name}), nil)
		}
	}
}

// Queue marks a call as waiting for the calls before it or a pool slot;
// Unqueue takes the mark off (it was stopped).
func (b *Batch) Queue(i int)   { b.Calls[i].queued = true }
func (b *Batch) Unqueue(i int) { b.Calls[i].queued = false }

// CanStart reports whether call i may start now (session.CanStart):
// every call it depends on is done and the pool has a free slot.
func (b *Batch) CanStart(i, running, max int) bool {
	slots := make([]Slot, len(b.Calls))
	for j, c := range b.Calls {
		_, done := c.State.(Done)
		slots[j] = Slot{Deps: c.deps, Done: done, Queued: c.queued}
	}
	return CanStart(slots, i, running, max)
}

// DepsDone reports whether every call i waits for in the plan is done.
func (b *Batch) DepsDone(i int) bool {
	for _, d := range b.Calls[i].deps {
		if _, done := b.Calls[d].State.(Done); !done {
			return false
		}
	}
	return true
}

// Finished reports whether every call has its result.
func (b *Batch) Finished() bool {
	for _, c := range b.Calls {
		if _, done := c.State.(Done); !done {
			return false
		}
	}
	return true
}

// Pending are the calls a person may decide now, in the model's order.
func (b *Batch) Pending() []int {
	var out []int
	if b == nil {
		return out
	}
	for i, c := range b.Calls {
		if _, ok := c.State.(Waiting); ok {
			out = append(out, i)
		}
	}
	return out
}

// AwaitsPerson reports whether a call waits for a person or for its
// goroutine to take a person's decision in: the session shows it waits
// for approval until every decision is acted on.
func (b *Batch) AwaitsPerson() bool {
	for _, c := range b.Calls {
		switch c.State.(type) {
		case Waiting, Decided:
			return true
		}
	}
	return false
}

// CanCarry reports whether the batch may be carried into a new run: no
// call is running or in review, no preparation is in flight, and some
// call waits for a person (otherwise the batch ends soon and the switch
// waits for it).
func (b *Batch) CanCarry() bool {
	waiting := false
	for i, c := range b.Calls {
		switch c.State.(type) {
		case Done:
		case Preparing:
			if b.DepsDone(i) {
				return false // its preparation is an activity in flight
			}
			// It waits for the calls before it, which the next run
			// carries; it is prepared there.
		case Waiting, Decided:
			waiting = true
		case Approved:
			// Not started: it waits for its turn in the plan, which the
			// next run computes again.
		default:
			return false
		}
	}
	return waiting
}

// ReadOnlySandbox reports whether the call runs as a call nobody
// approved.
func (c Call) ReadOnlySandbox() bool {
	switch st := c.State.(type) {
	case Approved:
		return st.ReadOnlySandbox
	case Running:
		return st.ReadOnlySandbox
	}
	return false
}

// ApprovedByPerson reports whether a person approved this very call
// (one by one or with "all"); a call a rule or the guardian released
// is not.
func (c Call) ApprovedByPerson() bool {
	switch st := c.State.(type) {
	case Approved:
		return st.By == ByPerson
	case Running:
		return st.By == ByPerson
	}
	return false
}

// Decision is the decision made on the call, if any.
func (c Call) Decision() *Approval {
	switch st := c.State.(type) {
	case Decided:
		return &st.Decision
	case Approved:
		return st.Decision
	case Running:
		return st.Decision
	case Done:
		return st.Decision
	}
	return nil
}

// Result is the call's result once it is done.
func (c Call) Result() (conversation.ToolResult, bool) {
	d, ok := c.State.(Done)
	return d.Result, ok
}
