package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/checkout"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/workflows"
)

// Must show 2 of issue 31: two worker processes on one workspace, each
// with a state directory of its own. The session's checkout is made on
// A; then A stops (its model call drains) and B, started only now, takes
// the session's workflow tasks; A comes back on its state directory (the
// same checkout queue) while the workflow stays sticky on B. Every
// read, grep, glob and list is first tried as a local activity on B,
// answered not here, and runs on A through the checkout's queue; the
// write, the checkpoint and the close run there too, the session
// completes, its branch holds the write, B's disk holds no checkout, and
// the history replays.
func TestCallsRunWhereTheCheckoutIsWhenTheWorkflowTaskIsElsewhere(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	git(t, ws, "init", "-q", ".")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "greeting.txt"), []byte("hello\n"), 0o644))
	git(t, ws, "add", "greeting.txt")
	git(t, ws, "commit", "-qm", "first")
	e := &env{
		t: t, workspace: ws, taskQueue: "e2e-" + randHex(6), apiKey: "sk-test-" + randHex(16),
		// One transcript store for both, as workers of one deployment
		// share: either may call the model or answer the queries.
		workerArgs: []string{"--transcript", t.TempDir()},
		model: sm.New(
			// A drains this call while it waits: the session is then
			// between workflow tasks, and B takes the next one.
			sm.Reply{Delay: 4 * time.Second, ToolCalls: []sm.Call{
				{ID: "r1", Name: "read", Arguments: `{"path": "greeting.txt"}`},
				{ID: "g1", Name: "grep", Arguments: `{"pattern": "hel+o"}`},
				{ID: "o1", Name: "glob", Arguments: `{"pattern": "*.txt"}`},
				{ID: "l1", Name: "list", Arguments: `{}`},
				{ID: "w1", Name: "write", Arguments: `{"path": "two.txt", "content": "two\n"}`},
			}},
			sm.Tools(
				sm.Call{ID: "r2", Name: "read", Arguments: `{"path": "two.txt"}`},
				sm.Call{ID: "g2", Name: "grep", Arguments: `{"pattern": "two"}`},
			),
			sm.Text("Wrote two.txt"),
		),
	}
	t.Cleanup(e.model.Close)
	e.startWorker()
	a1 := e.worker
	id := e.startIsolated(workflows.SessionInput{Prompt: "read and write", Profile: "auto"})
	waitFor(t, "the first model call, on A", 30*time.Second, func() bool { return len(e.model.Requests()) == 1 })
	co := query[*session.Checkout](t, id, workflows.QueryCheckout)
	require.NotNil(t, co)
	name := checkout.Sanitize(id)
	require.Equal(t, filepath.Join(e.stateDir, checkout.Dir, name), co.Dir, "the checkout is A's")

	stopProcess(a1) // SIGINT: A stops polling and drains the model call
	b := *e
	b.stateDir, b.configDir = t.TempDir(), t.TempDir()
	b.startWorker()
	waitFor(t, "B to take the workflow task and pin the reads to A's queue", 60*time.Second, func() bool {
		return scheduled(history(t, id), "RunTool") > 0
	})
	e.startWorker() // A again: the same state directory, so the same checkout queue
	a2 := e.worker

	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	require.Equal(t, "two\n", gitOut(t, ws, "show", r.Branch+":two.txt"), "the write ran in A's checkout")
	msgs := e.checkSession(id)
	for id, want := range map[string]string{"r1": "hello", "g1": "greeting.txt", "o1": "greeting.txt", "l1": "greeting.txt", "r2": "two", "g2": "two.txt"} {
		res := resultFor(msgs, id)
		require.NotNil(t, res, id)
		require.False(t, res.IsError, "%s: %s", id, res.Content)
		require.Contains(t, res.Content, want, id)
	}
	require.NoDirExists(t, filepath.Join(b.stateDir, checkout.Dir, name), "B never held the checkout")

	h := history(t, id)
	onA := []string{fmt.Sprintf("%d@", a1.Process.Pid), fmt.Sprintf("%d@", a2.Process.Pid)}
	onB := fmt.Sprintf("%d@", b.worker.Process.Pid)
	calls := pinnedCalls(h, co.Queue)
	for _, want := range []string{"RunTool", "Checkpoint", "CloseCheckout"} {
		require.NotEmpty(t, calls[want], "%s ran on the checkout's queue", want)
	}
	require.Len(t, calls["RunTool"], 7, "every tool call went to the checkout's queue")
	for act, runs := range calls {
		for _, c := range runs {
			require.True(t, strings.HasPrefix(c.ranBy, onA[0]) || strings.HasPrefix(c.ranBy, onA[1]), "%s ran on %s, not on A", act, c.ranBy)
			if act == "RunTool" {
				require.True(t, strings.HasPrefix(c.scheduledBy, onB), "the workflow task that sent %s there ran on %s, not on B", act, c.scheduledBy)
			}
		}
	}
	tried := notHereMarkers(h)
	require.ElementsMatch(t, []string{"read: greeting.txt", "grep: hel+o", "glob: *.txt", "list"}, tried,
		"the reads were tried locally on B once, found the checkout elsewhere, and the session then went straight to A's queue")
	require.Zero(t, localRuns(h), "no tool call ran as a local activity: none ran on B")

	rep := worker.NewWorkflowReplayer()
	rep.RegisterWorkflowWithOptions((&workflows.Sessions{}).AgentSession, workflow.RegisterOptions{Name: workflows.WorkflowType})
	require.NoError(t, rep.ReplayWorkflowHistory(nil, h))
	recordHistory(t, id, "local_elsewhere")
}

