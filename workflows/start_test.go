package workflows

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
)

// A call that runs at most once (a command) and came back from the server
// with no worker having begun it (a heartbeat timeout with no heartbeat
// recorded, or a worker that could not get its first heartbeat recorded)
// is scheduled again and its real result recorded; one whose first
// heartbeat was recorded and then timed out is worker_lost, never run
// twice.
func TestACallNoWorkerBeganIsScheduledAgain(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		// fail is what each attempt before the last answers.
		fail []error
		// want: the result's reason, and how many times RunTool was called.
		reason conversation.Reason
		runs   int
	}{
		{"heartbeat timeout, nothing recorded", []error{temporal.NewHeartbeatTimeoutError()}, conversation.ReasonRan, 2},
		{"first heartbeat not recorded", []error{temporal.NewNonRetryableApplicationError("no", activities.ErrTypeNotStarted, nil)}, conversation.ReasonRan, 2},
		{"twice", []error{temporal.NewHeartbeatTimeoutError(), temporal.NewHeartbeatTimeoutError()}, conversation.ReasonRan, 3},
		{"never begun three times", []error{temporal.NewHeartbeatTimeoutError(), temporal.NewHeartbeatTimeoutError(), temporal.NewHeartbeatTimeoutError()}, conversation.ReasonWorkerLost, 3},
		{"began, then lost", []error{temporal.NewHeartbeatTimeoutError("started")}, conversation.ReasonWorkerLost, 1},
		{"began, then ran too long", []error{temporal.NewTimeoutError(0, nil)}, conversation.ReasonWorkerLost, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			runs := 0
			var once []bool
			h := newHarness(t, []activities.ModelResponse{
				toolReply(call("s", "shell", `{"command":"touch x"}`)),
				textReply("done"),
			}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
				runs++
				once = append(once, r.AtMostOnce)
				if runs <= len(c.fail) {
					return tools.Result{}, c.fail[runs-1]
				}
				return tools.Result{Content: "made x"}, nil
			})
			h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto"})
			require.NoError(t, h.env.GetWorkflowError())
			res := byID(h.conversation(t), "s")
			require.NotNil(t, res)
			require.Equal(t, c.reason, res.Reason, res.Content)
			require.Equal(t, c.runs, runs, "RunTool calls")
			for _, o := range once {
				require.True(t, o, "a command is sent as a call that runs at most once")
			}
			if c.reason == conversation.ReasonRan {
				require.Equal(t, "made x", res.Content)
			}
		})
	}
}

// A read-only call is retried by the server (three attempts) and is not
// marked to run at most once: its worker asks no confirmed start.
func TestAReadIsNotAtMostOnce(t *testing.T) {
	t.Parallel()
	var once []bool
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("r", "read", `{"path":"a"}`)),
		textReply("done"),
	}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
		once = append(once, r.AtMostOnce)
		return tools.Result{Content: "a"}, nil
	})
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, []bool{false}, once)
}
