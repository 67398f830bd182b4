package workflows

import (
	"fmt"
	"sort"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/untrusted"
)

type callPhase int

const (
	stateWaiting   callPhase = iota // waiting for approval
	stateRunning                    // approved (or needing none): runs when the plan admits it
	stateDone                       // it has its result
	stateReviewing                  // the guardian judges it before a person is asked
)

// callState tracks one tool call of the current batch.
type callState struct {
	call        conversation.ToolCall
	spec        tools.Spec
	state       callPhase
	why         string    // why it needs approval
	decision    *Approval // set by the approval signal
	requestedAt time.Time
	result      *conversation.ToolResult
	perm        permission.Call // how the permission engine saw it
	index       int             // its place in the model's call order
	deps        []int           // the batch plan: calls it waits for
	queued      bool            // approved (or needing none), waiting for its deps or a pool slot
	workerLost  bool            // the worker it had to run on is gone (background jobs)
	started     bool            // its activity was scheduled: it cannot be carried across continue-as-new
	// readOnlySandbox: only the read-only classifier allowed it, so it
	// runs in the read-only sandbox (permission.Decision.Classified).
	readOnlySandbox bool
	// released: approved by a remembered rule or by the guardian, not by
	// a person's decision on this very call.
	released bool
	verdict  *guardian.Verdict // the guardian's, when it judged the call
	// preparing: its tool completes its arguments (prepare); nobody may
	// decide it before they are shown.
	preparing bool
}

// approvedByPerson reports whether a person approved this very call (one
// by one or with "all"); a call a remembered rule released is not.
func (c *callState) approvedByPerson() bool {
	return c.decision != nil && c.decision.Decision == DecisionApprove && !c.released
}

func (c *callState) finish(r conversation.ToolResult) {
	r.CallID, r.Ref, r.Name = c.call.ID, c.call.Ref, c.call.Name
	c.result = &r
	c.state = stateDone
}

// settle finishes the call with one of the session's answers.
func (c *callState) settle(a session.Answer, f session.Facts) {
	c.finish(a.Result(f))
}

// carried is the call as continue-as-new carries it.
func (c *callState) carried() CarriedCall {
	cc := CarriedCall{Call: c.call, Why: c.why, RequestedAt: c.requestedAt, Decision: c.decision, Result: c.result, Perm: c.perm,
		ReadOnlySandbox: c.readOnlySandbox, Released: c.released, Guardian: c.verdict}
	switch {
	case c.state == stateDone:
		cc.State = session.CarriedDone
	case c.state == stateWaiting && c.decision == nil:
		cc.State = session.CarriedWaiting
	default:
		cc.State = session.CarriedApproved
	}
	return cc
}

// Spec is the tool the model may call by name (session.Catalog): a hidden
// tool is the runtime's, never the model's.
func (s *driver) Spec(name string) (tools.Spec, bool) {
	sp, ok := s.specs[name]
	return sp, ok && sp.Exposure != tools.ExposureHidden
}

// Names are the session's tool names, sorted (session.Catalog).
func (s *driver) Names() []string {
	names := make([]string, 0, len(s.specs))
	for n := range s.specs {
		names = append(names, n)
	}
	sort.Strings(names) // map order is random; the text must replay
	return names
}

// runBatch runs the calls of one assistant message and appends exactly one
// result per call to the conversation, in the model's call order. Each
// call is decided first (session.Decide): answered at once, run, or left
// waiting for an approval signal. On cancellation it returns the
// CanceledError after every call has its (synthetic) result.
func (s *driver) runBatch(ctx workflow.Context, calls []conversation.ToolCall) error {
	s.batch = make([]*callState, len(calls))
	now := workflow.Now(ctx)
	for i, c := range calls {
		cs := &callState{call: c, requestedAt: now, index: i}
		s.batch[i] = cs
		d := session.Decide(c, s, s.engine)
		if d.Verdict != session.Unknown {
			cs.spec = s.specs[c.Name]
			s.load(c.Name) // a deferred tool the model already knows of: send it from now on
		}
		cs.perm = d.Perm
		switch d.Verdict {
		case session.Run:
			cs.state, cs.readOnlySandbox = stateRunning, d.ReadOnlySandbox
		case session.Ask:
			cs.state, cs.why = stateWaiting, d.Why
			s.toGuardian(cs, d.Permission)
		default:
			cs.finish(*d.Result)
		}
	}
	return s.driveBatch(ctx)
}

