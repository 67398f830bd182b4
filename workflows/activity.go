package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/toolspec"
)

// Every activity (and the sub-agent child) the session starts, with its
// options, is in this file: what a session asks of workers, and how hard
// it retries, reads in one place.

// schedule runs fn with actx's activity options: as an activity, or, when
// local, as a local activity with the same timeout, retry policy and
// summary (a local activity has no heartbeat).
func schedule(actx workflow.Context, local bool, fn any, args ...any) workflow.Future {
	if !local {
		return workflow.ExecuteActivity(actx, fn, args...)
	}
	o := workflow.GetActivityOptions(actx)
	lctx := workflow.WithLocalActivityOptions(actx, workflow.LocalActivityOptions{
		StartToCloseTimeout: o.StartToCloseTimeout, RetryPolicy: o.RetryPolicy, Summary: o.Summary,
	})
	return workflow.ExecuteLocalActivity(lctx, fn, args...)
}

// listTools reads the worker's tool catalog. Both start-up steps only read
// the worker's configuration and may run again, so they run as local
// activities: the run's first model call then goes out with the first
// workflow task instead of the third.
func (s *driver) listTools(ctx workflow.Context) (activities.Catalog, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
		Summary:             "list tools",
	})
	var cat activities.Catalog
	err := schedule(actx, true, activities.ListTools).Get(ctx, &cat)
	return cat, err
}

// loadWorkspaceConfig reads the workspace's rules and instructions, so
// they are recorded.
func (s *driver) loadWorkspaceConfig(ctx workflow.Context) (activities.WorkspaceConfig, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			MaximumAttempts:        3,
			NonRetryableErrorTypes: []string{activities.ErrTypeBadWorkspaceConfig},
		},
		Summary: "load " + activities.PermissionsFile,
	})
	var wc activities.WorkspaceConfig
	err := schedule(actx, true, activities.LoadWorkspaceConfig, s.in.WorkDir).Get(ctx, &wc)
	return wc, err
}

// modelCall runs one model call, as an activity or (local_model) a local
// one.
func (s *driver) modelCall(ctx workflow.Context, req activities.ModelRequest) (activities.ModelResponse, error) {
	label := s.Model
	if label == "" {
		label = "default model"
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		// CallModel heartbeats every second from a ticker, streaming or
		// not (the workflow cannot know which the worker does), so this
		// bounds how long a lost worker holds the turn (the call is then
		// retried), not how long the model may think before its first
		// token. The worker sends the partial text every 5 s (its
		// heartbeat throttle, worker/start.go), each send with 5 s to
		// answer: 20 s gives a loaded server two tries.
		HeartbeatTimeout: 20 * activities.HeartbeatEvery,
		RetryPolicy:      modelRetryPolicy(),
		Summary:          fmt.Sprintf("model: %s (turn %d)", label, s.Turn),
	})
	var resp activities.ModelResponse
	err := schedule(actx, s.in.LocalModel, activities.CallModel, req).Get(ctx, &resp)
	return resp, err
}

// modelRetryPolicy is how a model call is retried, as an activity or a
// local one.
func modelRetryPolicy() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    time.Minute,
		// About five minutes of a provider's 429s and 5xx before the
		// turn gives up: a background session should ride out a short
		// outage, not end on the first blip.
		MaximumAttempts: 10,
		NonRetryableErrorTypes: []string{
			activities.ErrTypeModelRejected, activities.ErrTypeNoModel,
			activities.ErrTypeContextLength, activities.ErrTypeModelBadReply,
		},
	}
}

// compactCall runs a compaction turn on the worker.
func (s *driver) compactCall(ctx workflow.Context, req activities.CompactRequest) (activities.CompactResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 5,
			NonRetryableErrorTypes: []string{
				activities.ErrTypeModelRejected, activities.ErrTypeNoModel,
				activities.ErrTypeContextLength, activities.ErrTypeModelBadReply, "TranscriptUnavailable",
			},
		},
		Summary: fmt.Sprintf("compact: keep the last %d turns (turn %d)", req.KeepTurns, s.Turn),
	})
	var res activities.CompactResult
	err := workflow.ExecuteActivity(actx, activities.Compact, req).Get(ctx, &res)
	return res, err
}

