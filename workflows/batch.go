package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/toolsearch"
)

type callPhase int

const (
	stateWaiting   callPhase = iota // waiting for approval
	stateRunning                    // its activity is scheduled
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
}

// approvedByPerson reports whether a person approved this very call (one
// by one or with "all"); a call a remembered rule released is not.
func (c *callState) approvedByPerson() bool {
	return c.decision != nil && c.decision.Decision == DecisionApprove && !c.released
}

func (c *callState) finish(r conversation.ToolResult) {
	r.CallID, r.Name = c.call.ID, c.call.Name
	c.result = &r
	c.state = stateDone
}

// runBatch runs the calls of one assistant message and appends exactly one
// result per call to the conversation, in the model's call order. Calls
// that cannot run (unknown tool, invalid arguments) are answered at once;
// read-only calls start at once; the rest wait for an approval signal.
// On cancellation it returns the CanceledError after every call has its
// (synthetic) result.
func (s *session) runBatch(ctx workflow.Context, calls []conversation.ToolCall) error {
	s.batch = make([]*callState, len(calls))
	now := workflow.Now(ctx)
	for i, c := range calls {
		cs := &callState{call: c, requestedAt: now, index: i}
		s.batch[i] = cs
		spec, ok := s.specs[c.Name]
		if s.transcript && spec.Exposure == tools.ExposureHidden {
			ok = false // the runtime's, never the model's
		}
		if ok && s.transcript {
			s.load(c.Name) // a deferred tool the model already knows of: send it from now on
		}
		switch {
		case !ok:
			cs.finish(conversation.ToolResult{
				Content: fmt.Sprintf("unknown tool %q; available tools: %s", c.Name, strings.Join(s.toolNames(), ", ")),
				IsError: true, Reason: conversation.ReasonUnknownTool,
			})
		default:
			cs.spec = spec
			if err := tools.ValidateArguments(spec, c.Arguments); err != nil {
				cs.finish(conversation.ToolResult{
					Content: err.Error() + ". Nothing ran; call the tool again with corrected arguments.",
					IsError: true, Reason: conversation.ReasonInvalidArguments,
				})
			} else if s.engine != nil {
				s.decide(cs)
			} else if spec.ReadOnly {
				cs.state = stateRunning
			} else if s.in.Approval == ApproverNone {
				cs.finish(conversation.ToolResult{
					Content: fmt.Sprintf("denied: this session runs unattended (approval: none), so a %s call, which needs approval, was refused without asking anyone. It did not run. "+
						"To allow it, start the session with a person as approver or with a rule allowing it.", c.Name),
					IsError: true, Reason: conversation.ReasonDeniedByPolicy,
				})
			} else {
				cs.state = stateWaiting
				cs.why = fmt.Sprintf("%s changes the workspace or runs commands; it needs approval", c.Name)
			}
		}
	}
	return s.driveBatch(ctx)
}

// resumeBatch takes up a batch carried across continue-as-new: its calls
// keep their results, decisions and waiting state under the same ids.
func (s *session) resumeBatch(ctx workflow.Context, carried []CarriedCall) error {
	s.batch = make([]*callState, len(carried))
	for i, c := range carried {
		cs := &callState{call: c.Call, spec: s.specs[c.Call.Name], why: c.Why, requestedAt: c.RequestedAt,
			decision: c.Decision, result: c.Result, perm: c.Perm, index: i,
			readOnlySandbox: c.ReadOnlySandbox, released: c.Released, verdict: c.Guardian}
		switch c.State {
		case carriedDone:
			cs.state = stateDone
		case carriedWaiting:
			cs.state = stateWaiting
		default:
			cs.state = stateRunning
		}
		if cs.state == stateRunning && cs.decision != nil && cs.decision.Decision == DecisionDeny {
			// Decided in the task that switched runs, before its
			// goroutine took the decision in: a denial stays a denial.
			cs.finish(conversation.ToolResult{Content: denialText(cs.decision.Feedback), IsError: true, Reason: conversation.ReasonDenied})
		}
		if cs.state != stateDone && cs.spec.Name == "" {
			// The new run's catalog has no such tool any more.
			cs.finish(conversation.ToolResult{
				Content: fmt.Sprintf("unknown tool %q after the session moved to a new run; it did not run", c.Call.Name),
				IsError: true, Reason: conversation.ReasonUnknownTool,
			})
		}
		s.batch[i] = cs
	}
	return s.driveBatch(ctx)
}

