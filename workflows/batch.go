package workflows

import (
	"fmt"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/toolspec"
	"github.com/longrun/longrun/untrusted"
)

// runBatch runs the calls of one assistant message and appends exactly one
// result per call to the conversation, in the model's call order. Each
// call is decided first (session.Decide): answered at once, run, or left
// waiting for an approval signal. On cancellation it returns the
// CanceledError after every call has its (synthetic) result.
func (s *driver) runBatch(ctx workflow.Context, calls []conversation.ToolCall) error {
	s.batch = session.NewBatch(calls)
	now := workflow.Now(ctx)
	for i, c := range calls {
		d := session.Decide(c, s.cat, s.engine)
		if d.Verdict != session.Unknown {
			s.load(c.Name) // a deferred tool the model already knows of: send it from now on
		}
		review := d.Verdict == session.Ask && s.reviews(c, d)
		s.tell(ctx, i, session.PolicyEvent{Decision: d, Review: review, Now: now})
	}
	return s.driveBatch(ctx)
}

// resumeBatch takes up a batch carried across continue-as-new: its calls
// keep their results, decisions and waiting state under the same ids.
func (s *driver) resumeBatch(ctx workflow.Context, carried *session.Batch) error {
	s.batch = carried
	before := make([]session.CallState, len(carried.Calls))
	for i, c := range carried.Calls {
		before[i] = c.State
	}
	s.batch.Resume(func(name string) bool { _, ok := s.cat.specs[name]; return ok })
	for i := range s.batch.Calls {
		// A denial taken in, or a call whose tool this run lacks, is
		// finished by Resume itself: the stream hears of it as of any.
		s.callEvents(ctx, i, before[i], session.TakeInEvent{})
	}
	return s.driveBatch(ctx)
}

