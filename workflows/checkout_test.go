package workflows

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/tools"
)

// The checkout newSessionEnv's OpenCheckout makes for a session whose
// base is testCheckoutBase.
const (
	testCheckoutBase  = "test-isolated"
	testCheckoutQueue = "w1-own"
)

var testCheckout = checkout.Info{Repo: "/repo", Dir: "/state/checkouts/s1", Name: "s1", Branch: "longrun/s1", Base: "abc", Sub: "pkg"}

// TestIsolatedSessionIsPinnedToItsCheckout: a session on a repository
// gets its own checkout; every tool call carries the checkout and runs
// on the worker that made it: a write through its queue, a read as a
// local activity there, since that worker runs the workflow task too
// (here.go; local_test.go for another worker); at the end the checkout is committed with the first line of
// the final text, and the result names the branch.
func TestIsolatedSessionIsPinnedToItsCheckout(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var reqs []activities.ToolRequest
	wc := activities.WorkspaceConfig{Environment: &activities.Environment{WorkDir: "/repo/pkg", GitRoot: "/repo", Branch: "main"}}
	h := newHarnessWith(t, wc, []activities.ModelResponse{
		toolReply(call("r1", "read", `{"path":"a"}`), call("w1", "write", `{"path":"a","content":"x"}`)),
		textReply("Changed a\nand more"),
	}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
		mu.Lock()
		reqs = append(reqs, r)
		mu.Unlock()
		return tools.Result{Content: "ok"}, nil
	})
	info := testCheckout
	var closed activities.CloseCheckoutRequest
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, r activities.CloseCheckoutRequest) (activities.CloseCheckoutResult, error) {
			if err := h.notHere(ctx, r.CheckoutQueue); err != nil {
				return activities.CloseCheckoutResult{}, err
			}
			closed = r
			return activities.CloseCheckoutResult{Commit: "c0ffee", LeftOut: []string{"AGENTS.md"},
				Changes: &checkout.Stat{Files: 1, Insertions: 1, Paths: []string{"pkg/a"}, Control: []string{"AGENTS.md"}}}, nil
		})
	queues := map[string]string{}
	h.env.SetOnActivityStartedListener(func(i *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		queues[i.ActivityType.Name] = i.TaskQueue
		mu.Unlock()
	})
	var local []string
	var localQueue string
	h.env.SetOnLocalActivityStartedListener(func(i *activity.Info, _ context.Context, args []any) {
		if i.ActivityType.Name == "RunTool" {
			mu.Lock()
			local = append(local, args[0].(activities.ToolRequest).CallID)
			localQueue = args[0].(activities.ToolRequest).CheckoutQueue
			mu.Unlock()
		}
	})
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))

	require.Len(t, reqs, 2)
	for _, req := range reqs {
		require.Equal(t, "s1", req.Checkout, req.CallID)
		require.Equal(t, "pkg", req.WorkDir, "the working directory inside the checkout")
	}
	require.Equal(t, []string{"r1"}, local, "the read ran locally")
	require.Equal(t, testCheckoutQueue, localQueue, "the local read names the checkout's queue, so another worker would refuse it")
	require.Equal(t, "w1-own", queues["RunTool"], "tool calls go to the worker holding the checkout")
	require.Empty(t, queues["CloseCheckout"], "the workflow task runs where the checkout is: the close is local there")
	require.Equal(t, testCheckoutQueue, closed.CheckoutQueue, "the local close names the checkout's queue, so another worker would refuse it")
	require.Equal(t, "Changed a", closed.Message)
	require.Equal(t, info, closed.Checkout)
	require.Equal(t, "longrun/s1", r.Branch)
	require.Equal(t, "c0ffee", r.Commit)
	require.Equal(t, &checkout.Stat{Files: 1, Insertions: 1, Paths: []string{"pkg/a"}, Control: []string{"AGENTS.md"}}, r.Changes, "the result carries the branch's size")
	require.Equal(t, []string{"AGENTS.md"}, r.LeftOut)

	system := h.requests[0].Messages[0]
	require.Equal(t, conversation.RoleSystem, system.Role)
	require.Contains(t, system.Content, "/state/checkouts/s1/pkg", "the prompt names the checkout the tools run in")
	require.Contains(t, system.Content, "longrun/s1")
	require.NotContains(t, system.Content, "/repo/pkg")

	v, err := h.env.QueryWorkflow(QueryCheckout)
	require.NoError(t, err)
	var got *session.Checkout
	require.NoError(t, v.Get(&got))
	require.Equal(t, "w1-own", got.Queue)
}

// TestInPlaceSessionAsksForNoCheckout: --in-place is today's behaviour:
// no checkout activity, reads run locally, nothing is committed.
func TestInPlaceSessionAsksForNoCheckout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{toolReply(call("r1", "read", `{"path":"a"}`)), textReply("done")}, nil)
	var remote []string
	h.env.SetOnActivityStartedListener(func(i *activity.Info, _ context.Context, _ converter.EncodedValues) {
		remote = append(remote, i.ActivityType.Name)
	})
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", InPlace: true})
	require.NoError(t, h.env.GetWorkflowError())
	require.NotContains(t, remote, "OpenCheckout")
	require.NotContains(t, remote, "RunTool", "reads run locally in place")
}

// TestIsolatedSessionShowsItsChanges: the size a write's activity
// measured shows in status and the Web UI's current details while the
// session runs, with no command of its own.
func TestIsolatedSessionShowsItsChanges(t *testing.T) {
	t.Parallel()
	st := &checkout.Stat{Files: 2, Insertions: 7, Deletions: 1, Paths: []string{"pkg/a", "pkg/b"}}
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w1", "write", `{"path":"a","content":"x"}`)),
		toolReply(call("r1", "read", `{"path":"a"}`)),
		textReply("done"),
	}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
		return tools.Result{Content: "ok"}, nil
	})
	// The checkpoint after the write's batch measures the checkout
	// (activities.Checkpoint); the read's batch makes none.
	checkpoints := 0
	h.env.OnActivity(a.Checkpoint, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.CheckpointRequest) (activities.CheckpointResult, error) {
			checkpoints++
			return activities.CheckpointResult{Commit: "cp1", Changes: st}, nil
		})
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{Commit: "c0ffee"}, nil)
	var status Status
	h.env.SetOnLocalActivityStartedListener(func(i *activity.Info, _ context.Context, _ []any) {
		if i.ActivityType.Name == "CloseCheckout" {
			v, err := h.env.QueryWorkflow(QueryStatus)
			require.NoError(t, err)
			require.NoError(t, v.Get(&status))
		}
	})
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, 1, checkpoints, "one checkpoint: after the write's batch, none after the read's")
	require.Equal(t, st, status.Changes, "status shows the size the checkpoint after the write measured; the read after it kept it")
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, st, r.Changes, "without numbers from the close, the result keeps the last measured")

	s := &driver{}
	s.Checkout = &session.Checkout{Info: testCheckout}
	s.Changes = st
	d := s.changesDetails()
	require.Contains(t, d, "**changes on longrun/s1:** 2 files changed, +7 -1")
	require.Contains(t, d, "files: `pkg/a`, `pkg/b`")
}
