package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// runningTool waits until the session has a tool activity running (not
// the model call) and returns when it was last heartbeated.
func runningTool(t *testing.T, id string) time.Time {
	t.Helper()
	var beat time.Time
	waitFor(t, "a tool call running", 60*time.Second, func() bool {
		d, err := describeRun(context.Background(), tc, id, "")
		if err != nil {
			return false
		}
		for _, a := range d.GetPendingActivities() {
			if a.GetActivityType().GetName() != "CallModel" && a.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
				beat = a.GetLastHeartbeatTime().AsTime()
				return true
			}
		}
		return false
	})
	return beat
}

// exited waits for the worker process and says when it ended.
func exited(cmd *exec.Cmd) <-chan error {
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	return done
}

// Must show 1 of issue 34: a command that takes 20 s is running when its
// worker gets SIGTERM. The worker stops taking work, says what it waits
// for, keeps heartbeating, and exits only once the command has finished;
// the command's real output is its recorded result (reason ran, not
// worker_lost), and the session goes on to complete on a second worker.
// The session runs in place (the workspace both workers serve): a
// session's own checkout is pinned to the worker that made it, and its
// next command would wait there for the worker-lost restore instead.
func TestDrainOnSIGTERMRecordsTheRealResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(isoShell("c_slow", "sleep 20; echo done-marker")),
		sm.Tools(isoShell("c_next", "echo on-the-next-worker")),
		sm.Text("finished after the deploy"),
	)
	// Both workers keep the conversation in one transcript store, as
	// workers on two machines share a bucket.
	e.stopWorker()
	e.workerArgs = append(e.workerArgs, "--transcript", t.TempDir())
	e.startWorker()
	a := e.worker
	aLogs := e.logs
	// A worker lost is noticed within seconds, so without the drain the
	// call would come back worker_lost quickly.
	id := e.start(workflows.SessionInput{Prompt: "run the slow suite", Profile: "auto", WorkerLostAfter: workflows.Duration(3 * time.Second)})
	runningTool(t, id)

	// The next build, with a state directory of its own, before the old
	// one is told to go.
	b := *e
	b.stateDir = t.TempDir()
	b.startWorker()

	signalled := time.Now()
	require.NoError(t, a.Process.Signal(syscall.SIGTERM))
	done := exited(a)
	// While it drains, the pending call's last heartbeat moves past the
	// signal: the old worker still heartbeats it.
	var exitErr error
	beat := false
	deadline := time.After(90 * time.Second)
wait:
	for {
		select {
		case exitErr = <-done:
			break wait
		case <-deadline:
			t.Fatal("the worker did not exit after its command finished")
		case <-time.After(500 * time.Millisecond):
		}
		if d, err := describeRun(context.Background(), tc, id, ""); err == nil {
			for _, pa := range d.GetPendingActivities() {
				if pa.GetActivityType().GetName() == "RunTool" && pa.GetLastHeartbeatTime().AsTime().After(signalled.Add(time.Second)) {
					beat = true
				}
			}
		}
	}
	took := time.Since(signalled)

	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	require.Equal(t, "finished after the deploy", r.FinalText)
	msgs := e.checkSession(id) // every call paired
	slow := resultFor(msgs, "c_slow")
	require.NotNil(t, slow)
	require.Equal(t, conversation.ReasonRan, slow.Reason, slow.Content)
	require.Contains(t, slow.Content, "done-marker")
	next := resultFor(msgs, "c_next")
	require.Equal(t, conversation.ReasonRan, next.Reason, next.Content)
	require.Contains(t, next.Content, "on-the-next-worker")
	// Who ran what: the old worker ran the first turn's calls, the new
	// one everything after the drain began (the old stopped polling).
	var ran []string
	for _, ev := range history(t, id).GetEvents() {
		if at := ev.GetActivityTaskStartedEventAttributes(); at != nil {
			ran = append(ran, at.GetIdentity())
		}
	}
	aID, bID := strconv.Itoa(a.Process.Pid)+"@", strconv.Itoa(b.worker.Process.Pid)+"@"
	require.GreaterOrEqual(t, len(ran), 4, ran)
	require.True(t, strings.HasPrefix(ran[0], aID), "the first model call ran on the old worker: %q", ran)
	for _, who := range ran[len(ran)-3:] {
		require.True(t, strings.HasPrefix(who, bID), "after the drain began, calls run on the new worker: %q", ran)
	}
	require.NoError(t, exitErr, "a drained worker exits cleanly")
	require.Greater(t, took, 10*time.Second, "the old worker waited for its command")
	require.True(t, beat, "the old worker heartbeated the call while it drained")
	logs := aLogs.String()
	for _, said := range []string{
		"drain: stopped taking work", "drain: waiting for a call", id, "activity=RunTool",
		"drain: a call finished and its result is recorded", "drain: done, nothing was cut off",
	} {
		require.Contains(t, logs, said, "the old worker's log says what it waits for")
	}
	t.Logf("drained in %s", took.Round(time.Millisecond))
}

