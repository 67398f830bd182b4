package tools

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
