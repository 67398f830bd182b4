package workflows

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
)

// A background shell's job is named by the session and remembered with
// its worker's queue; calls about it go to that queue, an unknown id is
// answered without any activity, and the session's end kills its jobs on
// that worker.
func TestBackgroundJobRouting(t *testing.T) {
	t.Parallel()
	type ran struct{ id, queue, jobID string }
	var mu sync.Mutex // job_output and job_list run at once
	var runs []ran
	var killedOn []string
	h := newHarness(t, []activities.ModelResponse{
		toolReply(conversation.ToolCall{ID: "c_bg", Name: "shell", Arguments: `{"command":"make serve","background":true}`}),
		toolReply(
			conversation.ToolCall{ID: "c_out", Name: "job_output", Arguments: `{"id":"job-1"}`},
			conversation.ToolCall{ID: "c_bad", Name: "job_kill", Arguments: `{"id":"job-9"}`},
			conversation.ToolCall{ID: "c_list", Name: "job_list", Arguments: `{}`},
		),
		textReply("done"),
	}, func(ctx context.Context, r activities.ToolRequest) (tools.Result, error) {
		mu.Lock()
		runs = append(runs, ran{r.CallID, activity.GetInfo(ctx).TaskQueue, r.JobID})
		mu.Unlock()
		res := tools.Result{Content: "ok " + r.CallID}
		if r.CallID == "c_bg" {
			res.WorkerQueue = "longrun-worker-a"
		}
		return res, nil
	})
	h.env.OnActivity(a.KillJobs, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, session string) ([]string, error) {
			killedOn = append(killedOn, activity.GetInfo(ctx).TaskQueue)
			return []string{"job-1"}, nil
		})
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, ran{"c_bg", "default-test-taskqueue", "job-1"}, runs[0])
	require.ElementsMatch(t, []ran{{"c_out", "longrun-worker-a", ""}, {"c_list", "longrun-worker-a", ""}}, runs[1:])
	msgs := h.conversation(t)
	bad := byID(msgs, "c_bad")
	require.True(t, bad.IsError)
	require.Contains(t, bad.Content, `no background job "job-9" in this session; its jobs: job-1`)
	require.Equal(t, []string{"longrun-worker-a"}, killedOn)
}
