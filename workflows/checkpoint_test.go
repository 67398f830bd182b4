package workflows

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/tools"
)

// The checkpoint activity a test scripts: each call's request and where
// it ran (its queue, or "local"), and whether it finds the worker gone
// (nobody polls its queue). A local call on a worker without the
// checkout is answered not here (harness.notHere) and not counted.
type checkpoints struct {
	mu    sync.Mutex
	reqs  []activities.CheckpointRequest
	queue []string
	gone  bool
}

func (c *checkpoints) mock(h *harness) {
	h.env.OnActivity(a.Checkpoint, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, r activities.CheckpointRequest) (activities.CheckpointResult, error) {
			if err := h.notHere(ctx, r.CheckoutQueue); err != nil {
				return activities.CheckpointResult{}, err
			}
			c.mu.Lock()
			defer c.mu.Unlock()
			c.reqs = append(c.reqs, r)
			where := activity.GetInfo(ctx).TaskQueue
			if activity.GetInfo(ctx).IsLocalActivity {
				where = "local"
			}
			c.queue = append(c.queue, where)
			if c.gone {
				c.gone = false
				return activities.CheckpointResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
			}
			return activities.CheckpointResult{Commit: "cp" + strings.Repeat("1", len(c.reqs)), Remote: "/remote"}, nil
		}).Maybe()
}

// A batch with a call that may change files is followed by a checkpoint
// on the worker holding the checkout, given the previous one; a batch of
// reads is not; the checkout query holds the last checkpoint's id. The
// checkpoint runs as a local activity when that worker runs the
// workflow task, else as an activity on its queue; with local_reads
// false always as an activity.
func TestCheckpointAfterABatchThatMayChangeFiles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, taskWorker string
		localReads       *bool
		where            string
	}{
		{name: "workflow task on the checkout's worker", where: "local"},
		{name: "workflow task on another worker", taskWorker: "w2-own", where: testCheckoutQueue},
		{name: "local_reads false", localReads: Flag(false), where: testCheckoutQueue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkpointAfterABatch(t, tc.taskWorker, tc.localReads, tc.where)
		})
	}
}

func checkpointAfterABatch(t *testing.T, taskWorker string, localReads *bool, where string) {
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w1", "write", `{"path":"a","content":"x"}`)),
		toolReply(call("r1", "read", `{"path":"a"}`)),
		toolReply(call("w2", "write", `{"path":"b","content":"y"}`)),
		textReply("done"),
	}, nil)
	h.taskWorker = taskWorker
	var cps checkpoints
	cps.mock(h)
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{Commit: "c0ffee"}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase, LocalReads: localReads})
	require.NoError(t, h.env.GetWorkflowError())

	require.Len(t, cps.reqs, 2, "after each write's batch, not after the read's")
	require.Equal(t, "", cps.reqs[0].Previous)
	require.Equal(t, "cp1", cps.reqs[1].Previous)
	require.Equal(t, []string{where, where}, cps.queue)
	require.Equal(t, testCheckout, cps.reqs[0].Checkout)
	v, err := h.env.QueryWorkflow(QueryCheckout)
	require.NoError(t, err)
	var co *session.Checkout
	require.NoError(t, v.Get(&co))
	require.Equal(t, "cp11", co.Checkpoint)
	require.Equal(t, "/remote", co.Remote)
	require.False(t, co.Due)
}

