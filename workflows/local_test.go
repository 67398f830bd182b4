package workflows

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/tools"
)

// With local_reads (the default: absent, or true) the read-only builtin
// tools run as local activities and everything else stays an activity;
// with local_reads false every tool is an activity.
func TestLocalReadsRunReadOnlyToolsLocally(t *testing.T) {
	t.Parallel()
	for _, setting := range []*bool{nil, Flag(true), Flag(false)} {
		local := setting == nil || *setting
		h := newHarness(t, []activities.ModelResponse{
			toolReply(call("r", "read", `{"path":"a"}`), call("g", "grep", `{"pattern":"x"}`), call("l", "list", `{}`), call("o", "glob", `{"pattern":"*.go"}`)),
			toolReply(call("s", "shell", `{"command":"true"}`), call("w", "write", `{"path":"b","content":"x"}`)),
			textReply("done"),
		}, nil)
		var mu sync.Mutex
		var locally, remotely []string
		h.env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, args []any) {
			if info.ActivityType.Name != "RunTool" {
				return // the start-up steps run locally too
			}
			mu.Lock()
			defer mu.Unlock()
			locally = append(locally, args[0].(activities.ToolRequest).CallID)
		})
		h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
			if info.ActivityType.Name != "RunTool" {
				return
			}
			var req activities.ToolRequest
			require.NoError(t, args.Get(&req))
			mu.Lock()
			defer mu.Unlock()
			remotely = append(remotely, req.CallID)
		})
		h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", LocalReads: setting})
		require.NoError(t, h.env.GetWorkflowError())
		var r SessionResult
		require.NoError(t, h.env.GetWorkflowResult(&r))
		require.Equal(t, ResultCompleted, r.Status)
		if local {
			require.ElementsMatch(t, []string{"r", "g", "l", "o"}, locally)
			require.ElementsMatch(t, []string{"s", "w"}, remotely)
		} else {
			require.Empty(t, locally)
			require.ElementsMatch(t, []string{"r", "g", "l", "o", "s", "w"}, remotely)
		}
		msgs := h.conversation(t)
		require.Equal(t, "ok r", byID(msgs, "r").Content)
		require.Equal(t, "ok s", byID(msgs, "s").Content)
	}
}

// A local read that keeps failing is retried like an activity read (3
// attempts) and then paired with its error, and the session goes on.
func TestLocalReadFailureIsPaired(t *testing.T) {
	t.Parallel()
	attempts := 0
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("r", "read", `{"path":"a"}`)),
		textReply("done"),
	}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
		attempts++
		return tools.Result{}, temporal.NewApplicationError("disk on fire", "Test")
	})
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, 3, attempts)
	res := byID(h.conversation(t), "r")
	require.NotNil(t, res)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "disk on fire")
}

// With local_model the model calls run as local activities, retried like
// the activity (a 503-like failure twice, then the reply).
func TestLocalModelCallsRunLocally(t *testing.T) {
	t.Parallel()
	env := newSessionEnv(&Sessions{})
	env.OnActivity(a.ListTools, mock.Anything).Return(catalog(), nil)
	env.OnActivity(a.LoadWorkspaceConfig, mock.Anything, mock.Anything).Return(activities.WorkspaceConfig{}, nil)
	calls := 0
	env.OnActivity(a.CallModel, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req activities.ModelRequest) (activities.ModelResponse, error) {
			calls++
			switch {
			case calls <= 2:
				return activities.ModelResponse{}, temporal.NewApplicationError("503 from the provider", activities.ErrTypeModelFault)
			case req.Turn == 1:
				return toolReply(call("r1", "read", `{"path":"a"}`)), nil
			default:
				return textReply("done"), nil
			}
		})
	env.OnActivity(a.RunTool, mock.Anything, mock.Anything).Return(tools.Result{Content: "ok"}, nil)
	var local, remote []string
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		local = append(local, info.ActivityType.Name)
	})
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		remote = append(remote, info.ActivityType.Name)
	})
	// In place: a session's own checkout is made by an activity task on
	// the worker that will hold it (checkout.go).
	env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", LocalModel: true, InPlace: true})
	require.NoError(t, env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, env.GetWorkflowResult(&r))
	require.Equal(t, "done", r.FinalText)
	require.Equal(t, 4, calls, "two failures retried, then two turns")
	require.NotContains(t, remote, "CallModel")
	require.NotContains(t, remote, "RunTool")
	require.Contains(t, local, "CallModel")
	require.Contains(t, local, "RunTool")
	require.Contains(t, local, "ListTools", "start-up steps run locally too")
	require.Contains(t, local, "LoadWorkspaceConfig")
	require.Empty(t, remote, "nothing goes through an activity task")
}

// In a checkout of its own, a read runs as a local activity when the
// worker running the workflow task holds the checkout. When another
// worker runs it, the local read is answered not here and the read runs
// on the checkout's queue as an activity; the session then sends its
// reads straight there for localRetryTurns turns (no marker each), and
// tries locally once more after them. Every read is answered.
func TestReadsRunLocallyWhereTheCheckoutIs(t *testing.T) {
	t.Parallel()
	turns := localRetryTurns + 2
	for _, tc := range []struct {
		name, taskWorker string
		tried, pinned    []string // reads tried locally; reads run as activities
	}{
		{name: "on the checkout's worker", tried: ids(1, turns)},
		{name: "on another worker", taskWorker: "w2-own",
			tried: []string{"t1", fmt.Sprintf("t%d", 1+localRetryTurns)}, pinned: ids(1, turns)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var replies []activities.ModelResponse
			for i := 1; i <= turns; i++ {
				replies = append(replies, toolReply(call(fmt.Sprintf("t%d", i), "read", fmt.Sprintf(`{"path":"a","offset":%d}`, i))))
			}
			h := newHarness(t, append(replies, textReply("done")), nil)
			h.taskWorker = tc.taskWorker
			h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{Commit: "c0ffee"}, nil)
			var mu sync.Mutex
			var tried, pinned []string
			h.env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, args []any) {
				if info.ActivityType.Name == "RunTool" {
					mu.Lock()
					defer mu.Unlock()
					tried = append(tried, args[0].(activities.ToolRequest).CallID)
				}
			})
			h.env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, args converter.EncodedValues) {
				if info.ActivityType.Name != "RunTool" {
					return
				}
				var req activities.ToolRequest
				require.NoError(t, args.Get(&req))
				require.Equal(t, testCheckoutQueue, info.TaskQueue, "pinned to the checkout's worker")
				require.Empty(t, req.CheckoutQueue, "an activity asks no worker whether it holds the checkout: only that one polls its queue")
				mu.Lock()
				defer mu.Unlock()
				pinned = append(pinned, req.CallID)
			})
			h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase})
			require.NoError(t, h.env.GetWorkflowError())
			var r SessionResult
			require.NoError(t, h.env.GetWorkflowResult(&r))
			require.Equal(t, ResultCompleted, r.Status)
			require.Equal(t, tc.tried, tried)
			require.Equal(t, tc.pinned, pinned)
			msgs := h.conversation(t)
			for _, id := range ids(1, turns) {
				require.Equal(t, "ok "+id, byID(msgs, id).Content)
			}
		})
	}
}

// ids are the call ids t<from>..t<to>.
func ids(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("t%d", i))
	}
	return out
}
