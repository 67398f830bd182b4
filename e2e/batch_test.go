package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// toolSpan is one tool activity as the history shows it, by event id: the
// order of events is the server's, so overlap is measured without clocks.
type toolSpan struct {
	callID              string
	scheduled, finished int64
	wftCompleted        int64 // the workflow task that scheduled it
}

func toolSpans(t *testing.T, h *historypb.History) map[string]*toolSpan {
	t.Helper()
	spans := map[string]*toolSpan{}
	byEvent := map[int64]*toolSpan{}
	for _, ev := range h.Events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := ev.GetActivityTaskScheduledEventAttributes()
			if a.GetActivityType().GetName() != "RunTool" {
				continue
			}
			var req activities.ToolRequest
			require.NoError(t, json.Unmarshal(a.GetInput().GetPayloads()[0].GetData(), &req))
			s := &toolSpan{callID: req.CallID, scheduled: ev.GetEventId(), wftCompleted: a.GetWorkflowTaskCompletedEventId()}
			spans[req.CallID], byEvent[ev.GetEventId()] = s, s
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if s := byEvent[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]; s != nil {
				s.finished = ev.GetEventId()
			}
		}
	}
	return spans
}

// Five reads of one reply are in flight together; the shell call after
// them (exclusive: a barrier) is scheduled only once all five are done,
// and the results go back in the model's order.
func TestBatchReadsOverlapAndBarrierWaits(t *testing.T) {
	t.Parallel()
	var calls []sm.Call
	for i := 1; i <= 5; i++ {
		calls = append(calls, sm.Call{ID: fmt.Sprintf("c_r%d", i), Name: "read", Arguments: fmt.Sprintf(`{"path": "f%d.txt"}`, i)})
	}
	calls = append(calls, sm.Call{ID: "c_sh", Name: "shell", Arguments: `{"command": "cat f*.txt > all.txt"}`})
	e := newEnv(t, sm.Tools(calls...), sm.Text("done"))
	for i := 1; i <= 5; i++ {
		require.NoError(t, os.WriteFile(filepath.Join(e.workspace, fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644))
	}
	// local_reads off: the reads' activity events are what show the overlap.
	id := e.start(workflows.SessionInput{Prompt: "read them all", Profile: "auto", LocalReads: workflows.Flag(false)})
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	msgs := e.checkSession(id)

	recordHistory(t, id, "batch_reads_then_barrier")
	spans := toolSpans(t, history(t, id))
	var firstDone, lastDone int64 = 1 << 62, 0
	for i := 1; i <= 5; i++ {
		s := spans[fmt.Sprintf("c_r%d", i)]
		require.NotNil(t, s)
		require.Equal(t, spans["c_r1"].wftCompleted, s.wftCompleted, "all five reads are scheduled by one workflow task")
		firstDone, lastDone = min(firstDone, s.finished), max(lastDone, s.finished)
	}
	for i := 1; i <= 5; i++ {
		require.Less(t, spans[fmt.Sprintf("c_r%d", i)].scheduled, firstDone, "every read is in flight before the first one finishes")
	}
	require.Greater(t, spans["c_sh"].scheduled, lastDone, "the exclusive shell call waits for every read")
	require.Equal(t, "file 1\nfile 2\nfile 3\nfile 4\nfile 5\n", readFile(t, filepath.Join(e.workspace, "all.txt")))

	// Results in the model's call order.
	var order []string
	for _, m := range msgs {
		if m.Result != nil {
			order = append(order, m.Result.CallID)
		}
	}
	require.Equal(t, []string{"c_r1", "c_r2", "c_r3", "c_r4", "c_r5", "c_sh"}, order)
}

// max_parallel_tools bounds the pool: with 2, never more than two reads
// are in flight, yet all of them run.
func TestBatchPoolIsBounded(t *testing.T) {
	t.Parallel()
	var calls []sm.Call
	for i := 1; i <= 6; i++ {
		calls = append(calls, sm.Call{ID: fmt.Sprintf("c_r%d", i), Name: "list", Arguments: fmt.Sprintf(`{"path": "d%d"}`, i)})
	}
	e := newEnv(t, sm.Tools(calls...), sm.Text("done"))
	// local_reads off: the pool is watched through the lists' activities.
	id := e.start(workflows.SessionInput{Prompt: "list", MaxParallelTools: 2, LocalReads: workflows.Flag(false)})
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	e.checkSession(id)

	h := history(t, id)
	inFlight, peak := 0, 0
	spans := toolSpans(t, h)
	require.Len(t, spans, 6)
	for _, ev := range h.Events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "RunTool" {
				inFlight++
				peak = max(peak, inFlight)
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			for _, s := range spans {
				if s.finished == ev.GetEventId() {
					inFlight--
				}
			}
		}
	}
	require.Equal(t, 2, peak, "the pool holds two calls at a time")
}

// The stale-write guard lives in workflow state: a read made through one
// worker lets an edit through another worker proceed, a file changed on
// disk after its read is refused, and a file never read cannot be
// overwritten. Each refusal tells the model to read again.
func TestStaleWriteGuardAcrossWorkerRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(
			sm.Call{ID: "c_ra", Name: "read", Arguments: `{"path": "a.txt"}`},
			sm.Call{ID: "c_rb", Name: "read", Arguments: `{"path": "b.txt"}`},
		),
		sm.Tools(
			sm.Call{ID: "c_ea", Name: "edit", Arguments: `{"path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}`},
			sm.Call{ID: "c_eb", Name: "edit", Arguments: `{"path": "b.txt", "old_string": "beta", "new_string": "BETA"}`},
			sm.Call{ID: "c_wc", Name: "write", Arguments: `{"path": "c.txt", "content": "overwritten\n"}`},
		),
		sm.Text("done"),
	)
	for name, body := range map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n"} {
		require.NoError(t, os.WriteFile(filepath.Join(e.workspace, name), []byte(body), 0o644))
	}
	id := e.start(workflows.SessionInput{Prompt: "edit"})
	waitPending(t, id, 3)

	// A new worker process takes over; a person edits b.txt meanwhile.
	e.stopWorker()
	e.startWorker()
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "b.txt"), []byte("beta\nand a person's line\n"), 0o644))
	out, err := e.starter("approve", "--all", id)
	require.NoError(t, err, out)
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	msgs := e.checkSession(id)
	recordHistory(t, id, "stale_write_across_worker_restart")

	ra := resultFor(msgs, "c_ea")
	require.Equal(t, conversation.ReasonRan, ra.Reason, ra.Content)
	require.Equal(t, "ALPHA\n", readFile(t, filepath.Join(e.workspace, "a.txt")))
	rb := resultFor(msgs, "c_eb")
	require.Equal(t, conversation.ReasonFailed, rb.Reason)
	require.Contains(t, rb.Content, "b.txt has changed on disk since this session last read it")
	require.Equal(t, "beta\nand a person's line\n", readFile(t, filepath.Join(e.workspace, "b.txt")))
	rc := resultFor(msgs, "c_wc")
	require.Contains(t, rc.Content, "c.txt has not been read in this session")
	require.Equal(t, "gamma\n", readFile(t, filepath.Join(e.workspace, "c.txt")))
	// The model saw the refusals, not the hashes.
	sent, _ := e.model.Requests()[2].LastToolResult("c_eb")
	require.Contains(t, sent, "read it again")
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}