// toolHeartbeat is how long a running tool call may go without a
// recorded heartbeat before the server times it out, and a call that
// changes things comes back worker_lost. The tool heartbeats every
// activities.HeartbeatEvery; the SDK forwards one at most every 5 s and
// gives each RPC that long (worker/start.go), so recorded heartbeats are
// at most ~10 s apart even on a loaded server: the fleet benchmark (100
// sessions on three workers, load 20-30 on two cores) logged no failed
// heartbeat of a running call. What came back worker_lost there with no
// worker lost were calls no worker ever began (a dispatch lost under
// load), now scheduled again (neverStarted); each costs this timeout, so
// it is kept short: a lost worker is noticed within 15 s, and a worker
// that stops on purpose drains instead (worker/drain.go).
const toolHeartbeat = 15 * activities.HeartbeatEvery

// toolCall runs a tool activity. Read-only tools retry; tools that change
// things run at most once: a retry after a lost worker could run a command
// twice, so that failure goes back to the model instead.
func (s *driver) toolCall(ctx workflow.Context, cs callRef, req activities.ToolRequest, local bool) (toolspec.Result, error) {
	timeout := time.Duration(cs.spec.TimeoutSeconds) * time.Second
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	attempts := int32(1)
	if cs.spec.ReadOnly {
		attempts = 3
	}
	opts := workflow.ActivityOptions{
		StartToCloseTimeout: timeout + time.Minute,
		HeartbeatTimeout:    toolHeartbeat,
		WaitForCancellation: true, // the result must say the process is gone
		RetryPolicy: &temporal.RetryPolicy{
			MaximumAttempts:        attempts,
			NonRetryableErrorTypes: []string{activities.ErrTypeUnknownTool},
		},
		Summary: s.callSummary(cs),
	}
	s.pin(&opts)
	actx := workflow.WithActivityOptions(ctx, opts)
	req.AtMostOnce = attempts == 1
	for try := 1; ; try++ {
		var res toolspec.Result
		err := s.runHere(ctx, actx, local, activities.RunTool, func(queue string) any {
			req.CheckoutQueue = queue
			return req
		}, &res)
		if req.AtMostOnce && try < toolStartTries && neverStarted(err) {
			s.logger(ctx).Warn("no worker began the call: scheduling it again", "call", cs.call().Ref, "try", try, "error", rootMessage(err))
			continue
		}
		return res, err
	}
}

// toolStartTries is how many times a call that runs at most once is
// scheduled when no worker began it (neverStarted).
const toolStartTries = 3

// neverStarted reports whether a call that runs at most once failed before
// its tool ran: its worker could not get its first heartbeat recorded
// (ErrTypeNotStarted), or its heartbeat timed out with none recorded, so
// no worker got as far as that first heartbeat, which comes before the
// tool runs (activities/start.go). Under load the server can record an
// activity task as started that never reaches a worker; answering that
// call worker_lost would tell the model a command may have run that did
// not.
func neverStarted(err error) bool {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) && appErr.Type() == activities.ErrTypeNotStarted {
		return true
	}
	var timeoutErr *temporal.TimeoutError
	return errors.As(err, &timeoutErr) && timeoutErr.TimeoutType() == enumspb.TIMEOUT_TYPE_HEARTBEAT && !timeoutErr.HasLastHeartbeatDetails()
}

// jobWorkerWait is how long a call about a job waits for its worker to
// pick it up before the session says that worker is gone.
const jobWorkerWait = 30 * time.Second

