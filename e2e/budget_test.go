package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// Started from the CLI with --idle-timeout forever and --token-budget, a
// session waits with no timer once the model stops, takes a message sent
// later, and stops with status budget before the call that would pass the
// budget. The scripted server reports 15 tokens a reply (10 + 5).
func TestStarterIdleForeverAndTokenBudget(t *testing.T) {
	t.Parallel()
	usage := &sm.Usage{PromptTokens: 10, CompletionTokens: 5}
	e := newEnv(t,
		sm.Reply{Text: "first answer", Usage: usage},
		sm.Reply{ToolCalls: []sm.Call{{ID: "c_l", Name: "list", Arguments: `{}`}}, Usage: usage},
		sm.Reply{Text: "never sent", Usage: usage},
	)
	id := "e2e-budget-" + randHex(4)
	out, err := e.starter("start", "--id", id, "--idle-timeout", "forever", "--token-budget", "30", "--profile", "auto", "hello")
	require.NoError(t, err, out)
	waitFor(t, "the session to wait for input", 30*time.Second, func() bool {
		return query[workflows.Status](t, id, workflows.QueryStatus).Phase == workflows.PhaseWaitingInput
	})
	// No timer runs while it waits: nothing ends it but a message.
	for _, ev := range history(t, id).Events {
		require.Nil(t, ev.GetTimerStartedEventAttributes(), "a timer was started: %v", ev)
	}
	show, err := e.starter("show", id)
	require.NoError(t, err, show)
	out, err = e.starter("send", id, "list the files")
	require.NoError(t, err, out)
	r := result(t, id)
	require.Equal(t, workflows.ResultBudget, r.Status)
	require.Equal(t, 2, r.Turns)
	require.Equal(t, "stopped after 2 model turns: 30 tokens used, token_budget is 30", r.Error)
	require.Len(t, e.model.Requests(), 2, "the third call was never made")
	require.True(t, strings.Contains(fmt.Sprint(e.checkSession(id)), "c_l"))

	out, err = e.starter("start", "--idle-timeout", "-5m", "x")
	require.Error(t, err)
	require.Contains(t, out, `use "forever" for no limit`)
}