// When the worker holding the checkout is gone, the call in flight is
// worker_lost, the checkpoint finds nobody polling its queue, the
// checkout is restored on another worker from the last checkpoint, the
// model is told, and every later call (and the close) goes to the new
// worker: here the one running the workflow task, so its reads run
// locally.
func TestLostWorkerRestoresTheCheckout(t *testing.T) {
	t.Parallel()
	var cps checkpoints
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w1", "write", `{"path":"a","content":"x"}`)),
		toolReply(call("s1", "shell", `{"command":"sleep 100"}`), call("r0", "read", `{"path":"b"}`)),
		toolReply(call("r1", "read", `{"path":"a"}`)),
		textReply("done"),
	}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
		if r.CallID == "r0" { // nobody takes the read after it
			return tools.Result{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		}
		if r.CallID == "s1" { // the worker dies while it runs (its start was recorded)
			cps.mu.Lock()
			cps.gone = true
			cps.mu.Unlock()
			return tools.Result{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_HEARTBEAT, nil, "started")
		}
		return tools.Result{Content: "ok " + r.CallID}, nil
	})
	queues := map[string][]string{}
	var local []string // calls that ran as local activities
	var mu sync.Mutex
	h.env.SetOnActivityStartedListener(func(i *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		queues[i.ActivityType.Name] = append(queues[i.ActivityType.Name], i.TaskQueue)
		mu.Unlock()
	})
	h.env.SetOnLocalActivityStartedListener(func(i *activity.Info, _ context.Context, args []any) {
		if i.ActivityType.Name == "RunTool" {
			mu.Lock()
			local = append(local, args[0].(activities.ToolRequest).CallID)
			mu.Unlock()
		}
	})
	cps.mock(h)
	restored := checkout.Info{Repo: "/b/checkouts/s1", Dir: "/b/checkouts/s1", Name: "s1", Branch: "longrun/s1", Base: "abc", Sub: "pkg"}
	var restoreReq activities.RestoreRequest
	h.env.OnActivity(a.RestoreCheckout, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.RestoreRequest) (activities.CheckoutResult, error) {
			restoreReq = r
			return activities.CheckoutResult{Checkout: &restored, WorkerQueue: "w2-own"}, nil
		})
	var closed activities.CloseCheckoutRequest
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, r activities.CloseCheckoutRequest) (activities.CloseCheckoutResult, error) {
			if err := h.notHere(ctx, r.CheckoutQueue); err != nil {
				return activities.CloseCheckoutResult{}, err
			}
			closed = r
			return activities.CloseCheckoutResult{Commit: "c0ffee"}, nil
		})
	// The workflow tasks run on the worker that will restore the
	// checkout: the first one is lost, its calls are pinned there.
	h.taskWorker = "w2-own"
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase, WorkerLostAfter: Duration(3e9)})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, ResultCompleted, r.Status)

	msgs := h.conversation(t)
	require.Equal(t, conversation.ReasonWorkerLost, resultOf(msgs, "s1").Reason)
	require.Equal(t, conversation.ReasonWorkerLost, resultOf(msgs, "r0").Reason, "a read pinned to the lost worker too")
	require.Equal(t, "cp1", restoreReq.Checkpoint, "restored from the last checkpoint")
	require.Equal(t, testCheckout, restoreReq.Checkout)
	require.Equal(t, []string{testCheckoutQueue, testCheckoutQueue, testCheckoutQueue}, queues["RunTool"], "pinned to the first worker")
	require.Equal(t, []string{"r1"}, local, "no local try while the first worker held the checkout (a local checkpoint found it elsewhere); the restored checkout is where the workflow task runs: its reads run there locally")
	require.NotEqual(t, testCheckoutQueue, queues["RestoreCheckout"][0], "any worker restores")
	require.Empty(t, queues["CloseCheckout"], "closed locally: the restored checkout is where the workflow task runs")
	require.Equal(t, "w2-own", closed.CheckoutQueue)
	require.Equal(t, restored, closed.Checkout)
	told := h.requests[2].Messages
	last := told[len(told)-1]
	require.Equal(t, conversation.RoleUser, last.Role)
	require.Contains(t, last.Content, "was lost")
	require.Contains(t, last.Content, "shell s1")
	require.Contains(t, last.Content, "read r0")
	require.Contains(t, last.Content, "/b/checkouts/s1")

	v, err := h.env.QueryWorkflow(QueryCheckout)
	require.NoError(t, err)
	var co *session.Checkout
	require.NoError(t, v.Get(&co))
	require.Equal(t, "/repo", co.Origin)
	require.Equal(t, "w2-own", co.Queue)
}

// A checkout that cannot be restored is workspace_lost: the session says
// so and waits for a person (here: nobody comes, so it ends failed).
func TestWorkspaceLostWaitsForAPerson(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{toolReply(call("w1", "write", `{"path":"a","content":"x"}`))}, nil)
	cps := checkpoints{gone: true}
	cps.mock(h)
	h.env.OnActivity(a.RestoreCheckout, mock.Anything, mock.Anything).Return(activities.CheckoutResult{},
		temporal.NewNonRetryableApplicationError("no checkpoint to restore", activities.ErrTypeWorkspaceLost, nil))
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{}, nil).Maybe()
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase, IdleTimeout: Duration(3600e9)})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, ResultFailed, r.Status)
	require.Contains(t, r.Error, "workspace_lost")
	require.Contains(t, r.Error, "no checkpoint to restore")
	require.Len(t, h.requests, 1, "the model is not called on a lost workspace")
}

func resultOf(msgs []conversation.Message, callID string) conversation.ToolResult {
	for _, m := range msgs {
		if m.Result != nil && m.Result.CallID == callID {
			return *m.Result
		}
	}
	return conversation.ToolResult{}
}

// A sub-agent that changed files in its parent's checkout makes the
// parent checkpoint after its task call's batch, though the task tool
// declares itself read-only; the sub-agent itself never checkpoints.
func TestSubagentChangesMakeTheParentCheckpoint(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("t1", TaskName, `{"description":"d","prompt":"write a","profile":"auto"}`)),
		toolReply(call("w1", "write", `{"path":"a","content":"x"}`)),
		textReply("child done"),
		textReply("parent done"),
	}, nil)
	var cps checkpoints
	cps.mock(h)
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{Commit: "c0ffee"}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, ResultCompleted, r.Status, r.Error)
	require.Contains(t, h.ran, "w1", "the child's write ran")
	require.Len(t, cps.reqs, 1, "one checkpoint: the parent's, after the task call")
}

