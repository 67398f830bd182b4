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
// bare checkpoint remote. The session changes files on worker A over two
// turns; while its third call runs there, A is killed and its state
// directory (its checkout with it) deleted. The session finishes on B with
// every earlier change present and the lost call's change gone, the call
// in flight answered worker_lost, every call paired, and its history
// replays.
func TestLostWorkerRestoresTheCheckoutOnAnother(t *testing.T) {
	t.Parallel()
	remote := t.TempDir()
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
	// Worker A again, with the checkpoint remote, and no transcript store:
	// the workers share nothing else, so the conversation lives in the
	// history alone.
	e.stopWorker()
	e.workerArgs = append(e.workerArgs, "--checkpoint-remote", remote, "--transcript", "off")
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
	pushed := gitOut(t, remote, "for-each-ref", "--format=%(refname)")
	require.Contains(t, pushed, checkout.CheckpointRef(name), "the earlier turns' checkpoint is in the remote")

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
	require.Equal(t, remote, co.Remote)
	require.NoDirExists(t, co.Dir, "B's checkout is removed once its branch is in the remote")
	require.Contains(t, string(decodedPayloads(history(t, id))), co.Checkpoint, "the history holds the checkpoint's id")

	files := gitOut(t, remote, "ls-tree", "-r", "--name-only", r.Branch)
	require.Equal(t, "four.txt\ngreeting.txt\none.txt\nsub/two.txt\n", files, "the branch, pushed to the remote")
	out, err := e.starter("diff", id)
	require.NoError(t, err, out)
	for _, want := range []string{"+one", "+two", "+changed", "+four"} {
		require.Contains(t, out, want, "starter diff fetches the branch from the remote")
	}

	rep := worker.NewWorkflowReplayer()
	rep.RegisterWorkflowWithOptions((&workflows.Sessions{}).AgentSession, workflow.RegisterOptions{Name: workflows.WorkflowType})
	require.NoError(t, rep.ReplayWorkflowHistory(nil, history(t, id)))
	recordHistory(t, id, "worker_lost_restored")
}