// driveBatch plans the batch, runs its calls and waits for all of them,
// or, when the run should continue as new while calls only wait for a
// person, returns errSwitch with the batch intact for the next run.
func (s *session) driveBatch(ctx workflow.Context) error {
	if s.planned {
		plan := make([]plannedCall, len(s.batch))
		for i, cs := range s.batch {
			plan[i] = planFor(cs.spec, cs.call.Arguments)
		}
		for i, deps := range planBatch(plan) {
			s.batch[i].deps = deps
		}
	}
	if s.hasWaiting() {
		s.setPhase(ctx, PhaseWaitingApproval)
	} else {
		s.setPhase(ctx, PhaseRunning)
	}

	for _, cs := range s.batch {
		if cs.state == stateDone {
			continue
		}
		workflow.GoNamed(ctx, "call:"+cs.call.ID, func(ctx workflow.Context) { s.runCall(ctx, cs) })
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
		s.messages = append(s.messages, conversation.ToolMessage(*cs.result))
		s.logger(ctx).Info("tool call", "call_id", cs.call.ID, "tool", cs.call.Name, "reason", cs.result.Reason)
	}
	s.batch = nil
	if err != nil {
		return err
	}
	s.setPhase(ctx, PhaseRunning)
	return nil
}

func (s *session) runCall(ctx workflow.Context, cs *callState) {
	if cs.state == stateReviewing && s.review(ctx, cs) {
		return // the guardian denied it
	}
	if cs.state == stateWaiting {
		decided, err := s.awaitDecision(ctx, cs)
		if err == nil && !decided {
			cs.finish(conversation.ToolResult{
				Content: fmt.Sprintf("timeout: nobody decided on this call within the approval timeout (%s); it did not run. "+
					"This is not a denial: ask the user, or try again later.", time.Duration(s.in.ApprovalTimeout)),
				IsError: true, Reason: conversation.ReasonTimeout,
			})
			s.afterDecision(ctx)
			return
		}
		if err != nil {
			cs.finish(s.notRun("waited for approval"))
			return
		}
		if cs.decision.Decision == DecisionDeny {
			cs.finish(conversation.ToolResult{Content: denialText(cs.decision.Feedback), IsError: true, Reason: conversation.ReasonDenied})
			s.afterDecision(ctx)
			return
		}
		cs.state = stateRunning
		s.afterDecision(ctx)
	}
	if err := s.admit(ctx, cs); err != nil {
		cs.finish(s.notRun("waited for the calls before it"))
		return
	}
	defer s.release(cs)
	cs.started = true
	s.lastTool = s.callSummary(cs)
	res, err := s.execute(ctx, cs)
	if err == nil {
		s.recordFiles(res.Files)
	}
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
		cs.finish(conversation.ToolResult{
			Content: "interrupted by the user while running: the tool was stopped and may have had partial effects. Do not treat it as done; wait for the user's next message.",
			IsError: true, Reason: conversation.ReasonInterrupted,
		})
	case ctx.Err() != nil:
		cs.finish(conversation.ToolResult{
			Content: "cancelled while running: the session was cancelled while this tool ran; it was stopped and may have had partial effects.",
			IsError: true, Reason: conversation.ReasonCancelledWhileRunning,
		})
	default:
		reason := conversation.ReasonFailed
		var timeoutErr *temporal.TimeoutError
		if errors.As(err, &timeoutErr) && !cs.spec.ReadOnly {
			reason = conversation.ReasonWorkerLost
		}
		cs.finish(conversation.ToolResult{Content: failureText(cs, err), IsError: true, Reason: reason})
		s.lastErr, s.lastErrType = fmt.Sprintf("turn %d: %s %s: %s", s.turn, cs.call.Name, cs.call.ID, rootMessage(err)), string(reason)
	}
}