// resumeBatch takes up a batch carried across continue-as-new: its calls
// keep their results, decisions and waiting state under the same ids.
func (s *driver) resumeBatch(ctx workflow.Context, carried []CarriedCall) error {
	s.batch = make([]*callState, len(carried))
	for i, c := range carried {
		cs := &callState{call: c.Call, spec: s.specs[c.Call.Name], why: c.Why, requestedAt: c.RequestedAt,
			decision: c.Decision, result: c.Result, perm: c.Perm, index: i,
			readOnlySandbox: c.ReadOnlySandbox, released: c.Released, verdict: c.Guardian}
		switch c.State {
		case session.CarriedDone:
			cs.state = stateDone
		case session.CarriedWaiting:
			cs.state = stateWaiting
		default:
			cs.state = stateRunning
		}
		if cs.state == stateRunning && cs.decision != nil && cs.decision.Decision == DecisionDeny {
			// Decided in the task that switched runs, before its
			// goroutine took the decision in: a denial stays a denial.
			cs.settle(session.AnswerDenied, session.Facts{Feedback: cs.decision.Feedback})
		}
		if cs.state != stateDone && cs.spec.Name == "" {
			// The new run's catalog has no such tool any more.
			cs.settle(session.AnswerUnknownAfterSwitch, session.Facts{Tool: c.Call.Name})
		}
		s.batch[i] = cs
	}
	return s.driveBatch(ctx)
}

// driveBatch plans the batch, runs its calls and waits for all of them,
// or, when the run should continue as new while calls only wait for a
// person, returns errSwitch with the batch intact for the next run.
func (s *driver) driveBatch(ctx workflow.Context) error {
	plan := make([]session.PlannedCall, len(s.batch))
	for i, cs := range s.batch {
		plan[i] = session.PlanFor(cs.spec, cs.call.Arguments)
	}
	for i, deps := range session.Plan(plan) {
		s.batch[i].deps = deps
	}
	for _, cs := range s.batch {
		// Shown for approval (and notified) only once its tool has
		// completed it: see prepare.
		cs.preparing = cs.spec.Prepares && cs.state != stateDone
	}
	s.afterDecision(ctx)
	for _, cs := range s.batch {
		if cs.state == stateDone {
			continue
		}
		workflow.GoNamed(ctx, "call:"+cs.call.Ref, func(ctx workflow.Context) { s.runCall(ctx, cs) })
	}

	switching := func() bool { return s.wantSwitch(ctx) && s.canCarryBatch() }
	err := workflow.Await(ctx, func() bool { return s.batchDone() || switching() })
	if err == nil && !s.batchDone() {
		return errSwitch
	}
	if err != nil {
		// Cancelled: every goroutine still finishes its call (a running
		// activity is cancelled and waited for), so wait on a context
		// that is not cancelled.
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		if werr := workflow.Await(dctx, s.batchDone); werr != nil {
			return werr
		}
	}
	for _, cs := range s.batch {
		s.Messages = append(s.Messages, conversation.ToolMessage(*cs.result))
		if r := cs.result; r.Reason != conversation.ReasonRan && r.Content != "" {
			// What failed, not only that it did: the log is often all an
			// operator (or a failed test) has.
			s.logger(ctx).Info("tool call", "id", cs.call.Ref, "call_id", cs.call.ID, "tool", cs.call.Name, "reason", r.Reason,
				"detail", logDetail(r.Content))
			continue
		}
		s.logger(ctx).Info("tool call", "id", cs.call.Ref, "call_id", cs.call.ID, "tool", cs.call.Name, "reason", cs.result.Reason)
	}
	s.recordBatch()
	s.batch = nil
	if err != nil {
		return err
	}
	s.setPhase(ctx, PhaseRunning)
	return nil
}

// runCall is one call's goroutine: have its tool prepare it if it says
// so, wait for its decision if it needs one, wait for its turn in the
// plan, run it, record its result.
func (s *driver) runCall(ctx workflow.Context, cs *callState) {
	if !s.prepare(ctx, cs) {
		return
	}
	if cs.state == stateReviewing && s.review(ctx, cs) {
		return // the guardian denied it
	}
	if cs.state == stateWaiting && !s.awaitApproval(ctx, cs) {
		return
	}
	if err := s.admit(ctx, cs); err != nil {
		cs.finish(s.notRun("waited for the calls before it"))
		return
	}
	defer s.release()
	cs.started = true
	s.lastTool = s.callSummary(cs)
	res, err := s.dispatch(ctx, cs)
	s.noteCall(cs, res, err)
	if err == nil {
		s.recordFiles(res.Files)
	}
	s.recordRun(ctx, cs, res, err)
}

// awaitApproval waits for a person's decision on cs and reports whether
// it may run; otherwise cs has its result (denied, timed out, cancelled).
func (s *driver) awaitApproval(ctx workflow.Context, cs *callState) bool {
	decided, err := s.awaitDecision(ctx, cs)
	switch {
	case err != nil:
		cs.finish(s.notRun("waited for approval"))
		return false
	case !decided:
		cs.settle(session.AnswerTimeout, session.Facts{Timeout: time.Duration(s.in.ApprovalTimeout)})
	case cs.decision.Decision == DecisionDeny:
		cs.settle(session.AnswerDenied, session.Facts{Feedback: cs.decision.Feedback})
	default:
		cs.state = stateRunning
	}
	s.afterDecision(ctx)
	return cs.state == stateRunning
}

