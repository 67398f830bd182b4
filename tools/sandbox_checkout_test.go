package tools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
)

// checkoutGitDirs binds a git directory only for a root in the worker's
// checkouts directory, and then the repository's common directory; a
// workspace's own .git file (which a person or a model may have written)
// binds nothing.
func TestCheckoutGitDirsOnlyForTheWorkersCheckouts(t *testing.T) {
	t.Parallel()
	repo, state := realDir(t.TempDir()), realDir(t.TempDir())
	for _, args := range [][]string{
		{"init", "-q", "."},
		{"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "first"},
		{"worktree", "add", "-q", "-b", "longrun/s", filepath.Join(state, checkoutsDir, "s")},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	co := filepath.Join(state, checkoutsDir, "s")
	require.Equal(t, []string{filepath.Join(repo, ".git")}, checkoutGitDirs(state, co))
	require.NoError(t, os.MkdirAll(filepath.Join(co, "sub"), 0o755))
	require.Equal(t, []string{filepath.Join(repo, ".git"), filepath.Join(co, ".git")}, checkoutGitDirs(state, filepath.Join(co, "sub")),
		"a working directory below the checkout's top also gets the .git file git looks for")

	ws := realDir(t.TempDir())
	require.NoError(t, os.WriteFile(filepath.Join(ws, ".git"), []byte("gitdir: "+filepath.Join(repo, ".git")+"\n"), 0o644))
	require.Empty(t, checkoutGitDirs(state, ws), "a workspace outside the checkouts binds nothing")
	require.Empty(t, checkoutGitDirs("", co))
	require.Empty(t, checkoutGitDirs(state, filepath.Join(state, checkoutsDir)))
}

// TestSessionSeesOnlyItsOwnRefs: a command in a session's checkout sees
// its own branch and checkpoint and the person's history, and none of
// another session's: its checkpoint ref (loose or packed), its branch,
// its worktree directory. Before, `git show
// refs/longrun/checkpoints/<other>:file` printed the other session's
// uncommitted file.
func TestSessionSeesOnlyItsOwnRefs(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	repo, state := realDir(t.TempDir()), realDir(t.TempDir())
	mark := randomName(t)
	git := func(dir string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return strings.TrimSpace(string(out))
	}
	git(repo, "init", "-q", ".")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "base.txt"), []byte("base\n"), 0o644))
	git(repo, "add", "base.txt")
	git(repo, "commit", "-q", "-m", "person's base")
	a, b := filepath.Join(state, checkoutsDir, "a"), filepath.Join(state, checkoutsDir, "b")
	git(repo, "worktree", "add", "-q", "-b", "longrun/a", a)
	git(repo, "worktree", "add", "-q", "-b", "longrun/b", b)
	// Each session's checkpoint: a commit on its own ref, made as the
	// worker makes it (not on the branch). b's is packed, a second one loose.
	checkpoint := func(dir, name, file, text string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644))
		git(dir, "add", file)
		tree := git(dir, "write-tree")
		c := git(dir, "commit-tree", tree, "-p", "HEAD", "-m", "checkpoint of "+name)
		git(dir, "update-ref", "refs/longrun/checkpoints/"+name, c)
		git(dir, "reset", "-q")
	}
	checkpoint(b, "b", "secret.txt", "b-secret-"+mark+"\n")
	git(repo, "pack-refs", "--all")
	checkpoint(b, "b", "secret2.txt", "b-loose-secret-"+mark+"\n")
	checkpoint(a, "a", "mine.txt", "a-own\n")
	require.NoError(t, os.WriteFile(filepath.Join(a, "mine.txt"), []byte("a-own\n"), 0o644))

	sh := NewShell(ShellConfig{Sandbox: SandboxOn})
	sh.stateDir = state
	ws, err := NewWorkspace(a)
	require.NoError(t, err)
	res := runTool(t, context.Background(), sh, Env{Workspace: ws, ReadOnlySandbox: true}, ShellParams{Command: `
git show refs/longrun/checkpoints/b:secret.txt 2>&1; git show refs/longrun/checkpoints/b:secret2.txt 2>&1
git log --all --format=%s 2>&1; git branch -a 2>&1; git worktree list 2>&1; git for-each-ref 2>&1
cat $(git rev-parse --git-common-dir)/packed-refs 2>&1; ls $(git rev-parse --git-common-dir)/worktrees 2>&1
echo OWN; git show refs/longrun/checkpoints/a:mine.txt; git status --short; git log --format=%s HEAD`})
	out := res.Content
	require.NotContains(t, out, "b-secret-"+mark)
	require.NotContains(t, out, "b-loose-secret-"+mark)
	require.NotContains(t, out, "checkpoint of b")
	require.NotContains(t, out, "longrun/b")
	require.NotContains(t, out, filepath.Join(state, checkoutsDir, "b"))
	_, own, ok := strings.Cut(out, "OWN\n")
	require.True(t, ok, out)
	require.Contains(t, own, "a-own\n", "the session's own checkpoint is readable")
	require.Contains(t, own, "?? mine.txt", "git status works")
	require.Contains(t, own, "person's base", "the base is there")
	require.Contains(t, out, "checkpoint of a")
}