// toolCallOn runs the call's tool activity on one worker's own queue.
func (s *driver) toolCallOn(ctx workflow.Context, cs callRef, queue string) (toolspec.Result, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              queue,
		ScheduleToStartTimeout: jobWorkerWait,
		StartToCloseTimeout:    time.Duration(max(cs.spec.TimeoutSeconds, 30))*time.Second + time.Minute,
		HeartbeatTimeout:       toolHeartbeat,
		WaitForCancellation:    true,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrTypeUnknownTool}},
		Summary:                s.callSummary(cs),
	})
	req := activities.ToolRequest{CallID: cs.call().ID, Name: cs.call().Name, Arguments: json.RawMessage(cs.call().Arguments), WorkDir: s.in.WorkDir}
	s.inCheckout(&req)
	var res toolspec.Result
	err := workflow.ExecuteActivity(actx, activities.RunTool, req).Get(ctx, &res)
	return res, err
}

// killJobsOn stops the session's background jobs on the worker polling
// queue.
func (s *driver) killJobsOn(ctx workflow.Context, queue string) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              queue,
		ScheduleToStartTimeout: jobWorkerWait,
		StartToCloseTimeout:    time.Minute,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 2},
		Summary:                "kill background jobs",
	})
	var killed []string
	return workflow.ExecuteActivity(actx, activities.KillJobs, s.workflowID).Get(ctx, &killed)
}

// childSession runs a sub-agent session to its end. A parent cancelled
// meanwhile cancels the child, which pairs its own calls before it closes
// (ParentClosePolicy and WaitForCancellation).
func (s *driver) childSession(ctx workflow.Context, id string, in SessionInput, summary, details string, started func()) (SessionResult, error) {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:          id,
		TaskQueue:           workflow.GetInfo(ctx).TaskQueueName,
		ParentClosePolicy:   enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation: true,
		StaticSummary:       summary,
		StaticDetails:       details,
	})
	var res SessionResult
	f := workflow.ExecuteChildWorkflow(cctx, WorkflowType, in)
	// Waiting for the start first issues no command: it only lets
	// started run once the child exists, so a reader told of it finds it.
	if f.GetChildWorkflowExecution().Get(ctx, nil) == nil {
		started()
	}
	err := f.Get(ctx, &res)
	return res, err
}

// reviewCall asks the guardian, the worker's reviewer model, for its
// verdict on a call that would otherwise ask a person (guardian.go).
func (s *driver) reviewCall(ctx workflow.Context, cs callRef, req guardian.Request, v *guardian.Verdict) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		// The worker bounds the review (--guardian-timeout) and answers
		// "ask" past it; these only catch a lost worker.
		StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout:    time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		Summary:             "guardian: " + s.callSummary(cs),
	})
	return workflow.ExecuteActivity(actx, activities.ReviewCall, req).Get(ctx, v)
}

// notifyCall posts one notification to the worker's sinks (notify.go),
// retried for about two minutes of a receiver's outage.
// The heartbeat timeout lets a retry start soon after a worker dies
// mid-post.
func notifyCall(ctx workflow.Context, ev activities.NotifyEvent) workflow.Future {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout:    time.Minute,
		ScheduleToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout:       10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 8,
			NonRetryableErrorTypes: []string{activities.ErrTypeNotifyRejected},
		},
		Summary: "notify: " + ev.Event,
	})
	return workflow.ExecuteActivity(actx, activities.Notify, ev)
}

// checkoutHeartbeat is how soon the server retries a checkout's own call
// (open, checkpoint, close, restore) whose worker stopped heartbeating.
// Without it a worker killed in one of them, or a task handed to a
// killed worker's poll, held the session for the whole start-to-close
// timeout (5 to 10 minutes): make chaos found sessions stalled so in
// CloseCheckout and Checkpoint. The activities heartbeat every
// activities.HeartbeatEvery while they run.
const checkoutHeartbeat = 10 * activities.HeartbeatEvery

