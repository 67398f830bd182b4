package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/longrun/longrun/checkout"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// realDir is t.TempDir() by its real path, as the worker and git name it.
func realDir(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

// gitRepo makes dir a repository whose first commit holds files.
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	git(t, dir, "init", "-q", ".")
	for name, content := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
		git(t, dir, "add", name)
	}
	git(t, dir, "commit", "-qm", "first")
}

// waitPoller waits until a worker polls the task queue tq of the server c
// talks to.
func waitPoller(t *testing.T, c client.Client, tq string) {
	t.Helper()
	waitFor(t, "a worker polling "+tq, 60*time.Second, func() bool {
		resp, err := c.DescribeTaskQueue(context.Background(), tq, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		return err == nil && len(resp.GetPollers()) > 0
	})
}

// Must show (issue 29, "work where the person is"): a worker serving two
// workspace roots; `longrun start` run in a subdirectory of a repository
// under the second root works on that repository (its branch holds the
// change, made in the subdirectory), says what it works on and what to
// run next; `apply` run in the first root's repository refuses, naming
// the session's; run in the session's repository it applies there.
func TestStartWorksWhereThePersonIs(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "r1", Name: "read", Arguments: `{"path": "notes.txt"}`}),
		sm.Tools(sm.Call{ID: "w1", Name: "write", Arguments: `{"path": "notes.txt", "content": "new notes\n"}`}),
		sm.Text("Wrote the notes"),
	)
	e.stopWorker()
	e.workspace = realDir(t)
	gitRepo(t, e.workspace, map[string]string{"notes.txt": "first root\n"})
	other := realDir(t)
	repo := filepath.Join(other, "proj")
	gitRepo(t, repo, map[string]string{"pkg/notes.txt": "old notes\n"})
	e.workerArgs = append(e.workerArgs, "--workspace", other)
	e.startWorker()
	waitPoller(t, tc, workflows.RootQueue(e.taskQueue, other))

	id := "e2e-where-" + randHex(4)
	e.starterDir = filepath.Join(repo, "pkg")
	out, err := e.starter("start", "--id", id, "--profile", "auto", "write the notes")
	require.NoError(t, err, out)
	require.Contains(t, out, "repository "+repo+" (in pkg)")
	require.Contains(t, out, "branch "+checkout.Branch(id))
	require.Contains(t, out, "watch "+id)
	require.Contains(t, out, "apply "+id)

	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	if w := resultFor(e.checkSession(id), "w1"); w.IsError {
		t.Fatalf("the write failed: %+v", w)
	}
	require.Equal(t, "new notes\n", gitOut(t, repo, "show", checkout.Branch(id)+":pkg/notes.txt"), "the change is on the session's branch of the person's repository, in their subdirectory")
	b, _ := os.ReadFile(filepath.Join(e.workspace, "notes.txt"))
	require.Equal(t, "first root\n", string(b), "the first root is untouched")
	require.Error(t, exec.Command("git", "-C", e.workspace, "rev-parse", "--verify", "--quiet", "refs/heads/"+checkout.Branch(id)).Run(),
		"no branch in the first root's repository")

	e.starterDir = e.workspace
	out, err = e.starter("apply", id)
	require.Error(t, err, out)
	require.Contains(t, out, "works on "+repo)
	require.Contains(t, out, "nothing was applied")
	b, _ = os.ReadFile(filepath.Join(e.workspace, "notes.txt"))
	require.Equal(t, "first root\n", string(b))

	e.starterDir = filepath.Join(repo, "pkg")
	out, err = e.starter("apply", id)
	require.NoError(t, err, out)
	b, _ = os.ReadFile(filepath.Join(repo, "pkg", "notes.txt"))
	require.Equal(t, "new notes\n", string(b), "apply wrote into the session's repository")
}

// Must show: `longrun start` in a directory no worker serves refuses at
// once, naming the directory and the worker flag that would serve it,
// and starts nothing.
func TestStartRefusesADirectoryNoWorkerServes(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Text("never"))
	waitPoller(t, tc, e.taskQueue) // a worker listens, but not for outside
	outside := realDir(t)
	e.starterDir = outside
	id := "e2e-nowhere-" + randHex(4)
	out, err := e.starter("start", "--id", id, "hello")
	require.Equal(t, 1, exitCode(t, err), out)
	require.Contains(t, out, "no worker serves "+outside+": start longrun-worker --workspace "+outside)
	_, err = describeRun(context.Background(), tc, id, "")
	require.Error(t, err, "no session was started")
}