// TestOwnCheckoutSeesNoOtherSessionsObjects: checkouts as package checkout
// makes them now, each a repository of its own borrowing the person's
// objects. A command in one session's sandbox enumerates every object it
// can read and finds its own checkpoint, its own commit and the person's
// history, and nothing of the other session's, checkpointed or committed;
// nor can it write the checkout's .git (its alternates, config or
// objects), nor put files in a .longrun the base lacks. Before, checkouts were worktrees sharing the person's object
// store: `git cat-file --batch-all-objects --batch` printed the other
// session's checkpointed file.
func TestOwnCheckoutSeesNoOtherSessionsObjects(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	ctx := context.Background()
	repo, state := realDir(t.TempDir()), realDir(t.TempDir())
	mark := randomName(t)
	cmd := exec.Command("sh", "-c", `git init -q -b main . && echo base > base.txt && git add base.txt && git -c user.name=t -c user.email=t@x commit -q -m "person's base"`)
	cmd.Dir = repo
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	a, err := checkout.Create(ctx, repo, state, "a", "")
	require.NoError(t, err)
	b, err := checkout.Create(ctx, repo, state, "b", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(b.Dir, "secret.txt"), []byte("b-ckpt-"+mark+"\n"), 0o644))
	_, err = checkout.Checkpoint(ctx, b, "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(b.Dir, "secret2.txt"), []byte("b-commit-"+mark+"\n"), 0o644))
	_, err = checkout.Commit(ctx, b.Dir, "b's commit")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(a.Dir, "mine.txt"), []byte("a-own-"+mark+"\n"), 0o644))
	_, err = checkout.Checkpoint(ctx, a, "")
	require.NoError(t, err)

	sh := NewShell(ShellConfig{Sandbox: SandboxOn})
	sh.stateDir = state
	ws, err := NewWorkspace(a.Dir)
	require.NoError(t, err)
	res := runTool(t, ctx, sh, Env{Workspace: ws}, ShellParams{Command: `
git cat-file --batch-all-objects --batch 2>&1 | grep -a -e b-ckpt- -e b-commit- -e a-own- -e base
git log --all --format=%s 2>&1; git for-each-ref 2>&1
echo x >> .git/objects/info/alternates 2>&1; echo y >> .git/config 2>&1; touch .git/objects/planted 2>&1
git -c user.name=m -c user.email=m@x commit -q --allow-empty -m model 2>&1
mkdir -p .longrun && echo '{"servers":{}}' > .longrun/mcp.json 2>&1
echo END`})
	got := res.Content
	require.NotContains(t, got, "b-ckpt-"+mark)
	require.NotContains(t, got, "b-commit-"+mark)
	require.NotContains(t, got, "b's commit")
	require.NotContains(t, got, "longrun/b")
	require.Contains(t, got, "a-own-"+mark, "the session's own checkpoint is readable")
	require.Contains(t, got, "person's base", "the person's history is there")
	require.Contains(t, got, "END")
	alt, err := os.ReadFile(filepath.Join(a.Dir, ".git", "objects", "info", "alternates"))
	require.NoError(t, err)
	require.NotContains(t, string(alt), "x")
	require.NoFileExists(t, filepath.Join(a.Dir, ".git", "objects", "planted"))
	cfg, err := os.ReadFile(filepath.Join(a.Dir, ".git", "config"))
	require.NoError(t, err)
	require.NotContains(t, string(cfg), "y\n")
	require.NoFileExists(t, filepath.Join(a.Dir, ".longrun", "mcp.json"), "the checkout's empty .longrun is bound read-only: no command fills it")
}