// A second signal ends the drain at once: an operator who cannot wait
// is not held for the drain timeout.
func TestDrainSecondSignalStopsAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Tools(isoShell("c_long", "sleep 300; echo never")), sm.Text("unreached"))
	a := e.worker
	id := e.start(workflows.SessionInput{Prompt: "run forever", Profile: "auto"})
	runningTool(t, id)

	require.NoError(t, a.Process.Signal(syscall.SIGTERM))
	done := exited(a)
	waitFor(t, "the drain to begin", 10*time.Second, func() bool {
		return strings.Contains(e.logs.String(), "drain: waiting for a call")
	})
	select {
	case err := <-done:
		t.Fatalf("the worker exited while its command ran: %v", err)
	case <-time.After(2 * time.Second):
	}
	second := time.Now()
	require.NoError(t, a.Process.Signal(syscall.SIGTERM))
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the second signal did not stop the worker")
	}
	require.Less(t, time.Since(second), 15*time.Second)
	require.Contains(t, e.logs.String(), "drain: second signal, stopping at once")
	require.NoError(t, tc.TerminateWorkflow(context.Background(), id, "", "test over"))
}

// jobLog is the background job's log in the worker's state directory.
func jobLog(t *testing.T, stateDir string) string {
	t.Helper()
	var logs []string
	_ = filepath.WalkDir(filepath.Join(stateDir, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "job-1.log") {
			logs = append(logs, p)
		}
		return nil
	})
	require.Len(t, logs, 1)
	return readFile(t, logs[0])
}

// startJobSession starts a session whose one call starts command as a
// background job, and waits until the session waits for its person with
// the job running.
func startJobSession(t *testing.T, e *env) string {
	t.Helper()
	id := e.start(workflows.SessionInput{Prompt: "start the job", Profile: "auto", IdleTimeout: workflows.Duration(10 * time.Minute)})
	waitFor(t, "the session to wait with its job running", 60*time.Second, func() bool {
		return query[workflows.Status](t, id, workflows.QueryStatus).Phase == workflows.PhaseWaitingInput
	})
	t.Cleanup(func() { _ = tc.TerminateWorkflow(context.Background(), id, "", "test over") })
	return id
}

func backgroundCall(command string) sm.Call {
	args, _ := json.Marshal(map[string]any{"command": command, "background": true})
	return sm.Call{ID: "c_job", Name: "shell", Arguments: string(args)}
}

// A background job that ends within the drain timeout is let finish: its
// whole output is in its log, and the worker exits after it.
func TestDrainWaitsForBackgroundJobs(t *testing.T) {
	t.Parallel()
	marker := "longrun-drain-" + randHex(6)
	e := newEnv(t, sm.Tools(backgroundCall("sleep 8; echo job-done # "+marker)), sm.Text("started it"))
	a := e.worker
	id := startJobSession(t, e)
	require.NotEmpty(t, processesWith(marker))

	signalled := time.Now()
	require.NoError(t, a.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited(a):
		require.NoError(t, err)
	case <-time.After(60 * time.Second):
		t.Fatal("the worker did not exit after its job ended")
	}
	require.Greater(t, time.Since(signalled), 3*time.Second, "the worker waited for the job")
	require.Contains(t, jobLog(t, e.stateDir), "job-done", "the job ran to its end")
	logs := e.logs.String()
	require.Contains(t, logs, "drain: waiting for a background job")
	require.Contains(t, logs, id)
	require.Contains(t, logs, "drain: a background job ended")
	require.Contains(t, logs, "drain: done, nothing was cut off")
}

// A background job still running at the drain timeout is killed, as
// before drains existed: no job outlives the worker that alone can stop
// it.
func TestDrainKillsBackgroundJobsAtTheTimeout(t *testing.T) {
	t.Parallel()
	marker := "longrun-drain-" + randHex(6)
	e := newEnvWorkerEnv(t, []string{"LONGRUN_DRAIN_TIMEOUT=2s"}, sm.Tools(backgroundCall("sleep 300; echo never # "+marker)), sm.Text("started it"))
	a := e.worker
	startJobSession(t, e)
	require.NotEmpty(t, processesWith(marker))

	signalled := time.Now()
	require.NoError(t, a.Process.Signal(syscall.SIGTERM))
	select {
	case err := <-exited(a):
		require.NoError(t, err)
	case <-time.After(30 * time.Second):
		t.Fatal("the worker did not exit at the drain timeout")
	}
	require.Greater(t, time.Since(signalled), 2*time.Second, "the worker drained for the timeout")
	require.Contains(t, e.logs.String(), "drain: timeout reached; stopping what still runs")
	waitFor(t, "the job's processes to be gone", 20*time.Second, func() bool { return len(processesWith(marker)) == 0 })
	require.NotContains(t, jobLog(t, e.stateDir), "never")
}