// openCheckoutCall makes the session's own checkout (checkout.go) on
// whichever worker takes it; the result names that worker's own queue.
func (s *driver) openCheckoutCall(ctx workflow.Context) (activities.CheckoutResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute, // a large repository's worktree
		HeartbeatTimeout:    checkoutHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			MaximumAttempts:        3,
			NonRetryableErrorTypes: []string{activities.ErrTypeBadBase},
		},
		Summary: "checkout: a worktree of its own on branch longrun/<session>",
	})
	var res activities.CheckoutResult
	err := workflow.ExecuteActivity(actx, activities.OpenCheckout, activities.CheckoutRequest{WorkDir: s.in.WorkDir, Base: s.in.Base}).Get(ctx, &res)
	return res, err
}

// setupTimeout bounds SetupCheckout: past the worker's own bound
// (longrun-worker --setup-timeout, 20 minutes by default), which stops the
// command and reports it.
const setupTimeout = 2 * time.Hour

// setupCheckoutCall runs the repository's setup command in the new
// checkout, on the worker holding it (setup.go). A worker killed during
// it is found by the heartbeat and the setup runs again once.
func (s *driver) setupCheckoutCall(ctx workflow.Context, command string) (activities.SetupResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              s.Checkout.Queue,
		ScheduleToStartTimeout: s.workerWait(),
		StartToCloseTimeout:    setupTimeout,
		HeartbeatTimeout:       checkoutHeartbeat,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 2, NonRetryableErrorTypes: []string{"BadCheckout"}},
		Summary:                "setup: " + command,
	})
	var res activities.SetupResult
	err := workflow.ExecuteActivity(actx, activities.SetupCheckout, activities.SetupRequest{Checkout: s.Checkout.Info}).Get(ctx, &res)
	return res, err
}

// closeCheckoutCall commits the checkout on its branch and removes it, on
// the worker holding it (checkout.go): locally when that worker runs this
// workflow task (here.go), which saves the session's last activity round
// trip, else as an activity on its queue.
func (s *driver) closeCheckoutCall(ctx workflow.Context) (activities.CloseCheckoutResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              s.Checkout.Queue,
		ScheduleToStartTimeout: s.workerWait(), // past it the worker is lost (checkpoint.go)
		StartToCloseTimeout:    10 * time.Minute,
		HeartbeatTimeout:       checkoutHeartbeat,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3},
		Summary:                "commit the checkout on " + s.Checkout.Branch,
	})
	req := activities.CloseCheckoutRequest{Checkout: s.Checkout.Info, Message: session.CommitMessage(s.FinalText, s.workflowID),
		TurnCheckpoints: session.MarkedCheckpoints(s.Marks)}
	var closed activities.CloseCheckoutResult
	err := s.runHere(ctx, actx, s.localHere(), activities.CloseCheckout, func(queue string) any {
		req.CheckoutQueue = queue
		return req
	}, &closed)
	return closed, err
}

// checkpointCall records the checkout as a checkpoint and pushes it to the
// checkpoint remote, on the worker holding it (checkpoint.go): locally
// when that worker runs this workflow task (here.go), else as an
// activity on its queue. That activity waits for the worker as long as a
// tool call does: a schedule-to-start timeout is how the session finds
// the worker lost.
func (s *driver) checkpointCall(ctx workflow.Context) (activities.CheckpointResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              s.Checkout.Queue,
		ScheduleToStartTimeout: s.workerWait(),
		StartToCloseTimeout:    5 * time.Minute, // the first push sends the base's objects
		HeartbeatTimeout:       checkoutHeartbeat,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{"BadCheckout"}},
		Summary:                "checkpoint " + s.Checkout.Branch,
	})
	req := activities.CheckpointRequest{Checkout: s.Checkout.Info, Previous: s.Checkout.Checkpoint, Paths: s.Checkout.CheckpointPaths(len(s.Jobs))}
	var res activities.CheckpointResult
	err := s.runHere(ctx, actx, s.localHere(), activities.Checkpoint, func(queue string) any {
		req.CheckoutQueue = queue
		return req
	}, &res)
	return res, err
}