// pinnedCall is one activity on the checkout's queue: the identity of
// the worker that ran it, and of the one whose workflow task scheduled
// it.
type pinnedCall struct{ ranBy, scheduledBy string }

// pinnedCalls are the activities scheduled on queue, by type.
func pinnedCalls(h *historypb.History, queue string) map[string][]pinnedCall {
	byID := map[int64]*historypb.HistoryEvent{}
	out := map[string][]pinnedCall{}
	for _, ev := range h.Events {
		byID[ev.GetEventId()] = ev
		if ev.GetEventType() != enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED {
			continue
		}
		s := byID[ev.GetActivityTaskStartedEventAttributes().GetScheduledEventId()].GetActivityTaskScheduledEventAttributes()
		if s.GetTaskQueue().GetName() != queue {
			continue
		}
		by := byID[s.GetWorkflowTaskCompletedEventId()].GetWorkflowTaskCompletedEventAttributes().GetIdentity()
		out[s.GetActivityType().GetName()] = append(out[s.GetActivityType().GetName()],
			pinnedCall{ranBy: ev.GetActivityTaskStartedEventAttributes().GetIdentity(), scheduledBy: by})
	}
	return out
}

// scheduled counts the activities of type name scheduled so far.
func scheduled(h *historypb.History, name string) int {
	n := 0
	for _, ev := range h.Events {
		if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == name {
			n++
		}
	}
	return n
}

// notHereMarkers are the summaries of the local activities answered
// activities.ErrTypeNotHere.
func notHereMarkers(h *historypb.History) []string {
	var out []string
	for _, ev := range h.Events {
		m := ev.GetMarkerRecordedEventAttributes()
		if m.GetMarkerName() != "LocalActivity" || m.GetFailure().GetApplicationFailureInfo().GetType() != activities.ErrTypeNotHere {
			continue
		}
		out = append(out, markerSummary(ev))
	}
	return out
}

// localRuns counts the tool calls that ran as local activities (a marker
// with no failure whose summary is a tool call's, not a start-up step's).
func localRuns(h *historypb.History) int {
	n := 0
	for _, ev := range h.Events {
		m := ev.GetMarkerRecordedEventAttributes()
		if m.GetMarkerName() != "LocalActivity" || m.GetFailure() != nil {
			continue
		}
		if s := markerSummary(ev); s != "list tools" && !strings.HasPrefix(s, "load ") {
			n++
		}
	}
	return n
}

// markerSummary is the summary a local activity's marker carries.
func markerSummary(ev *historypb.HistoryEvent) string {
	var s string
	_ = converter.GetDefaultDataConverter().FromPayload(ev.GetUserMetadata().GetSummary(), &s)
	return s
}
