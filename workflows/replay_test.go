package workflows

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// TestReplayRecordedHistories replays every history recorded from the real
// server (see e2e: LONGRUN_RECORD_HISTORY). A change that alters the order
// of commands fails here unless it is behind workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "no recorded histories in testdata/")
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions((&Sessions{}).AgentSession, workflow.RegisterOptions{Name: WorkflowType})
			// X.id, when recorded, is the workflow id: commands may
			// depend on it (a sub-agent's id is derived from its parent's).
			id, err := os.ReadFile(strings.TrimSuffix(f, ".json") + ".id")
			if err != nil {
				require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, f))
				return
			}
			raw, err := os.Open(f)
			require.NoError(t, err)
			defer raw.Close()
			h, err := client.HistoryFromJSON(raw, client.HistoryJSONOptions{})
			require.NoError(t, err)
			require.NoError(t, r.ReplayWorkflowHistoryWithOptions(nil, h,
				worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: strings.TrimSpace(string(id))}}))
		})
	}
}
