package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// A command, which a session runs at most once, begins only after the
// server has recorded its call's first heartbeat (activities/start.go):
// the moment the command's process exists, the pending activity already
// carries heartbeat details. Without that, the first heartbeat came a
// second into the call, and a call whose activity task the server handed
// to no worker (a dispatch lost under load) timed out exactly like one
// whose worker died mid-command: answered worker_lost, "may or may not
// have run", though it never ran. The workflow's half (a heartbeat
// timeout with no details is scheduled again) is
// workflows.TestACallNoWorkerBeganIsScheduledAgain.
func TestACommandBeginsAfterItsStartIsRecorded(t *testing.T) {
	t.Parallel()
	// A duration no other test sleeps, to find this command's process.
	const nap = "6.417"
	e := newEnv(t, sm.Tools(isoShell("c1", "sleep "+nap+"; echo slept")), sm.Text("done"))
	id := e.start(workflows.SessionInput{Prompt: "nap", Profile: "auto"})
	waitFor(t, "the command's process", 60*time.Second, func() bool { return len(processesWith("sleep\x00"+nap)) > 0 })
	d, err := describeRun(context.Background(), tc, id, "")
	require.NoError(t, err)
	found := false
	for _, pa := range d.GetPendingActivities() {
		if pa.GetActivityType().GetName() != "RunTool" {
			continue
		}
		found = true
		require.NotEmpty(t, pa.GetHeartbeatDetails().GetPayloads(),
			"when the command runs, its call's first heartbeat is recorded (last heartbeat %s)", pa.GetLastHeartbeatTime().AsTime())
	}
	require.True(t, found, "the command's call is pending while it runs")

	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	res := resultFor(e.checkSession(id), "c1")
	require.NotNil(t, res)
	require.Equal(t, conversation.ReasonRan, res.Reason, res.Content)
	require.Contains(t, res.Content, "slept")
}
