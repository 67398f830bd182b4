package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/workflows"
)

// Must show 2 of issue 17: two workers with state directories of their
// own stand for two machines; they share only the Temporal server and a
// bare checkpoint remote ("remote") or only a transcript store directory
// ("transcript": each checkpoint is a git bundle there). The session
// changes files on worker A over two turns; while its third call runs
// there, A is killed and its state directory (its checkout with it)
// deleted. The session finishes on B with every earlier change present
// and the lost call's change gone, the call in flight answered
// worker_lost, every call paired, its branch reachable by starter diff,
// and its history replays.
func TestLostWorkerRestoresTheCheckoutOnAnother(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"remote", "transcript"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			lostWorkerRestores(t, via)
		})
	}
}

func lostWorkerRestores(t *testing.T, via string) {
	remote, store := t.TempDir(), t.TempDir()
	git(t, remote, "init", "-q", "--bare")
	script := map[string][]sm.Reply{
		"two machines": {
			sm.Tools(isoShell("c1", "printf 'one\\n' > one.txt && printf 'changed\\n' > greeting.txt")),
			sm.Tools(isoShell("c2", "mkdir -p sub && printf 'two\\n' > sub/two.txt")),
			sm.Tools(isoShell("c3", "printf 'late\\n' > lost.txt && sleep 100")),
			sm.Tools(isoShell("c4", "cat one.txt sub/two.txt greeting.txt; ls")),
			sm.Tools(isoShell("c5", "printf 'four\\n' > four.txt")),
			sm.Text("Done on the second machine"),
		},
	}
	e := isolationEnv(t, func(string) map[string][]sm.Reply { return script })
	// Worker A again, with the checkpoint remote and no transcript store
	// (the conversation lives in the history alone), or with a transcript
	// store the workers share and no remote.
	e.stopWorker()
	if via == "remote" {
		e.workerArgs = append(e.workerArgs, "--checkpoint-remote", remote, "--transcript", "off")
	} else {
		e.workerArgs = append(e.workerArgs, "--transcript", store)
		e.starterEnv = []string{"LONGRUN_TRANSCRIPT_DIR=" + store}
	}
	e.startWorker()
	a := e.worker
	stateA := e.stateDir

	id := e.startIsolated(workflows.SessionInput{
		Prompt: "two machines", Profile: "auto",
		WorkerLostAfter: workflows.Duration(3 * time.Second),
	})
	name := checkout.Sanitize(id)
	lostFile := filepath.Join(stateA, checkout.Dir, name, "lost.txt")
	waitFor(t, "the third call running on worker A", 90*time.Second, func() bool {
		_, err := os.Stat(lostFile)
		return err == nil
	})
	if via == "remote" {
		pushed := gitOut(t, remote, "for-each-ref", "--format=%(refname)")
		require.Contains(t, pushed, checkout.CheckpointRef(name), "the earlier turns' checkpoint is in the remote")
	} else {
		running := query[*session.Checkout](t, id, workflows.QueryCheckout)
		require.NotEmpty(t, running.Bundle, "the earlier turns' checkpoint is a bundle in the store")
		require.FileExists(t, storeFile(store, running.Bundle))
	}

	// Machine B: its own state and configuration, started only now, so
	// the checkout was surely made on A.
	b := *e
	b.stateDir, b.configDir = t.TempDir(), t.TempDir()
	b.startWorker()

	require.NoError(t, a.Process.Kill())
	_ = a.Wait()
	require.NoError(t, os.RemoveAll(stateA))

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var r workflows.SessionResult
	require.NoError(t, tc.GetWorkflow(ctx, id, "").Get(ctx, &r))
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	require.Equal(t, checkout.Branch(id), r.Branch)
	require.NotEmpty(t, r.Commit)

	msgs := e.checkSession(id) // every call paired
	require.Equal(t, conversation.ReasonWorkerLost, resultFor(msgs, "c3").Reason, "the call in flight")
	c4 := resultFor(msgs, "c4")
	require.NotNil(t, c4)
	require.False(t, c4.IsError, c4.Content)
	require.Contains(t, c4.Content, "one\ntwo\nchanged\n", "every earlier change is in the restored checkout")
	require.NotContains(t, c4.Content, "lost.txt", "the lost call's change came after the last checkpoint")
	told := false
	for _, m := range msgs {
		told = told || (m.Role == conversation.RoleUser && strings.Contains(m.Content, "was lost") && strings.Contains(m.Content, "c3"))
	}
	require.True(t, told, "the model is told what happened")

	co := query[*session.Checkout](t, id, workflows.QueryCheckout)
	require.Equal(t, e.workspace, co.Origin)
	require.Equal(t, filepath.Join(b.stateDir, checkout.Dir, name), co.Dir, "the checkout is B's now")
	require.NotEmpty(t, co.Checkpoint)
	require.NoDirExists(t, co.Dir, "B's checkout is removed once its branch is stored")
	payloads := string(decodedPayloads(history(t, id)))
	require.Contains(t, payloads, co.Checkpoint, "the history holds the checkpoint's id")

	if via == "remote" {
		require.Equal(t, remote, co.Remote)
		files := gitOut(t, remote, "ls-tree", "-r", "--name-only", r.Branch)
		require.Equal(t, "four.txt\ngreeting.txt\none.txt\nsub/two.txt\n", files, "the branch, pushed to the remote")
	} else {
		require.Empty(t, co.Remote)
		require.NotEmpty(t, co.Bundle)
		require.Contains(t, payloads, co.Bundle, "the history holds the bundle's reference")
		require.NotEmpty(t, co.BranchBundle, "the branch, stored as a bundle")
		require.FileExists(t, storeFile(store, co.BranchBundle))
		require.Empty(t, gitOut(t, remote, "for-each-ref"), "no remote was used")
	}
	out, err := e.starter("diff", id)
	require.NoError(t, err, out)
	for _, want := range []string{"+one", "+two", "+changed", "+four"} {
		require.Contains(t, out, want, "starter diff fetches the branch from where it was stored")
	}

	rep := worker.NewWorkflowReplayer()
	rep.RegisterWorkflowWithOptions((&workflows.Sessions{}).AgentSession, workflow.RegisterOptions{Name: workflows.WorkflowType})
	require.NoError(t, rep.ReplayWorkflowHistory(nil, history(t, id)))
	if via == "remote" {
		recordHistory(t, id, "worker_lost_restored")
	} else {
		recordHistory(t, id, "worker_lost_restored_bundle")
	}
}

// storeFile is where a directory transcript store keeps ref's blob.
func storeFile(store, ref string) string {
	h := strings.TrimPrefix(ref, "sha256:")
	return filepath.Join(store, h[:2], h)
}
