package e2e

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/converter"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// `starter schedule` against the real server: a schedule created with
// --every 1h and triggered starts a real session on the env's worker, which
// completes with the scripted reply; list and show report it, the server's
// refusals come back as sentences, and delete removes the schedule.
func TestScheduleTriggerRunsSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Text("scheduled hello"))
	name := "e2e-sched-" + randHex(4)

	out, err := e.starter("schedule", "create", name, "--every", "1h", "--jitter", "1m",
		"--prompt", "say hello", "--approval", "none", "--max-turns", "5")
	require.NoError(t, err, out)
	require.Contains(t, out, "created schedule "+name+": every 1h")
	t.Cleanup(func() { _, _ = e.starter("schedule", "delete", name) })

	out, err = e.starter("schedule", "create", name, "--every", "1h", "--prompt", "again")
	require.Error(t, err)
	require.Contains(t, out, `schedule "`+name+`" already exists`)

	out, err = e.starter("schedule", "create", name+"-bad", "--cron", "61 * * * *", "--prompt", "x")
	require.Error(t, err)
	require.Contains(t, out, `the server refused --cron "61 * * * *"`)
	t.Logf("bad cron, as the starter reports it:\n%s", out)

	out, err = e.starter("schedule", "trigger", name)
	require.NoError(t, err, out)

	type detail struct {
		Spec   string `json:"spec"`
		Recent []struct {
			SessionID string `json:"session_id"`
			Status    string `json:"status"`
		} `json:"recent_actions"`
	}
	var id string
	waitFor(t, "the triggered session in schedule show", 30*time.Second, func() bool {
		out, err := e.starter("schedule", "show", name, "--json")
		require.NoError(t, err, out)
		var d detail
		require.NoError(t, json.Unmarshal([]byte(out), &d), out)
		if len(d.Recent) == 0 {
			return false
		}
		id = d.Recent[0].SessionID
		return true
	})
	require.True(t, strings.HasPrefix(id, "scheduled-"+name+"-"), id)

	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	require.Equal(t, "scheduled hello", r.FinalText)
	e.checkSession(id)

	// The scheduled session carries the summary start would give it.
	desc, err := describeRun(context.Background(), tc, id, "")
	require.NoError(t, err)
	var summary string
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(desc.GetExecutionConfig().GetUserMetadata().GetSummary(), &summary))
	require.Equal(t, "say hello", summary)

	// The server marks the sessions a schedule starts, so list finds them.
	waitFor(t, "list to find the session by its schedule", 30*time.Second, func() bool {
		out, err = e.starter("list", "--quiet", "--query", `TemporalScheduledById = "`+name+`"`)
		require.NoError(t, err, out)
		return out == id+"\n"
	})

	out, err = e.starter("schedule", "show", name)
	require.NoError(t, err, out)
	require.Regexp(t, `spec\s+every 1h \(jitter 1m\)`, out)
	require.Regexp(t, `overlap\s+skip`, out)
	require.Regexp(t, `prompt\s+say hello`, out)
	require.Regexp(t, id+`\s+completed`, out)

	// Listing is eventually consistent: wait for the run to show.
	waitFor(t, "schedule list to show the completed run", 30*time.Second, func() bool {
		out, err = e.starter("schedule", "list")
		require.NoError(t, err, out)
		return regexp.MustCompile(`(?m)^` + name + `\s+every 1h \(jitter 1m\)\s+\S+ \S+\s+\S+ \S+\s+completed\s+no$`).MatchString(out)
	})

	t.Logf("schedule list:\n%s", out)

	out, err = e.starter("schedule", "pause", name, "--note", "e2e pause")
	require.NoError(t, err, out)
	out, err = e.starter("schedule", "show", name)
	require.NoError(t, err, out)
	require.Regexp(t, `paused\s+yes`, out)
	require.Regexp(t, `note\s+e2e pause`, out)

	out, err = e.starter("schedule", "delete", name)
	require.NoError(t, err, out)
	out, err = e.starter("schedule", "show", name)
	require.Error(t, err)
	require.Contains(t, out, `schedule "`+name+`" not found`)
	out, err = e.starter("schedule", "trigger", name)
	require.Error(t, err)
	require.Contains(t, out, `schedule "`+name+`" not found`)
	waitFor(t, "the deleted schedule to leave schedule list", 30*time.Second, func() bool {
		out, err = e.starter("schedule", "list", "--quiet")
		require.NoError(t, err, out)
		return !strings.Contains(out, name+"\n")
	})
}