// notRun is the synthetic result of a call stopped before it started.
func (s *session) notRun(waited string) conversation.ToolResult {
	if s.interrupted {
		return conversation.ToolResult{
			Content: "interrupted by the user before it ran: it did not run. Do not treat it as done; wait for the user's next message.",
			IsError: true, Reason: conversation.ReasonInterrupted,
		}
	}
	return conversation.ToolResult{
		Content: "cancelled before it ran: the session was cancelled while this call " + waited + "; nothing ran.",
		IsError: true, Reason: conversation.ReasonCancelledBeforeRun,
	}
}

// admit waits until the batch plan lets cs start: every call it depends on
// is done and the pool has a free slot. Among calls ready at once the
// model's order goes first. Sessions recorded before the planner start
// every call at once.
func (s *session) admit(ctx workflow.Context, cs *callState) error {
	if !s.planned {
		return nil
	}
	cs.queued = true
	err := workflow.Await(ctx, func() bool { return s.canStart(cs) })
	cs.queued = false
	if err != nil {
		return err
	}
	s.running++
	return nil
}

func (s *session) release(*callState) {
	if s.planned {
		s.running--
	}
}

func (s *session) canStart(cs *callState) bool {
	if s.running >= s.maxParallel() || !s.depsDone(cs) {
		return false
	}
	for _, o := range s.batch[:cs.index] {
		if o.queued && s.depsDone(o) {
			return false
		}
	}
	return true
}

func (s *session) depsDone(cs *callState) bool {
	for _, d := range cs.deps {
		if s.batch[d].state != stateDone {
			return false
		}
	}
	return true
}

func (s *session) maxParallel() int {
	if s.in.MaxParallelTools > 0 {
		return s.in.MaxParallelTools
	}
	return DefaultMaxParallelTools
}

// recordFiles keeps the stale-write guard's record: the latest hash of
// every file a tool read or wrote, or none for a deleted one.
func (s *session) recordFiles(files []tools.FileVersion) {
	for _, f := range files {
		if s.seen == nil {
			s.seen = map[string]string{}
		}
		if f.SHA256 == "" {
			delete(s.seen, f.Path)
		} else {
			s.seen[f.Path] = f.SHA256
		}
	}
}

// awaitDecision waits for a person's decision on cs, up to the session's
// approval timeout. decided is false when the timeout fired.
func (s *session) awaitDecision(ctx workflow.Context, cs *callState) (decided bool, err error) {
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
		TimerOptions: workflow.TimerOptions{Summary: fmt.Sprintf("approval timeout: %s %s (%s)", cs.call.Name, cs.call.ID, timeout)},
	}, cond)
}

func (s *session) afterDecision(ctx workflow.Context) {
	if !s.hasWaiting() {
		s.setPhase(ctx, PhaseRunning)
	} else {
		s.setPhase(ctx, PhaseWaitingApproval)
	}
}

// answerer answers a call in the workflow, with no activity.
type answerer func(s *session, ctx workflow.Context, cs *callState) (tools.Result, error)

// sessionTools are the tools the session answers itself, by name (it adds
// their specs to the catalog in loadCatalog, only for sessions with a
// transcript). The job tools are routed by their spec (tools.Spec.Job);
// every other tool runs as an activity. Never written after init.
var sessionTools = map[string]answerer{
	TodoName: func(s *session, _ workflow.Context, cs *callState) (tools.Result, error) {
		return s.runTodo(cs.call), nil
	},
	toolsearch.SearchName: func(s *session, _ workflow.Context, cs *callState) (tools.Result, error) {
		return s.runToolSearch(cs.call), nil
	},
	TaskName: (*session).runTask,
}

