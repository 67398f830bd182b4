package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// With local_reads a turn of reads runs inside the workflow task that got
// the model's reply: no activity task per read, one workflow task fewer
// per such turn, each read a local-activity marker carrying the same
// summary an activity would; the shell call stays an activity. The same
// script without it is the comparison.
func TestLocalReadsSaveAWorkflowTaskPerTurn(t *testing.T) {
	t.Parallel()
	script := func() []sm.Reply {
		var r []sm.Reply
		for turn := 1; turn <= 3; turn++ {
			var calls []sm.Call
			for i := 1; i <= 3; i++ {
				calls = append(calls, sm.Call{ID: fmt.Sprintf("c_t%d_r%d", turn, i), Name: "read", Arguments: fmt.Sprintf(`{"path": "f%d.txt", "limit": %d}`, i, turn)})
			}
			r = append(r, sm.Tools(calls...))
		}
		return append(r, sm.Tools(sm.Call{ID: "c_sh", Name: "shell", Arguments: `{"command": "cat f*.txt > all.txt"}`}), sm.Text("done"))
	}
	// wfts is, for each turn, the workflow tasks between the model's
	// reply and the next model call being scheduled.
	type counts struct {
		wfts                                     []int
		readActivities, markers, shellActivities int
	}
	run := func(local bool) (counts, []string) {
		e := newEnv(t, script()...)
		for i := 1; i <= 3; i++ {
			require.NoError(t, os.WriteFile(filepath.Join(e.workspace, fmt.Sprintf("f%d.txt", i)), []byte(fmt.Sprintf("file %d\n", i)), 0o644))
		}
		id := e.start(workflows.SessionInput{Prompt: "read them", Profile: "auto", LocalReads: workflows.Flag(local)})
		require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
		msgs := e.checkSession(id)
		for turn := 1; turn <= 3; turn++ {
			for i := 1; i <= 3; i++ {
				r := resultFor(msgs, fmt.Sprintf("c_t%d_r%d", turn, i))
				require.NotNil(t, r)
				require.Contains(t, r.Content, fmt.Sprintf("file %d", i))
			}
		}
		require.Equal(t, "file 1\nfile 2\nfile 3\n", readFile(t, filepath.Join(e.workspace, "all.txt")))
		if local {
			recordHistory(t, id, "local_reads")
		}
		var c counts
		var summaries []string
		model := map[int64]bool{} // scheduled event ids of model calls
		inTurn := -1              // workflow tasks since the model's reply
		for _, ev := range history(t, id).Events {
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
				if inTurn >= 0 {
					inTurn++
				}
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
				if model[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] {
					inTurn = 0
				}
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				a := ev.GetActivityTaskScheduledEventAttributes()
				if a.GetActivityType().GetName() == "CallModel" {
					model[ev.GetEventId()] = true
					if inTurn >= 0 {
						c.wfts = append(c.wfts, inTurn)
					}
					inTurn = -1
				}
				if a.GetActivityType().GetName() != "RunTool" {
					continue
				}
				var s string
				require.NoError(t, converter.GetDefaultDataConverter().FromPayload(ev.GetUserMetadata().GetSummary(), &s))
				if s == "shell: cat f*.txt > all.txt" {
					c.shellActivities++
				} else {
					c.readActivities++
				}
			case enumspb.EVENT_TYPE_MARKER_RECORDED:
				if ev.GetMarkerRecordedEventAttributes().GetMarkerName() != "LocalActivity" {
					continue
				}
				var s string
				require.NoError(t, converter.GetDefaultDataConverter().FromPayload(ev.GetUserMetadata().GetSummary(), &s))
				if strings.HasPrefix(s, "read: ") { // not the start-up steps, local too
					c.markers++
					summaries = append(summaries, s)
				}
			}
		}
		return c, summaries
	}
	remote, _ := run(false)
	local, summaries := run(true)
	require.Equal(t, 9, remote.readActivities)
	require.Equal(t, 0, remote.markers)
	require.Len(t, remote.wfts, 4)
	for _, n := range remote.wfts {
		require.GreaterOrEqual(t, n, 2, "without local_reads a turn takes a workflow task for the reply and one per tool completion")
	}
	require.Equal(t, 0, local.readActivities, "no read went through an activity task")
	require.Equal(t, 9, local.markers)
	require.Equal(t, 1, local.shellActivities)
	require.Equal(t, 1, local.wfts[0], "a turn of reads is one workflow task: the reply's, which runs the reads and schedules the next call")
	require.Equal(t, []int{1, 1, 1}, local.wfts[:3])
	require.GreaterOrEqual(t, local.wfts[3], 2, "the shell turn still goes through an activity")
	require.Contains(t, summaries, "read: f2.txt [1-2]")
}

