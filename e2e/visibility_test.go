package e2e

import (
	"context"
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
	require.Contains(t, details, "`c_sh` **shell**")
	require.Contains(t, details, `temporal workflow signal --workflow-id `+id+` --name approval --input '{"call_id":"c_sh","decision":"approve"}'`)

	out, err := e.starter("approve", id)
	require.NoError(t, err, out)
	result(t, id)
	recordHistory(t, id, "local_setup_default_approve")

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
