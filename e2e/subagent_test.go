package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/follow"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// subagentModel plays both the parent and the child: it tells them apart
// by their first user message. The parent delegates with task; the child
// runs childCall, then answers.
func subagentModel(profile string, childCall sm.Call) sm.Responder {
	return func(req sm.Request) (sm.Reply, bool) {
		first, results := "", 0
		for _, m := range req.Messages {
			if m.Role == "user" && first == "" {
				first = m.Content
			}
			if m.Role == "tool" {
				results++
			}
		}
		switch {
		case first == "delegate" && results == 0:
			args, _ := json.Marshal(map[string]string{"description": "do the child's part", "prompt": "child-work", "profile": profile})
			return sm.Tools(sm.Call{ID: "c_task", Name: "task", Arguments: string(args)}), true
		case first == "delegate":
			return sm.Text("parent done"), true
		case results == 0:
			return sm.Tools(childCall), true
		default:
			return sm.Text("child done"), true
		}
	}
}

func replays(t *testing.T, id string) {
	t.Helper()
	rep := worker.NewWorkflowReplayer()
	rep.RegisterWorkflowWithOptions((&workflows.Sessions{}).AgentSession, workflow.RegisterOptions{Name: workflows.WorkflowType})
	// The workflow id matters: a sub-agent's id is derived from its
	// parent's, and the replayer would otherwise use a made-up one.
	require.NoError(t, rep.ReplayWorkflowHistoryWithOptions(nil, history(t, id),
		worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id}}), "history of %s replays", id)
}