// execute schedules the tool activity. Read-only tools retry; tools that
// change things run at most once: a retry after a lost worker could run a
// command twice, so that failure goes back to the model instead.
func (s *session) execute(ctx workflow.Context, cs *callState) (tools.Result, error) {
	if answer, ok := sessionTools[cs.call.Name]; ok && s.transcript {
		return answer(s, ctx, cs)
	}
	switch cs.spec.Job {
	case tools.JobOne:
		return s.executeJobCall(ctx, cs)
	case tools.JobAll:
		return s.executeJobList(ctx, cs)
	}
	timeout := time.Duration(cs.spec.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	attempts := int32(1)
	if cs.spec.ReadOnly {
		attempts = 3
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: timeout + time.Minute,
		HeartbeatTimeout:    10 * activities.HeartbeatEvery,
		WaitForCancellation: true, // the result must say the process is gone
		RetryPolicy: &temporal.RetryPolicy{
			MaximumAttempts:        attempts,
			NonRetryableErrorTypes: []string{activities.ErrTypeUnknownTool},
		},
		Summary: s.callSummary(cs),
	})
	req := activities.ToolRequest{
		CallID: cs.call.ID, Name: cs.call.Name, Arguments: json.RawMessage(cs.call.Arguments), WorkDir: s.in.WorkDir,
		AllowNetwork: s.in.Network, ByReference: s.transcript,
		ReadOnlySandbox: cs.readOnlySandbox, ApprovedByPerson: cs.approvedByPerson(),
	}
	if s.guardWrites && cs.spec.EditsFiles {
		// The whole record goes along: which files a patch touches is the
		// tool's to work out. JSON encodes the map in sorted key order, so
		// the input is the same on every replay.
		req.GuardWrites, req.Seen = true, make(map[string]string, len(s.seen))
		for k, v := range s.seen {
			req.Seen[k] = v
		}
	}
	command, background := cs.spec.BackgroundCommand(json.RawMessage(cs.call.Arguments))
	if background {
		// The session names the job, so an activity retry finds the job
		// it started instead of starting another.
		req.JobID = fmt.Sprintf("job-%d", len(s.jobs)+s.failedJobs+1)
	}
	var res tools.Result
	err := execute(actx, s.runsLocally(cs), a.RunTool, req).Get(ctx, &res)
	if background {
		if err == nil && !res.IsError && res.WorkerQueue != "" {
			s.jobs = append(s.jobs, jobRoute{ID: req.JobID, Queue: res.WorkerQueue, Command: command})
			s.load(s.jobTools()...) // the model needs them now
		} else {
			s.failedJobs++ // its id is spent: a retry of the start must not reuse it
		}
	}
	return res, err
}

// runsLocally says whether cs runs inside the workflow task: with
// local_reads, the tools that declare they may (tools.Spec.LocalOK). A
// shell command, a write or an MCP call stays an activity: they need
// heartbeats, a cancellation that reaches the process, or at-most-once.
func (s *session) runsLocally(cs *callState) bool {
	return s.in.LocalReads && cs.spec.ReadOnly && cs.spec.LocalOK
}

// callSummary labels the call's activity in the Web UI, as its tool
// declares: "shell: go test ./...".
func (s *session) callSummary(cs *callState) string {
	return tools.CallSummary(cs.call.Name, cs.spec, cs.call.Arguments)
}

func (s *session) batchDone() bool {
	for _, c := range s.batch {
		if c.state != stateDone {
			return false
		}
	}
	return true
}

func (s *session) hasWaiting() bool {
	for _, c := range s.batch {
		if c.state == stateWaiting {
			return true
		}
	}
	return false
}

func (s *session) toolNames() []string {
	names := make([]string, 0, len(s.specs))
	for n := range s.specs {
		names = append(names, n)
	}
	sort.Strings(names) // map order is random; the text must replay
	return names
}

func denialText(feedback string) string {
	if strings.TrimSpace(feedback) == "" {
		return "denied: the user denied this tool call and gave no feedback. It did not run; do not retry it unchanged."
	}
	return "denied: the user denied this tool call. It did not run. The user's feedback: " + feedback
}

func failureText(cs *callState, err error) string {
	var timeoutErr *temporal.TimeoutError
	if errors.As(err, &timeoutErr) && !cs.spec.ReadOnly {
		return fmt.Sprintf("the worker running this %s call was lost (%s); it may or may not have taken effect. Check the workspace before retrying.", cs.call.Name, rootMessage(err))
	}
	return fmt.Sprintf("%s failed: %s", cs.call.Name, rootMessage(err))
}
