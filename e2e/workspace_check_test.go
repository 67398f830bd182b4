package e2e

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/permission"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// envOn is a worker on the workspace ws with extra flags, and a scripted
// model.
func envOn(t *testing.T, ws string, args []string, script ...sm.Reply) *env {
	t.Helper()
	e := &env{
		t: t, model: sm.New(script...), workspace: ws, workerArgs: args,
		taskQueue: "e2e-" + randHex(6), apiKey: "sk-test-" + randHex(16),
	}
	t.Cleanup(e.model.Close)
	e.startWorker()
	return e
}

// personRepo is a person's repository: README.md committed, .gitignore
// ignoring .longrun/ (as the Longrun clone does) and build/, and beside
// them an ignored .longrun/demo-workspace and build/, and an untracked
// scratch/, each holding a file.
func personRepo(t *testing.T) string {
	t.Helper()
	repo := t.TempDir()
	git(t, repo, "init", "-q", ".")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "README.md"), []byte("# project\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("/.longrun/\nbuild/\n"), 0o644))
	git(t, repo, "add", ".")
	git(t, repo, "commit", "-qm", "first")
	for _, d := range []string{".longrun/demo-workspace", "build", "scratch"} {
		dir := filepath.Join(repo, filepath.FromSlash(d))
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes of "+d+"\n"), 0o644))
	}
	return repo
}

// sessionBranches lists the longrun/ branches of repo.
func sessionBranches(t *testing.T, repo string) string {
	t.Helper()
	return strings.TrimSpace(gitOut(t, repo, "branch", "--list", "longrun/*"))
}

// failedAtOnce checks that session id failed, not completed, with an
// error holding every one of says, without asking the model anything,
// and that its checkout was tried once: the refusal is not retried.
func failedAtOnce(t *testing.T, e *env, id string, says ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var r workflows.SessionResult
	err := tc.GetWorkflow(ctx, id, "").Get(ctx, &r)
	require.Error(t, err, "the session must fail, not end %q", r.Status)
	for _, s := range says {
		require.Contains(t, err.Error(), s)
	}
	desc, derr := describeRun(ctx, tc, id, "")
	require.NoError(t, derr)
	require.Equal(t, enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, desc.GetWorkflowExecutionInfo().GetStatus())
	require.Empty(t, e.model.Requests(), "the model was asked although the session could not work")
	attempts := 0
	for _, ev := range history(t, id).Events {
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			attempts = int(a.GetAttempt())
		}
	}
	require.Equal(t, 1, attempts, "the checkout's refusal was retried")
	out, _ := e.starter("status", id)
	require.Contains(t, out, "failed", "status says how it ended")
}

// Issue 29, "fail at the first sign": a worker whose --workspace is a
// directory git ignores, or one not committed, under a repository refuses
// to start, naming the directory and the three ways on. Each session
// would work in a checkout of the repository's HEAD, without that
// directory: every call failing, the session "completed". With the third
// way, --in-place, it starts, and a session works in the directory
// itself, leaving no branch in the repository.
func TestWorkerRefusesAWorkspaceACheckoutCannotHold(t *testing.T) {
	t.Parallel()
	repo := personRepo(t)
	for dir, why := range map[string]string{
		filepath.Join(repo, ".longrun", "demo-workspace"): "is ignored by git",
		filepath.Join(repo, "build"):                      "is ignored by git",
		filepath.Join(repo, "scratch"):                    "is not committed",
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		cmd := exec.CommandContext(ctx, filepath.Join(binDir, "worker"), "--workspace", dir,
			"--state-dir", t.TempDir(), "--config", t.TempDir())
		cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+temporalAddr, "LONGRUN_TASK_QUEUE=e2e-"+randHex(6),
			"OPENAI_API_KEY=sk-none", "LONGRUN_SKILLS_DIRS=off")
		out, err := cmd.CombinedOutput()
		cancel()
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "the worker on %s must exit refusing, got %v:\n%s", dir, err, out)
		require.NotEqual(t, 0, exit.ExitCode())
		for _, s := range []string{dir, why, repo, "git add, git commit", "git init", "--in-place"} {
			require.Contains(t, string(out), s, "the refusal of %s", dir)
		}
	}

	dir := filepath.Join(repo, ".longrun", "demo-workspace")
	e := envOn(t, dir, []string{"--in-place"},
		sm.Reply{ToolCalls: []sm.Call{{ID: "w", Name: "write", Arguments: `{"path": "NOTES.md", "content": "in place\n"}`}}},
		sm.Text("wrote it"))
	id := e.startIsolated(workflows.SessionInput{Prompt: "write NOTES.md",
		Rules: []permission.Rule{{Tool: "write", Action: permission.Allow}}})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	b, err := os.ReadFile(filepath.Join(dir, "NOTES.md"))
	require.NoError(t, err, "the session works in the directory itself")
	require.Equal(t, "in place\n", string(b))
	require.Empty(t, sessionBranches(t, repo), "an in-place session leaves no branch")
	require.Nil(t, query[*struct{}](t, id, workflows.QueryCheckout), "the session has no checkout")
	e.checkSession(id)
}

// A repository with no commit yet: the worker starts and says what will
// happen, and a session there fails at once, once, saying "make a first
// commit or start --in-place", instead of three retries of the same git
// error.
func TestSessionOnARepositoryWithNoCommitFailsAtOnce(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	git(t, ws, "init", "-q", ".")
	require.NoError(t, os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n"), 0o644))
	e := envOn(t, ws, nil, sm.Text("must not be asked"))
	waitFor(t, "the worker's warning", 30*time.Second, func() bool { return strings.Contains(e.logs.String(), "no commit yet") })
	id := e.startIsolated(workflows.SessionInput{Prompt: "look around"})
	failedAtOnce(t, e, id, activities.ErrTypeNoCommit, ws+" has no commit yet", "make a first commit", "--in-place")
}

// A session whose working directory is one the repository does not hold
// (untracked here) ends failed with that reason before the model is
// asked, rather than completed after every call failed on "workspace
// subdirectory ... does not exist" (issue 29, friction 2). Nothing is
// left in the repository.
func TestSessionWhoseWorkDirIsNotCommittedFails(t *testing.T) {
	t.Parallel()
	repo := personRepo(t)
	e := envOn(t, repo, nil,
		sm.Reply{ToolCalls: []sm.Call{{ID: "r", Name: "read", Arguments: `{"path": "notes.txt"}`}}},
		sm.Text("read it"))
	id := e.startIsolated(workflows.SessionInput{Prompt: "read notes.txt", WorkDir: "scratch"})
	failedAtOnce(t, e, id, activities.ErrTypeNotInBase, filepath.Join(repo, "scratch")+" is not committed",
		"git init", "--in-place")
	require.Empty(t, sessionBranches(t, repo), "a refused session leaves no branch")
	left, _ := os.ReadDir(filepath.Join(e.stateDir, "checkouts"))
	require.Empty(t, left, "a refused session leaves no checkout")
}