// recordRun turns what running cs gave into its result.
func (s *driver) recordRun(ctx workflow.Context, cs *callState, res tools.Result, err error) {
	switch {
	case err == nil:
		r := conversation.ToolResult{Content: res.Content, IsError: res.IsError, Reason: conversation.ReasonRan,
			ContentRef: res.ContentRef, ContentBytes: res.ContentBytes}
		switch {
		case cs.workerLost:
			r.Reason = conversation.ReasonWorkerLost
		case res.IsError:
			r.Reason = conversation.ReasonFailed
		}
		cs.finish(r)
	case ctx.Err() != nil && s.interrupted:
		cs.settle(session.AnswerInterruptedWhileRunning, session.Facts{})
	case ctx.Err() != nil:
		cs.settle(session.AnswerCancelledWhileRunning, session.Facts{})
	default:
		answer := session.AnswerFailed
		if s.workerGone(cs, err) {
			answer = session.AnswerWorkerLost
		}
		cs.settle(answer, session.Facts{Tool: cs.call.Name, Detail: rootMessage(err)})
		s.LastError, s.LastErrorType = fmt.Sprintf("turn %d: %s %s: %s", s.Turn, cs.call.Name, cs.call.Ref, rootMessage(err)), string(answer.Reason())
	}
}

// notRun is the synthetic result of a call stopped before it started.
func (s *driver) notRun(waited string) conversation.ToolResult {
	if s.interrupted {
		return session.AnswerInterruptedBeforeRun.Result(session.Facts{})
	}
	return session.AnswerCancelledBeforeRun.Result(session.Facts{Waited: waited})
}

// admit waits until the batch plan lets cs start: every call it depends on
// is done and the pool has a free slot. Among calls ready at once the
// model's order goes first (session.CanStart).
func (s *driver) admit(ctx workflow.Context, cs *callState) error {
	cs.queued = true
	err := workflow.Await(ctx, func() bool { return s.canStart(cs) })
	cs.queued = false
	if err != nil {
		return err
	}
	s.running++
	return nil
}

func (s *driver) release() { s.running-- }

func (s *driver) canStart(cs *callState) bool {
	slots := make([]session.Slot, len(s.batch))
	for i, c := range s.batch {
		slots[i] = session.Slot{Deps: c.deps, Done: c.state == stateDone, Queued: c.queued}
	}
	return session.CanStart(slots, cs.index, s.running, s.limits.Parallel())
}

// recordFiles keeps the stale-write guard's record: the latest hash of
// every file a tool read or wrote, or none for a deleted one.
func (s *driver) recordFiles(files []tools.FileVersion) {
	for _, f := range files {
		if s.Seen == nil {
			s.Seen = map[string]string{}
		}
		if f.SHA256 == "" {
			delete(s.Seen, f.Path)
		} else {
			s.Seen[f.Path] = f.SHA256
		}
	}
}

// awaitDecision waits for a person's decision on cs, up to the session's
// approval timeout. decided is false when the timeout fired.
func (s *driver) awaitDecision(ctx workflow.Context, cs *callState) (decided bool, err error) {
	cond := func() bool { return cs.decision != nil }
	timeout := time.Duration(s.in.ApprovalTimeout)
	if timeout <= 0 {
		return true, workflow.Await(ctx, cond)
	}
	if s.in.Resume != nil {
		// A call carried across continue-as-new has waited already.
		timeout -= workflow.Now(ctx).Sub(cs.requestedAt)
		if cond() {
			return true, nil
		}
		if timeout <= 0 {
			return false, nil
		}
	}
	return workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{
		Timeout:      timeout,
		TimerOptions: workflow.TimerOptions{Summary: fmt.Sprintf("approval timeout: %s %s (%s)", cs.call.Name, cs.call.Ref, timeout)},
	}, cond)
}

// afterDecision shows whether calls still wait for a person.
func (s *driver) afterDecision(ctx workflow.Context) {
	if !s.hasWaiting() {
		s.setPhase(ctx, PhaseRunning)
	} else {
		s.setPhase(ctx, PhaseWaitingApproval)
	}
}

// callSummary labels the call's activity in the Web UI, as its tool
// declares: "shell: go test ./...".
func (s *driver) callSummary(cs *callState) string {
	return tools.CallSummary(cs.call.Name, cs.spec, cs.call.Arguments)
}

func (s *driver) batchDone() bool {
	for _, c := range s.batch {
		if c.state != stateDone {
			return false
		}
	}
	return true
}

func (s *driver) hasWaiting() bool {
	for _, c := range s.batch {
		if c.state == stateWaiting && !c.preparing {
			return true
		}
	}
	return false
}

// logDetailBytes is how much of a call's result that did not run cleanly
// the worker's log line carries: its end, where a command's exit status
// and the tool's own complaint are.
const logDetailBytes = 400

// logDetail is the end of a result on one line, made visible, saying how
// much came before it.
func logDetail(content string) string {
	if len(content) <= logDetailBytes {
		return untrusted.Line(content)
	}
	cut := len(content) - logDetailBytes
	for cut < len(content) && !utf8.RuneStart(content[cut]) {
		cut++
	}
	return fmt.Sprintf("(%d bytes before) %s", cut, untrusted.Line(content[cut:]))
}