// restoreCheckoutCall restores the lost worker's checkout from its last
// checkpoint on whichever worker of the session's own queue takes it
// (checkpoint.go).
func (s *driver) restoreCheckoutCall(ctx workflow.Context) (activities.CheckoutResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute, // fetching a large repository
		HeartbeatTimeout:    checkoutHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			MaximumAttempts:        3,
			NonRetryableErrorTypes: []string{activities.ErrTypeWorkspaceLost},
		},
		Summary: "restore the checkout of " + s.Checkout.Branch + " from checkpoint " + s.Checkout.Checkpoint,
	})
	req := activities.RestoreRequest{Checkout: s.Checkout.Info, Checkpoint: s.Checkout.Checkpoint, Bundle: s.Checkout.Bundle, Origin: s.Checkout.Origin}
	var res activities.CheckoutResult
	err := workflow.ExecuteActivity(actx, activities.RestoreCheckout, req).Get(ctx, &res)
	return res, err
}

// rewindCheckoutCall puts the checkout's files back to commit on the
// worker holding it.
func (s *driver) rewindCheckoutCall(ctx workflow.Context, commit string) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              s.Checkout.Queue,
		ScheduleToStartTimeout: s.workerWait(),
		StartToCloseTimeout:    5 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3,
			NonRetryableErrorTypes: []string{"BadCheckout", activities.ErrTypeCheckpointGone}},
		Summary: "rewind " + s.Checkout.Branch + " to checkpoint " + orBase(commit),
	})
	req := activities.RewindRequest{Checkout: s.Checkout.Info, Commit: commit}
	return workflow.ExecuteActivity(actx, activities.RewindCheckout, req).Get(ctx, nil)
}

// forkCheckoutCall makes a fork's checkout on the worker holding the
// original's (its repository has the checkpoint), its files the
// checkpoint's (rewind.go).
func (s *driver) forkCheckoutCall(ctx workflow.Context, f *ForkFrom) (activities.CheckoutResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              f.Checkout.Queue,
		ScheduleToStartTimeout: s.workerWait(),
		StartToCloseTimeout:    10 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3,
			NonRetryableErrorTypes: []string{activities.ErrTypeBadBase, activities.ErrTypeCheckpointGone}},
		Summary: fmt.Sprintf("checkout: a fork of %s at turn %d, from checkpoint %s", f.Session, f.Turn, orBase(f.Checkpoint)),
	})
	req := activities.CheckoutRequest{WorkDir: s.in.WorkDir, Base: s.in.Base,
		From: &activities.CheckoutFrom{Dir: f.Checkout.Dir, Commit: f.Checkpoint}}
	var res activities.CheckoutResult
	err := workflow.ExecuteActivity(actx, activities.OpenCheckout, req).Get(ctx, &res)
	return res, err
}

// pushCall asks the worker holding the session's branch to publish it
// (push.go): pinned there, retried, a refusal not retried.
func (s *driver) pushCall(ctx workflow.Context, req activities.PushRequest) (activities.PushResult, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              s.Checkout.Queue,
		ScheduleToStartTimeout: s.workerWait(),
		StartToCloseTimeout:    5 * time.Minute, // a first push sends the base's objects
		// A worker killed during the push or the pull request's creation
		// is found in seconds; the retry finds what it did (forge.Publish).
		HeartbeatTimeout: checkoutHeartbeat,
		RetryPolicy: &temporal.RetryPolicy{
			MaximumAttempts:        5,
			NonRetryableErrorTypes: []string{activities.ErrTypePushRefused},
		},
		Summary: "push " + s.Checkout.Branch + " and open its pull request",
	})
	var pushed activities.PushResult
	err := workflow.ExecuteActivity(actx, activities.PushBranch, req).Get(ctx, &pushed)
	return pushed, err
}