// Must show: with no worker listening, start still starts the session
// (it waits durably) but says so loudly; status and pending say so at
// once instead of timing out; watch says so and keeps watching. A worker
// started as the message says then runs the session.
func TestNoWorkerListeningIsSaidAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Text("done at last"))
	e.stopWorker()
	e.workspace = realDir(t)
	nobody := "e2e-nobody-" + randHex(6)
	e.starterEnv = append(e.starterEnv, "LONGRUN_TASK_QUEUE="+nobody)
	id := "e2e-nobody-" + randHex(4)
	out, err := e.starter("start", "--id", id, "hello")
	require.NoError(t, err, out)
	require.Contains(t, out, "no worker is polling task queue "+nobody+" at "+temporalAddr+": start longrun-worker --workspace "+e.workspace)
	require.Contains(t, out, "waits (durably) on task queue "+workflows.RootQueue(nobody, e.workspace))

	for _, cmd := range []string{"status", "pending"} {
		began := time.Now()
		out, err = e.starter(cmd, id)
		require.Equal(t, 1, exitCode(t, err), out)
		require.Contains(t, out, "no worker is polling task queue "+workflows.RootQueue(nobody, e.workspace), cmd)
		require.Less(t, time.Since(began), 8*time.Second, "%s said it at once", cmd)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	w := exec.CommandContext(ctx, filepath.Join(binDir, "starter"), "watch", "--no-interactive", id)
	w.Dir = e.workspace
	w.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+temporalAddr, "LONGRUN_TASK_QUEUE="+nobody)
	wout, _ := w.CombinedOutput()
	require.Contains(t, string(wout), "no worker is polling task queue "+workflows.RootQueue(nobody, e.workspace))
	require.Equal(t, 1, strings.Count(string(wout), "no worker is polling"), "said once: %s", wout)

	e.taskQueue = nobody
	e.startWorker()
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status, "the session waited and ran once a worker came")
}

// Must show: watch across a server restart. A call waits for approval;
// while the server is down an answer typed into watch is reported as not
// recorded, watch says it lost the server, and once the server is back
// on the same database and port it says so and asks about the call
// again; the answer given then is recorded and the session completes.
func TestWatchAcrossAServerRestartAsksAgain(t *testing.T) {
	t.Parallel()
	srv := startOwnServer(t)
	addr, c := srv.addr, srv.c

	e := newEnvWorkerEnv(t, []string{"TEMPORAL_ADDRESS=" + addr},
		sm.Tools(sm.Call{ID: "w1", Name: "write", Arguments: `{"path": "answer.txt", "content": "recorded\n"}`}),
		sm.Text("done"),
	)
	e.starterEnv = []string{"TEMPORAL_ADDRESS=" + addr}
	ws, err := filepath.EvalSymlinks(e.workspace)
	require.NoError(t, err)
	waitPoller(t, c, workflows.RootQueue(e.taskQueue, ws))
	id := "e2e-outage-" + randHex(4)
	out, err := e.starter("start", "--id", id, "--in-place", "write the answer")
	require.NoError(t, err, out)

	r := e.startPty("watch", id)
	defer func() {
		if r.cmd.ProcessState == nil {
			_ = r.cmd.Process.Kill()
		}
	}()
	r.waitFor("approve? [y]es")

	srv.down(false)
	r.typeLine("y") // while the server is down
	r.waitFor("NOT recorded")
	r.waitFor("lost the server at " + addr)
	require.NoFileExists(t, filepath.Join(e.workspace, "answer.txt"))

	srv.up()
	r.waitFor("is back")
	waitFor(t, "watch to ask about the call again", 90*time.Second, func() bool {
		return strings.Count(r.String(), "approve? [y]es") >= 2
	})
	r.typeLine("y")
	out = r.wait()
	require.Contains(t, out, "approved")
	require.Contains(t, out, "finished")
	b, err := os.ReadFile(filepath.Join(e.workspace, "answer.txt"))
	require.NoError(t, err)
	require.Equal(t, "recorded\n", string(b), "the answer given after the restart was recorded and the call ran")
}
