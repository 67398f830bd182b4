package e2e

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// `starter interrupt` while a shell runs kills it, pairs the call with an
// "interrupted" result, and the session waits for the next message, then
// carries on.
func TestInterruptWhileShellRuns(t *testing.T) {
	t.Parallel()
	marker := "longrun-interrupt-" + randHex(6)
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_sleep", Name: "shell", Arguments: `{"command": "sleep 60; echo ` + marker + `"}`}),
		sm.Text("stopped; what now?"),
	)
	id := e.start(workflows.SessionInput{Prompt: "sleep"})
	waitPending(t, id, 1)
	out, err := e.starter("approve", id)
	require.NoError(t, err, out)
	var pids []int
	waitFor(t, "the shell process", 20*time.Second, func() bool {
		pids = processesWith(marker)
		return len(pids) > 0
	})
	pids = append(pids, childrenOf(pids)...)

	out, err = e.starter("interrupt", id)
	require.NoError(t, err, out)
	waitFor(t, "the shell's processes to be gone", 10*time.Second, func() bool { return !anyAlive(pids) })
	waitFor(t, "waiting-input", 20*time.Second, func() bool {
		return query[workflows.Status](t, id, workflows.QueryStatus).Phase == workflows.PhaseWaitingInput
	})
	msgs := query[[]conversation.Message](t, id, workflows.QueryConversation)
	require.Equal(t, conversation.ReasonInterrupted, resultFor(msgs, "c_sleep").Reason)
	require.NoError(t, conversation.CheckPairing(msgs))

	out, err = e.starter("send", id, "never mind, say hi")
	require.NoError(t, err, out)
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Equal(t, "stopped; what now?", r.FinalText)
	e.checkSession(id)
	recordHistory(t, id, "interrupt_while_shell_runs")
}
