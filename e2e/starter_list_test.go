package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// `starter list --waiting` finds a session through the visibility API by
// its search attributes, `show` and `history` describe it, and once it is
// approved it leaves the waiting list.
func TestStarterListWaitingAndShow(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "x.txt", "content": "x"}`}),
		sm.Text("written"),
	)
	id := e.start(workflows.SessionInput{Prompt: "write x.txt"})
	waitPending(t, id, 1)

	type row struct {
		ID      string `json:"session_id"`
		Phase   string `json:"phase"`
		Pending int64  `json:"pending_approvals"`
		Turns   int64  `json:"turns"`
		Model   string `json:"model"`
	}
	find := func(args ...string) *row {
		out, err := e.starter(append([]string{"list", "--json", "--limit", "0"}, args...)...)
		require.NoError(t, err, out)
		var rows []row
		require.NoError(t, json.Unmarshal([]byte(out), &rows), out)
		for _, r := range rows {
			if r.ID == id {
				return &r
			}
		}
		return nil
	}
	// Visibility is eventually consistent: wait for the upsert to land.
	var got *row
	waitFor(t, "list --waiting to show the session", 20*time.Second, func() bool {
		got = find("--waiting")
		return got != nil
	})
	require.Equal(t, workflows.PhaseWaitingApproval, got.Phase)
	require.EqualValues(t, 1, got.Pending)
	require.EqualValues(t, 1, got.Turns)

	out, err := e.starter("list")
	require.NoError(t, err, out)
	require.Regexp(t, `(?m)^SESSION\s+STATUS\s+PHASE\s+TURNS\s+PENDING\s+MODEL\s+STARTED$`, out)
	require.Regexp(t, `(?m)^`+id+`\s+running\s+waiting-approval\s+1\s+1\s`, out)

	out, err = e.starter("show", id)
	require.NoError(t, err, out)
	require.Regexp(t, `phase\s+waiting-approval`, out)
	require.Regexp(t, `pending approvals\s+1`, out)
	require.Contains(t, out, "user: write x.txt")
	require.Contains(t, out, "→ tool call write")

	out, err = e.starter("history", id, "--json")
	require.NoError(t, err)
	h, err := client.HistoryFromJSON(strings.NewReader(out), client.HistoryJSONOptions{})
	require.NoError(t, err)
	require.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, h.Events[0].GetEventType())
	require.Len(t, h.Events, len(history(t, id).Events))

	out, err = e.starter("approve", id, "c_w")
	require.NoError(t, err, out)
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	waitFor(t, "the session to leave list --waiting", 20*time.Second, func() bool {
		return find("--waiting") == nil
	})
	got = find("--phase", workflows.PhaseDone)
	require.NotNil(t, got, "a finished session is listed with phase done")
	e.checkSession(id)
}
