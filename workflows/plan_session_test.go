package workflows

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
)

// The pool bounds the calls in flight; every call still runs and the
// results keep the model's order.
func TestBatchPoolBound(t *testing.T) {
	t.Parallel()
	var calls []conversation.ToolCall
	for i := 1; i <= 7; i++ {
		calls = append(calls, conversation.ToolCall{ID: fmt.Sprintf("c%d", i), Name: "list", Arguments: fmt.Sprintf(`{"path":"d%d"}`, i)})
	}
	var mu sync.Mutex
	inFlight, peak := 0, 0
	h := newHarness(t, []activities.ModelResponse{toolReply(calls...), textReply("done")},
		func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
			mu.Lock()
			inFlight++
			peak = max(peak, inFlight)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond)
			mu.Lock()
			inFlight--
			mu.Unlock()
			return tools.Result{Content: "ok " + r.CallID}, nil
		})
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", MaxParallelTools: 3})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	require.Len(t, h.ran, 7)
	require.Equal(t, 3, peak)
	var order []string
	for _, m := range h.requests[1].Messages {
		if m.Result != nil {
			order = append(order, m.Result.CallID)
		}
	}
	require.Equal(t, []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7"}, order)
}

// [read, read, edit, read] of one file: the edit waits for both reads and
// the last read for the edit. The edit gets the hash the reads recorded.
func TestBatchPlanOrdersConflictingCalls(t *testing.T) {
	t.Parallel()
	read := func(id string) conversation.ToolCall {
		return conversation.ToolCall{ID: id, Name: "read", Arguments: `{"path":"a.go","offset":` + id[1:] + `}`}
	}
	edit := conversation.ToolCall{ID: "c3", Name: "edit", Arguments: `{"path":"a.go","old_string":"x","new_string":"y"}`}
	var mu sync.Mutex
	var events []string
	var editReq activities.ToolRequest
	h := newHarnessWith(t, activities.WorkspaceConfig{}, []activities.ModelResponse{toolReply(read("c1"), read("c2"), edit, read("c4")), textReply("done")},
		func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
			mu.Lock()
			events = append(events, "start "+r.CallID)
			if r.Name == "edit" {
				editReq = r
			}
			mu.Unlock()
			time.Sleep(10 * time.Millisecond)
			mu.Lock()
			events = append(events, "end "+r.CallID)
			mu.Unlock()
			return tools.Result{Content: "ok", Files: []tools.FileVersion{{Path: "a.go", SHA256: "h-" + r.CallID}}}, nil
		})
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto"})
	require.True(t, h.env.IsWorkflowCompleted())
	require.NoError(t, h.env.GetWorkflowError())
	require.Len(t, events, 8)
	pos := map[string]int{}
	for i, e := range events {
		pos[e] = i
	}
	require.Less(t, pos["end c1"], pos["start c3"])
	require.Less(t, pos["end c2"], pos["start c3"])
	require.Less(t, pos["end c3"], pos["start c4"])
	require.Less(t, pos["start c2"], pos["end c1"], "the two reads overlap")
	require.True(t, editReq.GuardWrites)
	require.Contains(t, []string{"h-c1", "h-c2"}, editReq.Seen["a.go"])
}

// Only tools that change files get the guard's record.
func TestSeenGoesOnlyToFileEditingTools(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var reqs []activities.ToolRequest
	h := newHarnessWith(t, activities.WorkspaceConfig{}, []activities.ModelResponse{
		toolReply(conversation.ToolCall{ID: "c1", Name: "read", Arguments: `{"path":"a.go"}`}),
		toolReply(
			conversation.ToolCall{ID: "c2", Name: "shell", Arguments: `{"command":"make"}`},
			conversation.ToolCall{ID: "c3", Name: "write", Arguments: `{"path":"b.go","content":""}`},
		),
		textReply("done"),
	}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
		mu.Lock()
		defer mu.Unlock()
		reqs = append(reqs, r)
		return tools.Result{Content: "ok", Files: []tools.FileVersion{{Path: "a.go", SHA256: "h1"}}}, nil
	})
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Network: true})
	require.NoError(t, h.env.GetWorkflowError())
	require.Len(t, reqs, 3)
	require.Nil(t, reqs[0].Seen)
	require.Nil(t, reqs[1].Seen, "shell is not a file-editing tool")
	require.Equal(t, map[string]string{"a.go": "h1"}, reqs[2].Seen)
	for _, r := range reqs {
		require.True(t, r.AllowNetwork, "the session's network choice reaches every call")
	}
}

// An interrupt while a barrier runs stops it and gives the calls queued
// behind it a synthetic result without running them; the session then
// takes the next message.
func TestInterruptWithCallsQueuedBehindABarrier(t *testing.T) {
	t.Parallel()
	var h *harness
	h = newHarness(t, []activities.ModelResponse{
		toolReply(
			conversation.ToolCall{ID: "sh", Name: "shell", Arguments: `{"command":"make slow"}`},
			conversation.ToolCall{ID: "r1", Name: "read", Arguments: `{"path":"a"}`},
			conversation.ToolCall{ID: "r2", Name: "read", Arguments: `{"path":"b"}`},
		),
		textReply("stopped"),
	}, func(ctx context.Context, r activities.ToolRequest) (tools.Result, error) {
		h.env.SignalWorkflow(SignalInterrupt, nil)
		// The test environment cancels the turn at once; the activity
		// itself only has to go away.
		for end := time.Now().Add(time.Second); ctx.Err() == nil && time.Now().Before(end); {
			activity.RecordHeartbeat(ctx)
			time.Sleep(10 * time.Millisecond)
		}
		return tools.Result{}, temporal.NewCanceledError()
	})
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(SignalUserMessage, UserMessage{Text: "never mind"})
	}, time.Hour)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, []string{"sh"}, h.ran, "the queued reads never ran")
	msgs := h.conversation(t)
	require.NoError(t, conversation.CheckPairing(msgs))
	require.Equal(t, conversation.ReasonInterrupted, byID(msgs, "sh").Reason)
	for _, id := range []string{"r1", "r2"} {
		r := byID(msgs, id)
		require.Equal(t, conversation.ReasonInterrupted, r.Reason)
		require.Contains(t, r.Content, "before it ran")
	}
	require.Len(t, h.requests, 2)
}

// The plan tool is answered by the session: the list is in the todos
// query and the current details, and the next request ends with it.
func TestTodoPlan(t *testing.T) {
	t.Parallel()
	plan := `{"todos":[{"content":"read the code","status":"completed"},{"content":"fix the bug","status":"in_progress"},{"content":"run the tests","status":"pending"}]}`
	h := newHarness(t, []activities.ModelResponse{
		toolReply(conversation.ToolCall{ID: "p1", Name: "todo", Arguments: plan}),
		textReply("working on it"),
	}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Empty(t, h.ran, "no activity for the plan")
	msgs := h.conversation(t)
	require.Equal(t, "plan updated: 3 steps, 1 completed, 1 in progress, 1 pending", byID(msgs, "p1").Content)
	v, err := h.env.QueryWorkflow(QueryTodos)
	require.NoError(t, err)
	var todos []Todo
	require.NoError(t, v.Get(&todos))
	require.Len(t, todos, 3)
	require.Equal(t, TodoInProgress, todos[1].Status)
	require.Len(t, h.requests[1].Reminders, 1, "the plan is a reminder, not part of the conversation")
	last := h.requests[1].Reminders[0]
	require.Equal(t, conversation.RoleSystem, last.Role)
	require.Contains(t, last.Content, "- [>] fix the bug")
	require.Contains(t, last.Content, "- [x] read the code")
}
