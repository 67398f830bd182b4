package workflows

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/tools"
)

// TestCheckoutCallsHaveAHeartbeatTimeout: the calls of a session's
// checkout (open, checkpoint, close) are retried within the heartbeat
// timeout when their worker dies, not at their 5 to 10 minute
// start-to-close timeout, which stalled sessions in make chaos.
func TestCheckoutCallsHaveAHeartbeatTimeout(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w1", "write", `{"path":"a","content":"x"}`)),
		textReply("done"),
	}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
		return tools.Result{Content: "ok"}, nil
	})
	// The workflow's task runs on another worker than the checkout's, so
	// the checkpoint is an activity on the checkout's queue (here.go). As
	// a local activity it needs no heartbeat: it dies with the workflow
	// task that runs it, which is retried.
	h.taskWorker = "another-worker"
	h.env.OnActivity(a.Checkpoint, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, r activities.CheckpointRequest) (activities.CheckpointResult, error) {
			if err := h.notHere(ctx, r.CheckoutQueue); err != nil {
				return activities.CheckpointResult{}, err
			}
			return activities.CheckpointResult{Commit: "cp1"}, nil
		})
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, r activities.CloseCheckoutRequest) (activities.CloseCheckoutResult, error) {
			if err := h.notHere(ctx, r.CheckoutQueue); err != nil {
				return activities.CloseCheckoutResult{}, err
			}
			return activities.CloseCheckoutResult{Commit: "c0ffee"}, nil
		})
	var mu sync.Mutex
	heartbeat := map[string]time.Duration{}
	h.env.SetOnActivityStartedListener(func(i *activity.Info, _ context.Context, _ converter.EncodedValues) {
		if i.IsLocalActivity {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		heartbeat[i.ActivityType.Name] = i.HeartbeatTimeout
	})
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase})
	require.NoError(t, h.env.GetWorkflowError())
	for _, name := range []string{"OpenCheckout", "Checkpoint", "CloseCheckout"} {
		require.Contains(t, heartbeat, name, "the session ran %s", name)
		require.Positive(t, heartbeat[name], "%s has a heartbeat timeout", name)
		require.LessOrEqual(t, heartbeat[name], time.Minute, "%s's heartbeat timeout", name)
	}
}
