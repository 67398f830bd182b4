package workflows

import (
	"context"
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
