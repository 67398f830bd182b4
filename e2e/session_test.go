package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// One reply asks for read, write and shell together: the read runs at
// once, write and shell wait; `starter approve` releases them.
func TestReadWriteShellWithApproval(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(
			sm.Call{ID: "c_read", Name: "read", Arguments: `{"path": "README.md"}`},
			sm.Call{ID: "c_write", Name: "write", Arguments: `{"path": "out/hello.txt", "content": "hello from the model\n"}`},
			sm.Call{ID: "c_shell", Name: "shell", Arguments: `{"command": "cp out/hello.txt out/copy.txt && cat out/copy.txt"}`},
		),
		sm.Text("all done"),
	)
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "README.md"), []byte("the readme\n"), 0o644))
	// local_reads off: the read's RunTool activity is what shows it ran
	// before any approval.
	id := e.start(workflows.SessionInput{Prompt: "make a file", LocalReads: workflows.Flag(false)})

	pending := waitPending(t, id, 2)
	require.Equal(t, []string{"c_write", "c_shell"}, []string{pending[0].CallID, pending[1].CallID})
	require.Equal(t, workflows.PhaseWaitingApproval, query[workflows.Status](t, id, workflows.QueryStatus).Phase)
	// The read already ran, while the others wait.
	waitFor(t, "the read to complete before any approval", 20*time.Second, func() bool {
		return completedToolRuns(t, id) == 1 // RunTool(read)
	})
	_, err := os.Stat(filepath.Join(e.workspace, "out", "hello.txt"))
	require.True(t, os.IsNotExist(err), "write ran before approval")

	out, err := e.starter("approve", id, "--all")
	require.NoError(t, err, out)

	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Equal(t, "all done", r.FinalText)
	require.Equal(t, 2, r.Turns)
	got, err := os.ReadFile(filepath.Join(e.workspace, "out", "hello.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello from the model\n", string(got))

	msgs := e.checkSession(id)
	require.Contains(t, resultFor(msgs, "c_read").Content, "the readme")
	require.Equal(t, conversation.ReasonRan, resultFor(msgs, "c_write").Reason)
	require.Contains(t, resultFor(msgs, "c_shell").Content, "hello from the model")
	// The second request carried all three results, in call order.
	reqs := e.model.Requests()
	require.Len(t, reqs, 2)
	var order []string
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			order = append(order, m.ToolCallID)
		}
	}
	require.Equal(t, []string{"c_read", "c_write", "c_shell"}, order)
	recordHistory(t, id, "approve_read_write_shell")
}

// A denial's feedback reaches the model as that call's result.
func TestDenyWithFeedback(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "x.txt", "content": "x"}`}),
		sm.Text("understood"),
	)
	id := e.start(workflows.SessionInput{Prompt: "write x"})
	waitPending(t, id, 1)

	out, err := e.starter("deny", id, "c_w", "--feedback", "put it under docs/ instead")
	require.NoError(t, err, out)

	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	reqs := e.model.Requests()
	require.Len(t, reqs, 2)
	content, ok := reqs[1].LastToolResult("c_w")
	require.True(t, ok, "the second request has no result for c_w")
	require.Contains(t, content, "put it under docs/ instead")
	require.NoFileExists(t, filepath.Join(e.workspace, "x.txt"))
	msgs := e.checkSession(id)
	require.Equal(t, conversation.ReasonDenied, resultFor(msgs, "c_w").Reason)
	recordHistory(t, id, "deny_with_feedback")
}

// Unknown approval ids are refused by the CLI with the pending ids listed.
func TestApproveUnknownCallID(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "x.txt", "content": "x"}`}),
		sm.Text("ok"),
	)
	id := e.start(workflows.SessionInput{Prompt: "write x"})
	waitPending(t, id, 1)
	out, err := e.starter("approve", id, "no-such-call")
	require.Error(t, err)
	require.Contains(t, out, "  c1  write", "the waiting call, by the session's id")

	// A raw signal with an unknown id (as from the UI) is recorded, not fatal.
	require.NoError(t, tc.SignalWorkflow(context.Background(), id, "", workflows.SignalApproval,
		map[string]string{"call_id": "bogus", "decision": "approve"}))
	waitFor(t, "the rejected signal in status", 10*time.Second, func() bool {
		st := query[workflows.Status](t, id, workflows.QueryStatus)
		return len(st.Rejected) == 1 && strings.Contains(st.Rejected[0], "bogus")
	})
	out, err = e.starter("approve", id)
	require.NoError(t, err, out)
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	e.checkSession(id)
}

// Invalid arguments become error results naming the field; nothing runs,
// nobody is asked, the session goes on.
func TestInvalidArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(
			sm.Call{ID: "c_missing", Name: "read", Arguments: `{}`},
			sm.Call{ID: "c_type", Name: "read", Arguments: `{"path": "a", "limit": "ten"}`},
			sm.Call{ID: "c_json", Name: "write", Arguments: `{"path": "a", "content": `},
			sm.Call{ID: "c_unknown", Name: "delete_everything", Arguments: `{}`},
		),
		sm.Text("fixed"),
	)
	id := e.start(workflows.SessionInput{Prompt: "go"})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Equal(t, "fixed", r.FinalText)
	msgs := e.checkSession(id)
	require.Contains(t, resultFor(msgs, "c_missing").Content, "field `path`: required")
	require.Contains(t, resultFor(msgs, "c_type").Content, "field `limit`")
	require.Contains(t, resultFor(msgs, "c_json").Content, "not valid JSON")
	require.Contains(t, resultFor(msgs, "c_unknown").Content, `unknown tool "delete_everything"`)
	for _, id := range []string{"c_missing", "c_type", "c_json"} {
		require.Equal(t, conversation.ReasonInvalidArguments, resultFor(msgs, id).Reason)
		require.True(t, resultFor(msgs, id).IsError)
	}
}

// completedToolRuns counts RunTool activities that completed.
func completedToolRuns(t *testing.T, id string) int {
	scheduled := map[int64]string{}
	n := 0
	for _, ev := range history(t, id).Events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			scheduled[ev.GetEventId()] = ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if scheduled[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] == "RunTool" {
				n++
			}
		}
	}
	return n
}
