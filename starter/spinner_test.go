package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/workflows"
)

func TestActivity(t *testing.T) {
	t.Parallel()
	user := conversation.Message{Role: "user", Content: "go"}
	calls := conversation.Message{Role: "assistant", ToolCalls: []conversation.ToolCall{
		{ID: "c1", Ref: "c1", Name: "shell", Arguments: `{"command":"go test ./...","timeout":60}`},
		{ID: "c2", Ref: "c2", Name: "read", Arguments: `{"path":"README.md"}`},
		{ID: "c3", Ref: "c3", Name: "list", Arguments: `{}`},
	}}
	res := func(id string) conversation.Message {
		return conversation.ToolMessage(conversation.ToolResult{CallID: id, Content: "ok", Reason: conversation.ReasonRan})
	}
	tests := []struct {
		name    string
		msgs    []conversation.Message
		pending int
		phase   string
		want    string
	}{
		{"model asked after the prompt", []conversation.Message{user}, 0, workflows.PhaseRunning, "model thinking…"},
		{"tools running", []conversation.Message{user, calls}, 0, workflows.PhaseRunning, "running shell: go test ./... (+2 more)"},
		{"the first unfinished call is named", []conversation.Message{user, calls, res("c1")}, 0, workflows.PhaseRunning, "running read: README.md (+1 more)"},
		{"no telling argument", []conversation.Message{user, calls, res("c1"), res("c2")}, 0, workflows.PhaseRunning, "running list: {}"},
		{"all results in: the model again", []conversation.Message{user, calls, res("c1"), res("c2"), res("c3")}, 0, workflows.PhaseRunning, "model thinking…"},
		{"waiting for a person", []conversation.Message{user, calls}, 1, workflows.PhaseRunning, ""},
		{"waiting for input", []conversation.Message{user}, 0, workflows.PhaseWaitingInput, ""},
		{"waiting for approval", []conversation.Message{user, calls}, 0, workflows.PhaseWaitingApproval, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, activity(tc.msgs, tc.pending, tc.phase))
		})
	}
}

func TestSpinnerLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, "\r\x1b[K\x1b[2m⠋ model thinking… 3s\x1b[0m", spinnerLine(style{color: true}, 0, "model thinking…", 3900*time.Millisecond, 80))
	require.Equal(t, "\r\x1b[K⠙ running shell: make 0s", spinnerLine(style{}, 1, "running shell: make", 0, 80))
	long := spinnerLine(style{}, 0, "running shell: "+strings.Repeat("x", 200), 0, 40)
	require.Len(t, []rune(strings.TrimPrefix(long, eraseLine)), 39, "cut so the line never wraps")
}

// spinFake runs a session through a model call, a tool call and another
// model call, with nobody asked, then closes.
func spinFake() *fakeClient {
	msgs := []conversation.Message{
		{Role: "user", Content: "go"},
		{Role: "assistant", ToolCalls: []conversation.ToolCall{{ID: "call_1", Ref: "call_1", Name: "shell", Arguments: `{"command":"make"}`}}},
		conversation.ToolMessage(conversation.ToolResult{CallID: "call_1", Ref: "call_1", Content: "ok", Reason: conversation.ReasonRan}),
		{Role: "assistant", Content: "built"},
	}
	return &fakeClient{
		query: func(name string, n int) (any, error) {
			switch name {
			case workflows.QueryConversation:
				return msgs[:min(n+1, len(msgs))], nil
			case workflows.QueryPendingApprovals:
				return []workflows.PendingApproval{}, nil
			case workflows.QueryStatus:
				if n >= 3 {
					return workflows.Status{Phase: workflows.PhaseWaitingInput}, nil
				}
				return workflows.Status{Phase: workflows.PhaseRunning}, nil
			}
			return nil, fmt.Errorf("unexpected query %s", name)
		},
		describe: func(n int) (enumspb.WorkflowExecutionStatus, error) {
			if n >= 4 {
				return enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil
			}
			return enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
		},
		result: completedWith(workflows.ResultCompleted),
	}
}

func TestWatchSpinnerIsErasedBeforeOutput(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := runUI(t, context.Background(), spinFake(), strings.NewReader(""), true, "watch", "s1")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "⠋ model thinking… 0s")
	require.Contains(t, stdout, "⠙ running shell: make 0s")
	// What stays on screen of each line is what follows its last \r: never
	// a spinner, which would otherwise be left in front of real output.
	for _, line := range strings.Split(stdout, "\n") {
		shown := line[strings.LastIndex(line, "\r")+1:]
		shown = strings.TrimPrefix(shown, "\x1b[K")
		require.NotContains(t, shown, "thinking", "%q", line)
		require.NotContains(t, shown, "running shell", "%q", line)
	}
	require.Contains(t, stdout, "\x1b[1;35massistant:\x1b[0m built\n")
	require.NotContains(t, stdout, "⠼", "the session waits for input at the end: no spinner")

	// The same session piped: no spinner, no codes, and a status query
	// only when a tool result is new (the guardian's decisions on it).
	f := spinFake()
	_, plain, _ := runUI(t, context.Background(), f, strings.NewReader(""), false, "watch", "s1")
	require.NotContains(t, plain, "\x1b")
	require.NotContains(t, plain, "\r")
	require.Equal(t, 1, f.queries[workflows.QueryStatus])
}