// A sub-agent's call that needs a person shows on the parent's pending
// list, qualified by the child's id; approving it there decides it in the
// child, whose answer becomes the parent's task result.
func TestSubagentApprovalOnTheParent(t *testing.T) {
	t.Parallel()
	e := newEnvResponder(t, subagentModel("build", sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "child.txt", "content": "from the child\n"}`}))
	id := e.start(workflows.SessionInput{Prompt: "delegate"})
	child := id + "/task-1"
	followed := e.starterBackground("--json", "events", id, "--follow", "--sub-agents")
	p := waitPending(t, id, 1)
	require.Equal(t, child+"/c_w", p[0].CallID)
	require.Equal(t, child, p[0].Session)
	require.Equal(t, "write", p[0].Tool)
	// The parent's stream, with its sub-agents', shows the child's call
	// waiting; without them it does not.
	out, err := e.starter("--json", "events", id, "--sub-agents")
	require.NoError(t, err, out)
	require.Contains(t, subagentSummaries(decodeLines[follow.Event](t, out)), child+" call_proposed c1 write ask")
	out, err = e.starter("--json", "events", id)
	require.NoError(t, err, out)
	for _, ev := range decodeLines[follow.Event](t, out) {
		require.Empty(t, ev.SubAgent, "a sub-agent's event without --sub-agents: %+v", ev)
	}
	out, err = e.starter("approve", id, child+"/c_w")
	require.NoError(t, err, out)

	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Equal(t, "parent done", r.FinalText)
	task := resultFor(e.checkSession(id), "c_task")
	require.Equal(t, conversation.ReasonRan, task.Reason, task.Content)
	require.Contains(t, task.Content, "child done")
	require.Equal(t, conversation.ReasonRan, resultFor(e.checkSession(child), "c_w").Reason)
	require.Equal(t, "from the child\n", readFile(t, e.workspace+"/child.txt"))
	replays(t, id)
	replays(t, child)

	// Followed as it happened, and read after the fact, the child's
	// events come between its start and the task call's end, marked as
	// the child's; the stream ends once, with the parent.
	want := []string{
		" call_started c1 task",
		" subagent_started c1 task",
		child + " call_proposed c1 write ask",
		child + " call_decided c1 write approve by person",
		child + " call_finished c1 write ran",
		child + " session_ended completed",
		" call_finished c1 task ran",
		" session_ended completed",
	}
	all := decodeLines[follow.Event](t, followed.wait(t))
	got := subagentSummaries(all)
	requireInOrder(t, got, append(want, " closed completed")...)
	require.Equal(t, follow.KindClosed, all[len(all)-1].Kind)
	closed := 0
	for _, ev := range all {
		if ev.Kind == follow.KindClosed {
			closed++
		}
	}
	require.Equal(t, 1, closed, "only the parent's stream says it closed:\n%s", strings.Join(got, "\n"))
	out, err = e.starter("--json", "events", id, "--sub-agents")
	require.NoError(t, err, out)
	requireInOrder(t, subagentSummaries(decodeLines[follow.Event](t, out)), want...)

	// watch shows what the sub-agent did beside the parent's
	// conversation, a line each.
	out, err = e.starter("watch", id)
	require.NoError(t, err, out)
	for _, line := range []string{"sub-agent " + child + " started: do the child's part", "[" + child + "] call c1 write (write: child.txt) proposed: ask",
		"[" + child + "] call c1 write (write: child.txt) finished: ran", "[" + child + "] session ended: completed"} {
		require.Contains(t, out, line)
	}
	// watch --json: a sub-agent's events are lines of its own session.
	out, err = e.starter("--json", "watch", id)
	require.NoError(t, err, out)
	type watchLine struct {
		Type      string        `json:"type"`
		SessionID string        `json:"session_id"`
		Event     *follow.Event `json:"event"`
	}
	var mine, its []string
	for _, l := range decodeLines[watchLine](t, out) {
		if l.Type != "event" || l.Event == nil || l.Event.Seq == 0 {
			continue
		}
		switch l.SessionID {
		case id:
			require.Empty(t, l.Event.SubAgent)
			mine = append(mine, l.Event.Kind)
		case child:
			require.Equal(t, child, l.Event.SubAgent)
			its = append(its, l.Event.Kind)
		default:
			t.Fatalf("an event line of %q", l.SessionID)
		}
	}
	require.Contains(t, mine, eventlog.KindSubagentStarted)
	require.Contains(t, its, eventlog.KindCallProposed)
	require.Contains(t, its, eventlog.KindEnded)
}

// subagentSummaries is summaries with the sub-agent whose event it is
// first ("" for the parent's own).
func subagentSummaries(all []follow.Event) []string {
	evs := make([]eventlog.Event, len(all))
	for i, ev := range all {
		evs[i] = ev.Event
	}
	out := summaries(evs)
	for i, ev := range all {
		out[i] = ev.SubAgent + " " + out[i]
	}
	return out
}

// Cancelling the parent while its sub-agent runs a command cancels the
// child too: the command's process group is killed, both sessions close
// Canceled with every call paired, and both histories replay.
func TestSubagentCancelledWithItsParent(t *testing.T) {
	t.Parallel()
	marker := "longrun-child-" + randHex(6)
	e := newEnvResponder(t, subagentModel("auto", sm.Call{ID: "c_sh", Name: "shell", Arguments: `{"command": "sleep 120; true # ` + marker + `"}`}))
	id := e.start(workflows.SessionInput{Prompt: "delegate", Profile: "auto"})
	child := id + "/task-1"
	waitFor(t, "the child's command to run", 60*time.Second, func() bool { return len(processesWith(marker)) > 0 })
	out, err := e.starter("cancel", id)
	require.NoError(t, err, out)
	waitFor(t, "the command to be killed", 20*time.Second, func() bool { return len(processesWith(marker)) == 0 })
	for _, wid := range []string{id, child} {
		waitFor(t, wid+" to close", 30*time.Second, func() bool {
			d, err := describeRun(context.Background(), tc, wid, "")
			return err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED
		})
	}
	msgs := e.checkSession(id)
	task := resultFor(msgs, "c_task")
	require.Equal(t, conversation.ReasonCancelledWhileRunning, task.Reason)
	sh := resultFor(e.checkSession(child), "c_sh")
	require.Equal(t, conversation.ReasonCancelledWhileRunning, sh.Reason)
	require.True(t, strings.HasPrefix(child, id))
	replays(t, id)
	replays(t, child)
	recordHistory(t, id, "subagent_parent_cancelled")
	recordHistory(t, child, "subagent_child_cancelled")
}