// A worker lost after the last checkpoint is found when the checkout is
// to be committed at the end: it is restored on another worker from that
// checkpoint and committed there.
func TestLostWorkerAtTheEndCommitsOnAnother(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{toolReply(call("w1", "write", `{"path":"a","content":"x"}`)), textReply("done")}, nil)
	var cps checkpoints
	cps.mock(h)
	restored := checkout.Info{Repo: "/b/checkouts/s1", Dir: "/b/checkouts/s1", Name: "s1", Branch: "longrun/s1", Base: "abc"}
	h.env.OnActivity(a.RestoreCheckout, mock.Anything, mock.Anything).Return(activities.CheckoutResult{Checkout: &restored, WorkerQueue: "w2-own"}, nil)
	var closedOn []string
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, r activities.CloseCheckoutRequest) (activities.CloseCheckoutResult, error) {
			if err := h.notHere(ctx, r.CheckoutQueue); err != nil {
				closedOn = append(closedOn, "not here: "+r.CheckoutQueue)
				return activities.CloseCheckoutResult{}, err
			}
			q := activity.GetInfo(ctx).TaskQueue
			if activity.GetInfo(ctx).IsLocalActivity {
				q = "local: " + r.CheckoutQueue
			}
			closedOn = append(closedOn, q)
			if q == testCheckoutQueue {
				return activities.CloseCheckoutResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
			}
			return activities.CloseCheckoutResult{Commit: "c0ffee"}, nil
		})
	// The workflow tasks run on the worker that will restore the
	// checkout, not on the lost one.
	h.taskWorker = "w2-own"
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, []string{testCheckoutQueue, "local: w2-own"}, closedOn,
		"no local try where the checkpoint found the checkout elsewhere: its queue finds no worker; the restored one closes where the workflow task runs")
	require.Equal(t, "c0ffee", r.Commit)
	require.Equal(t, "longrun/s1", r.Branch)
}

// With no remote, a checkpoint's bundle reference (in the transcript
// store) is kept beside its commit, dropped when a later checkpoint was
// not stored (the note is kept instead), and handed to the restore; the
// branch's bundle, stored at the end by the worker that restored the
// checkout, is in the checkout query for starter diff.
func TestCheckpointBundleGoesToTheRestore(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w1", "write", `{"path":"a","content":"x"}`)),
		toolReply(call("w2", "write", `{"path":"b","content":"y"}`)),
		toolReply(call("w3", "write", `{"path":"c","content":"z"}`)),
		textReply("done"),
	}, nil)
	results := []activities.CheckpointResult{
		{Commit: "cp1", Bundle: "sha256:b1"},
		{Commit: "cp1"}, // unchanged: the bundle stays
	}
	var n int
	h.env.OnActivity(a.Checkpoint, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.CheckpointRequest) (activities.CheckpointResult, error) {
			defer func() { n++ }()
			if n < len(results) {
				return results[n], nil
			}
			return activities.CheckpointResult{}, temporal.NewTimeoutError(enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START, nil)
		})
	restored := checkout.Info{Repo: "/b/checkouts/s1", Dir: "/b/checkouts/s1", Name: "s1", Branch: "longrun/s1", Base: "abc"}
	var restoreReq activities.RestoreRequest
	h.env.OnActivity(a.RestoreCheckout, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.RestoreRequest) (activities.CheckoutResult, error) {
			restoreReq = r
			return activities.CheckoutResult{Checkout: &restored, WorkerQueue: "w2-own"}, nil
		})
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{Commit: "c0ffee", Bundle: "sha256:branch"}, nil)
	// The workflow tasks run on the worker that will restore the
	// checkout: the first one is lost, its calls are pinned there.
	h.taskWorker = "w2-own"
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase, WorkerLostAfter: Duration(3e9)})
	require.NoError(t, h.env.GetWorkflowError())

	require.Equal(t, "cp1", restoreReq.Checkpoint)
	require.Equal(t, "sha256:b1", restoreReq.Bundle, "the restore gets the checkpoint's bundle")
	v, err := h.env.QueryWorkflow(QueryCheckout)
	require.NoError(t, err)
	var co *session.Checkout
	require.NoError(t, v.Get(&co))
	require.Equal(t, "sha256:b1", co.Bundle, "carried to the restored checkout")
	require.Equal(t, "sha256:branch", co.BranchBundle)
	require.Equal(t, "/repo", co.Origin)
}

// A checkpoint whose bundle was not stored (too large) drops the older
// bundle, which holds an older checkpoint, and keeps its note.
func TestCheckpointBundledNote(t *testing.T) {
	t.Parallel()
	co := session.Checkout{}
	co.CheckpointBundled(true, "sha256:b1", "")
	co.Checkpointed("cp1")
	co.CheckpointBundled(false, "", "")
	require.Equal(t, "sha256:b1", co.Bundle, "unchanged checkpoint: the bundle stays")
	co.CheckpointBundled(true, "", "too large")
	require.Empty(t, co.Bundle)
	require.Equal(t, "too large", co.BundleNote)
}