// With local_model and local_reads a turn is at most one workflow task: the
// model call, the reads and the start-up steps are local-activity markers,
// no activity task goes through the server, and the session's answer and
// conversation are those of the same script run as activities.
func TestLocalModelTakesAtMostOneWorkflowTaskPerTurn(t *testing.T) {
	t.Parallel()
	var script []sm.Reply
	for turn := 1; turn <= 3; turn++ {
		script = append(script, sm.Tools(sm.Call{ID: fmt.Sprintf("c_r%d", turn), Name: "read", Arguments: fmt.Sprintf(`{"path": "f.txt", "limit": %d}`, turn)}))
	}
	script = append(script, sm.Text("done"))
	e := newEnv(t, script...)
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "f.txt"), []byte("the file\n"), 0o644))
	id := e.start(workflows.SessionInput{Prompt: "read", Profile: "auto", LocalModel: true})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Equal(t, "done", r.FinalText)
	msgs := e.checkSession(id)
	for turn := 1; turn <= 3; turn++ {
		require.Contains(t, resultFor(msgs, fmt.Sprintf("c_r%d", turn)).Content, "the file")
	}
	require.Len(t, e.model.Requests(), 4)
	recordHistory(t, id, "local_model")

	dc := converter.GetDefaultDataConverter()
	var scheduled, models, reads, wfts []string
	for _, ev := range history(t, id).Events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			scheduled = append(scheduled, ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName())
		case enumspb.EVENT_TYPE_WORKFLOW_TASK_COMPLETED:
			wfts = append(wfts, "wft")
		case enumspb.EVENT_TYPE_MARKER_RECORDED:
			if ev.GetMarkerRecordedEventAttributes().GetMarkerName() != "LocalActivity" {
				continue // version markers
			}
			var s string
			require.NoError(t, dc.FromPayload(ev.GetUserMetadata().GetSummary(), &s))
			switch {
			case len(s) > 6 && s[:6] == "model:":
				models = append(models, s)
			default:
				reads = append(reads, s)
			}
		}
	}
	require.Empty(t, scheduled, "nothing goes through an activity task, start-up included")
	require.Equal(t, []string{"model: default model (turn 1)", "model: scripted-test (turn 2)", "model: scripted-test (turn 3)", "model: scripted-test (turn 4)"}, models)
	require.Equal(t, []string{"list tools", "load .longrun/permissions.json", "read: f.txt [1-1]", "read: f.txt [1-2]", "read: f.txt [1-3]"}, reads)
	// Local activities that follow one another run in the same workflow
	// task for as long as it may last (80% of its 10 s timeout), so four
	// quick turns may well take a single task; never more than one each.
	require.NotEmpty(t, wfts)
	require.LessOrEqual(t, len(wfts), 4, "at most one workflow task per turn, start-up included")
	t.Logf("%d workflow tasks for 4 turns", len(wfts))
}

// An interrupt sent while a local model call runs reaches the session when
// the running workflow task next reports (the SDK heartbeats it at 80% of
// its 10 s timeout): the call is cancelled, the turn ends interrupted, and
// the session takes the next message, well before the slow reply would
// have come.
func TestInterruptDuringALocalModelCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Reply{Text: "too late", Delay: 90 * time.Second}, sm.Text("hi"))
	id := e.start(workflows.SessionInput{Prompt: "think hard", LocalModel: true})
	waitFor(t, "the model call", 20*time.Second, func() bool { return len(e.model.Requests()) == 1 })
	sent := time.Now()
	out, err := e.starter("interrupt", id)
	require.NoError(t, err, out)
	waitFor(t, "waiting-input after the interrupt", 30*time.Second, func() bool {
		v, err := tc.QueryWorkflow(context.Background(), id, "", workflows.QueryStatus)
		var st workflows.Status
		return err == nil && v.Get(&st) == nil && st.Phase == workflows.PhaseWaitingInput
	})
	t.Logf("interrupt took effect after %s", time.Since(sent).Round(100*time.Millisecond))
	out, err = e.starter("send", id, "say hi")
	require.NoError(t, err, out)
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Equal(t, "hi", r.FinalText)
	e.checkSession(id)
}
