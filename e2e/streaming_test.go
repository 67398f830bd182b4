package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// modelHeartbeat is the heartbeat details of the session's pending model
// call, as the Temporal UI shows them, and whether one is pending.
func modelHeartbeat(t *testing.T, id string) (string, bool) {
	t.Helper()
	desc, err := describeRun(context.Background(), tc, id, "")
	require.NoError(t, err)
	for _, pa := range desc.GetPendingActivities() {
		if pa.GetActivityType().GetName() != "CallModel" {
			continue
		}
		p := pa.GetHeartbeatDetails().GetPayloads()
		if len(p) == 0 {
			return "", true
		}
		var s string
		require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p[0], &s))
		return s, true
	}
	return "", false
}

// A reply that streams slowly shows in the pending activity's heartbeat
// details while it is being written: a person watching the UI sees part
// of the reply before the turn ends.
func TestModelStreamHeartbeatsPartialText(t *testing.T) {
	t.Parallel()
	text := strings.TrimSpace(strings.Repeat("Streaming lets a person watch the reply grow word by word. ", 4))
	// Eight pieces a second apart: the first heartbeat (one second in) and
	// the SDK's next batch (eight seconds later) both fall mid-reply.
	e := newEnv(t, sm.Reply{Text: text, ChunkDelay: time.Second})
	id := e.start(workflows.SessionInput{Prompt: "write slowly"})

	var partial []string
	waitFor(t, "the session to finish", 60*time.Second, func() bool {
		if d, ok := modelHeartbeat(t, id); ok && d != "" && d != text {
			require.True(t, strings.HasPrefix(text, d), "heartbeat %q is not the start of the reply", d)
			if len(partial) == 0 || partial[len(partial)-1] != d {
				partial = append(partial, d)
			}
		}
		desc, err := describeRun(context.Background(), tc, id, "")
		require.NoError(t, err)
		return desc.GetWorkflowExecutionInfo().GetCloseTime() != nil
	})
	require.NotEmpty(t, partial, "no heartbeat showed the reply being written")
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Equal(t, text, r.FinalText)
	require.True(t, e.model.Requests()[0].Stream)
	e.checkSession(id)
}

// LONGRUN_MODEL_STREAM=off makes the worker send plain requests, for
// endpoints that cannot stream; the session is the same.
func TestModelStreamOff(t *testing.T) {
	t.Parallel()
	e := newEnvWorkerEnv(t, []string{"LONGRUN_MODEL_STREAM=off"}, sm.Reply{Text: "plain", Delay: 1500 * time.Millisecond})
	id := e.start(workflows.SessionInput{Prompt: "hi"})
	waitFor(t, "the waiting heartbeat", 20*time.Second, func() bool {
		d, _ := modelHeartbeat(t, id)
		return strings.Contains(d, "streaming is off")
	})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Equal(t, "plain", r.FinalText)
	require.False(t, e.model.Requests()[0].Stream)
	e.checkSession(id)
}

// A worker killed in the middle of a model call is noticed through the
// heartbeat timeout, in seconds, not after the ten-minute start-to-close
// timeout: the next worker retries the call.
func TestModelStreamLostWorkerIsNoticedByHeartbeat(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Reply{Text: "never finished", Delay: 5 * time.Minute}, sm.Text("recovered"))
	id := e.start(workflows.SessionInput{Prompt: "hi"})
	waitFor(t, "the model call", 20*time.Second, func() bool {
		d, _ := modelHeartbeat(t, id)
		return d != ""
	})
	require.NoError(t, e.worker.Process.Kill())
	_ = e.worker.Wait()
	killed := time.Now()
	e.startWorker()
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Equal(t, "recovered", r.FinalText)
	reqs := e.model.Requests()
	require.Len(t, reqs, 2)
	require.Less(t, reqs[1].At.Sub(killed), 45*time.Second, "the lost call was retried late")
	e.checkSession(id)
}