// driveBatch plans the batch, runs its calls and waits for all of them,
// or, when the run should continue as new while calls only wait for a
// person, returns errSwitch with the batch intact for the next run.
func (s *driver) driveBatch(ctx workflow.Context) error {
	s.batch.Schedule(func(name string) toolspec.Spec { return s.cat.specs[name] })
	s.afterDecision(ctx)
	for i, c := range s.batch.Calls {
		if _, done := c.State.(session.Done); done {
			continue
		}
		cs := s.ref(i)
		workflow.GoNamed(ctx, "call:"+c.Call.Ref, func(ctx workflow.Context) { s.runCall(ctx, cs) })
	}

	switching := func() bool { return s.wantSwitch(ctx) && s.batch.CanCarry() }
	err := workflow.Await(ctx, func() bool { return s.batch.Finished() || switching() })
	if err == nil && !s.batch.Finished() {
		return errSwitch
	}
	if err != nil {
		// Cancelled: every goroutine still finishes its call (a running
		// activity is cancelled and waited for), so wait on a context
		// that is not cancelled.
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		if werr := workflow.Await(dctx, s.batch.Finished); werr != nil {
			return werr
		}
	}
	for _, c := range s.batch.Calls {
		r, _ := c.Result()
		s.Messages = append(s.Messages, conversation.ToolMessage(r))
		if r.Reason != conversation.ReasonRan && r.Content != "" {
			// What failed, not only that it did: the log is often all an
			// operator (or a failed test) has.
			s.logger(ctx).Info("tool call", "id", c.Call.Ref, "call_id", c.Call.ID, "tool", c.Call.Name, "reason", r.Reason,
				"detail", logDetail(r.Content))
			continue
		}
		s.logger(ctx).Info("tool call", "id", c.Call.Ref, "call_id", c.Call.ID, "tool", c.Call.Name, "reason", r.Reason)
	}
	s.recordBatch()
	s.batch = nil
	if err != nil {
		return err
	}
	s.setPhase(ctx, PhaseRunning)
	return nil
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

// One call's life as the workflow drives it: its goroutine asks the
// batch (session.Batch) where the call is and does what that state
// needs, until the call has its result.

// callRef is one call of the batch as the code that runs it reaches it:
// its place in the session.Batch and its tool. It holds no state of the
// call's own: that is the batch's.
type callRef struct {
	b    *session.Batch
	i    int
	spec toolspec.Spec
}

// call is the call as it is now (a prepared call's arguments are the
// prepared ones).
func (c callRef) call() conversation.ToolCall { return c.b.Calls[c.i].Call }

// state is where the call is (session.CallState).
func (c callRef) state() session.CallState { return c.b.Calls[c.i].State }

func (c callRef) readOnlySandbox() bool  { return c.b.Calls[c.i].ReadOnlySandbox() }
func (c callRef) approvedByPerson() bool { return c.b.Calls[c.i].ApprovedByPerson() }

// ref is call i of the current batch.
func (s *driver) ref(i int) callRef {
	return callRef{b: s.batch, i: i, spec: s.cat.specs[s.batch.Calls[i].Call.Name]}
}

// tell tells the batch what happened to call i (session.Batch.Tell). The
// driver only ever sends an event the call's state allows, so a refusal
// is a bug, never a person's input: it stops the workflow task.
func (s *driver) tell(ctx workflow.Context, i int, ev session.Event) {
	before := s.batch.Calls[i].State
	if err := s.batch.Tell(i, ev); err != nil {
		panic(fmt.Sprintf("batch: %v", err))
	}
	s.callEvents(ctx, i, before, ev)
}

// runCall is one call's goroutine: it asks the batch where the call is
// and does what that state needs (prepare it, have the guardian review
// it, wait for a person, run it) until the call is done.
func (s *driver) runCall(ctx workflow.Context, cs callRef) {
	for {
		switch cs.state().(type) {
		case session.Preparing:
			s.prepare(ctx, cs)
		case session.Reviewing:
			s.review(ctx, cs)
		case session.Waiting:
			s.awaitApproval(ctx, cs)
		case session.Decided:
			s.tell(ctx, cs.i, session.TakeInEvent{})
			s.afterDecision(ctx)
		case session.Approved:
			s.runApproved(ctx, cs)
		default:
			return // done (a running call is the activity's, awaited in runApproved)
		}
	}
}

// stop answers a call stopped before it started: the turn was
// interrupted or the session cancelled.
func (s *driver) stop(ctx workflow.Context, cs callRef) {
	s.tell(ctx, cs.i, session.StopEvent{Interrupted: s.interrupted})
}

// runApproved waits for the call's turn in the plan, runs it and records
// its result.
func (s *driver) runApproved(ctx workflow.Context, cs callRef) {
	if err := s.admit(ctx, cs); err != nil {
		s.stop(ctx, cs)
		return
	}
	defer s.release()
	s.tell(ctx, cs.i, session.StartEvent{})
	s.lastTool = s.callSummary(cs)
	res, err := s.dispatch(ctx, cs)
	s.noteCall(cs, res, err)
	if err == nil {
		s.recordFiles(res.Files)
	}
	s.recordRun(ctx, cs, res, err)
}

// awaitApproval waits for a person's decision on cs, up to the approval
// timeout; the decision itself is taken in by runCall.
func (s *driver) awaitApproval(ctx workflow.Context, cs callRef) {
	decided, err := s.awaitDecision(ctx, cs)
	switch {
	case err != nil:
		s.stop(ctx, cs)
		return
	case !decided:
		s.tell(ctx, cs.i, session.TimeoutEvent{After: time.Duration(s.in.ApprovalTimeout)})
		s.afterDecision(ctx)
	}
}

// recordRun tells the batch what running (or preparing) cs gave.
func (s *driver) recordRun(ctx workflow.Context, cs callRef, res toolspec.Result, err error) {
	var r conversation.ToolResult
	switch {
	case err == nil:
		r = conversation.ToolResult{Content: res.Content, IsError: res.IsError, Reason: conversation.ReasonRan,
			ContentRef: res.ContentRef, ContentBytes: res.ContentBytes}
		if res.IsError {
			r.Reason = conversation.ReasonFailed
		}
	case ctx.Err() != nil && s.interrupted:
		r = session.AnswerInterruptedWhileRunning.Result(session.Facts{})
	case ctx.Err() != nil:
		r = session.AnswerCancelledWhileRunning.Result(session.Facts{})
	default:
		answer := session.AnswerFailed
		if s.workerGone(cs, err) {
			answer = session.AnswerWorkerLost
		}
		r = answer.Result(session.Facts{Tool: cs.call().Name, Detail: rootMessage(err)})
		s.LastError, s.LastErrorType = fmt.Sprintf("turn %d: %s %s: %s", s.Turn, cs.call().Name, cs.call().Ref, rootMessage(err)), string(answer.Reason())
	}
	s.tell(ctx, cs.i, session.RanEvent{Result: r})
}

// admit waits until the batch plan lets cs start: every call it depends on
// is done and the pool has a free slot. Among calls ready at once the
// model's order goes first (session.CanStart).
func (s *driver) admit(ctx workflow.Context, cs callRef) error {
	s.batch.Queue(cs.i)
	err := workflow.Await(ctx, func() bool { return s.batch.CanStart(cs.i, s.running, s.limits.Parallel()) })
	s.batch.Unqueue(cs.i)
	if err != nil {
		return err
	}
	s.running++
	return nil
}

func (s *driver) release() { s.running-- }

// recordFiles keeps the stale-write guard's record: the latest hash of
// every file a tool read or wrote, or none for a deleted one.
func (s *driver) recordFiles(files []toolspec.FileVersion) {
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
func (s *driver) awaitDecision(ctx workflow.Context, cs callRef) (decided bool, err error) {
	cond := func() bool { _, waiting := cs.state().(session.Waiting); return !waiting }
	timeout := time.Duration(s.in.ApprovalTimeout)
	if timeout <= 0 {
		return true, workflow.Await(ctx, cond)
	}
	if s.in.Resume != nil {
		// A call carried across continue-as-new has waited already.
		if w, ok := cs.state().(session.Waiting); ok {
			timeout -= workflow.Now(ctx).Sub(w.Since)
		}
		if cond() {
			return true, nil
		}
		if timeout <= 0 {
			return false, nil
		}
	}
	return workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{
		Timeout:      timeout,
		TimerOptions: workflow.TimerOptions{Summary: fmt.Sprintf("approval timeout: %s %s (%s)", cs.call().Name, cs.call().Ref, timeout)},
	}, cond)
}

// afterDecision shows whether calls still wait for a person.
func (s *driver) afterDecision(ctx workflow.Context) {
	if !s.batch.AwaitsPerson() {
		s.setPhase(ctx, PhaseRunning)
	} else {
		s.setPhase(ctx, PhaseWaitingApproval)
	}
}

// callSummary labels the call's activity in the Web UI, as its tool
// declares: "shell: go test ./...".
func (s *driver) callSummary(cs callRef) string {
	return toolspec.CallSummary(cs.call().Name, cs.spec, cs.call().Arguments)
}

// prepare completes a call whose tool prepares its calls
// (toolspec.Spec.Prepares) before anyone decides it: lsp_rename's arguments
// get the patch the rename is, so the person (or the guardian) approves
// the patch itself and the run applies exactly it. The call is not
// offered for approval while it is prepared. Unless it goes on, it has
// its result (the tool's refusal, or the failure). Which calls are prepared is the tool's declaration, never its
// name.
func (s *driver) prepare(ctx workflow.Context, cs callRef) {
	// The calls before it in the plan finish first: a rename computed
	// before an earlier edit of the same files lands would be stale.
	if err := workflow.Await(ctx, func() bool { return s.batch.DepsDone(cs.i) }); err != nil {
		s.stop(ctx, cs)
		s.afterDecision(ctx)
		return
	}
	call := cs.call()
	req := activities.ToolRequest{
		CallID: call.ID, Name: call.Name, Arguments: []byte(call.Arguments), WorkDir: s.in.WorkDir,
		Prepare: true,
	}
	s.inCheckout(&req)
	res, err := s.toolCall(ctx, cs, req, false)
	if err == nil {
		// The files the preparation read are the ones the prepared call
		// may change: the stale-write guard holds them to these versions.
		s.recordFiles(res.Files)
	}
	if err != nil || res.IsError {
		s.recordRun(ctx, cs, res, err)
	} else {
		s.tell(ctx, cs.i, session.PreparedEvent{Arguments: string(res.Prepared)})
	}
	s.afterDecision(ctx)
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
