package e2e

import (
	"github.com/longrun/longrun/callref"

	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/converter"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// What a person sees in the Web UI: activity summaries in the history and
// current details naming each waiting call with the command to decide it.
func TestUISummariesAndCurrentDetails(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_sh", Name: "shell", Arguments: `{"command": "go test ./..."}`}),
		sm.Text("ok"),
	)
	id := e.start(workflows.SessionInput{Prompt: "test it"})
	waitPending(t, id, 1)

	val, err := tc.QueryWorkflow(context.Background(), id, "", "__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, val.Get(&md))
	details := md.GetCurrentDetails()
	require.Contains(t, details, "waiting-approval")
	require.Contains(t, details, "waiting for approval: 1 call(s)")
	require.Contains(t, details, "**shell** `c1`", "the session's id of c_sh")
	// Each command on its own line, with the worker's address (the test
	// server's is not the default).
	lines := strings.Split(details, "\n")
	require.Contains(t, lines, "longrun --address "+temporalAddr+" approve "+id+" c1")
	require.Contains(t, lines, `temporal workflow signal --address `+temporalAddr+` --workflow-id `+id+` --name approval --input '{"id":"c1","digest":"`+
		callref.Short(callref.Digest("shell", `{"command": "go test ./..."}`))+`","decision":"approve"}'`)

	out, err := e.starter("approve", id)
	require.NoError(t, err, out)
	result(t, id)
	recordHistory(t, id, "ui_summaries_approve")

	var summaries []string
	dc := converter.GetDefaultDataConverter()
	for _, ev := range history(t, id).Events {
		// Activities, and local activities (the start-up steps): the UI
		// shows both with their summaries.
		if ev.GetEventType() != enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED &&
			ev.GetMarkerRecordedEventAttributes().GetMarkerName() != "LocalActivity" {
			continue
		}
		var s string
		require.NoError(t, dc.FromPayload(ev.GetUserMetadata().GetSummary(), &s))
		summaries = append(summaries, s)
	}
	joined := strings.Join(summaries, " | ")
	require.Contains(t, joined, "list tools")
	require.Contains(t, joined, "model: default model (turn 1)")
	require.Contains(t, joined, "shell: go test ./...")
	require.Contains(t, joined, "model: scripted-test (turn 2)")
}

// A fast loop does not upsert its counters every turn (each upsert is a
// history event and a visibility write on the server), and what the list
// shows is exact once the session stops: the search attributes `starter
// list` reads give the result's turn count.
func TestFastTurnsUpsertCountersSparingly(t *testing.T) {
	t.Parallel()
	const reads = 12
	var script []sm.Reply
	for i := 1; i <= reads; i++ {
		script = append(script, sm.Tools(sm.Call{ID: fmt.Sprintf("c_r%d", i), Name: "read", Arguments: fmt.Sprintf(`{"path": "f.txt", "limit": %d}`, i)}))
	}
	e := newEnv(t, append(script, sm.Text("done"))...)
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "f.txt"), []byte("x\n"), 0o644))
	id := e.start(workflows.SessionInput{Prompt: "read it", Profile: "auto"})
	res := result(t, id)
	require.Equal(t, workflows.ResultCompleted, res.Status)
	require.Equal(t, reads+1, res.Turns)
	e.checkSession(id)
	recordHistory(t, id, "fast_turns")

	upserts := 0
	for _, ev := range history(t, id).Events {
		fields := ev.GetUpsertWorkflowSearchAttributesEventAttributes().GetSearchAttributes().GetIndexedFields()
		if _, ok := fields[workflows.TurnsKey.GetName()]; ok {
			upserts++
		}
	}
	// One per turn before; now the start, the model's name, and done,
	// plus one for every 5 s of workflow time the turns took.
	require.Less(t, upserts, reads, "upserts carrying LongrunTurns")

	sa := describe(t, id).GetWorkflowExecutionInfo().GetSearchAttributes().GetIndexedFields()
	var turns int64
	var phase string
	dc := converter.GetDefaultDataConverter()
	require.NoError(t, dc.FromPayload(sa[workflows.TurnsKey.GetName()], &turns))
	require.NoError(t, dc.FromPayload(sa[workflows.PhaseKey.GetName()], &phase))
	require.Equal(t, int64(res.Turns), turns)
	require.Equal(t, workflows.PhaseDone, phase)
}
