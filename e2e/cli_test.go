package e2e

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// exitCode is the starter's exit code from the error CombinedOutput gave.
func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "starter did not run: %v", err)
	return ee.ExitCode()
}

// waitClosed waits until the session is no longer running.
func waitClosed(t *testing.T, id string) {
	t.Helper()
	waitFor(t, "the session to close", 60*time.Second, func() bool {
		d, err := describeRun(context.Background(), tc, id, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus() != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING
	})
}

// A session that fails (here: a profile no CLI check stopped, sent with
// the SDK) says why in show and status, not only in result, and the
// reason reads as one sentence, not three wrappings.
func TestShowAndStatusSayWhyASessionFailed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	id := e.start(workflows.SessionInput{Prompt: "hi", Profile: "xyz"})
	waitClosed(t, id)
	const reason = `session permissions: profile "xyz": permission: profile must be build, plan or auto [InvalidSessionInput]`
	for _, cmd := range []string{"show", "status"} {
		out, _ := e.starter(cmd, id)
		require.Regexp(t, `ended\s+failed: `, out, cmd)
		require.Contains(t, out, reason, cmd)
		require.NotContains(t, out, "workflow execution error", cmd)
	}
	out, _ := e.starter("result", id)
	require.Contains(t, out, "ended: failed: "+reason)
}

// cancel of a session that already ended says how it ended and exits 1:
// nothing was cancelled.
func TestCancelOfAnEndedSessionSaysSo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Tools(sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "x.txt", "content": "x"}`}))
	id := e.start(workflows.SessionInput{Prompt: "write x.txt"})
	waitPending(t, id, 1)
	out, err := e.starter("cancel", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "cancel requested for "+id)
	waitClosed(t, id)

	out, err = e.starter("cancel", id)
	require.Equal(t, 1, exitCode(t, err), out)
	require.Contains(t, out, "session "+id+" already ended (cancelled, at ")
	require.Contains(t, out, "nothing to cancel")
	require.NotContains(t, out, "cancel requested")
}

// send and interrupt to a session that has ended say how and when it
// ended, and that nothing was done, where the server says only "not
// found"; a session that never was is still "not found".
func TestSendAndInterruptToAnEndedSessionSaySo(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Text("done"))
	id := e.start(workflows.SessionInput{Prompt: "say done"})
	waitClosed(t, id)
	for cmd, notDone := range map[string]string{"send": "nothing was sent", "interrupt": "nothing to interrupt"} {
		args := []string{cmd, id}
		if cmd == "send" {
			args = append(args, "one more thing")
		}
		out, err := e.starter(args...)
		require.Equal(t, 1, exitCode(t, err), out)
		require.Contains(t, out, "session "+id+" has ended (completed at ", cmd)
		require.Contains(t, out, notDone, cmd)
		require.NotContains(t, out, "not found", cmd)
	}
	out, err := e.starter("send", "no-such-session", "hello")
	require.Equal(t, 1, exitCode(t, err), out)
	require.Contains(t, out, `session "no-such-session" not found`)
}

// watch prints the final text once: as the last message, not again under
// the outcome.
func TestWatchPrintsTheFinalTextOnce(t *testing.T) {
	t.Parallel()
	const final = "All done: the final answer is 42."
	e := newEnv(t, sm.Text(final))
	out, err := e.starter("start", "--wait", "--no-interactive", "say 42")
	require.NoError(t, err, out)
	require.Contains(t, out, "── session ")
	require.Equal(t, 1, strings.Count(out, final), out)
}
