package checkout

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A worktree's checkpoint bundle holds the changes since the base, and
// names the base as its prerequisite; another machine restores it with
// the base fetched from the session's repository (and says plainly when
// it cannot have it). The restored checkout's branch, bundled at the end,
// is fetched into the person's repository, where starter diff reads it.
func TestBundleRestoresAWorktreeCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, stateA, stateB := newRepo(t), t.TempDir(), t.TempDir()
	in, err := Create(ctx, repo, stateA, "b1", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "f.txt"), []byte("two\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "untracked.txt"), []byte("u\n"), 0o644))
	c, err := Checkpoint(ctx, in, "")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "ckpt.bundle")
	require.Error(t, BundleCheckpoint(ctx, in, in.Base, file), "not the checkpoint the ref holds")
	require.NoError(t, BundleCheckpoint(ctx, in, c, file))
	out, err := runAll(ctx, repo, "bundle", "verify", file)
	require.NoError(t, err)
	require.Contains(t, out, "requires this ref:\n"+in.Base, "the base is the prerequisite, left out")
	require.NoError(t, os.RemoveAll(stateA)) // machine A is gone

	_, err = RestoreBundle(ctx, in, stateB, []string{filepath.Join(t.TempDir(), "nowhere")}, file, c)
	require.ErrorIs(t, err, ErrNoBase)
	require.Contains(t, err.Error(), "not on this machine")
	other := t.TempDir()
	_, err = git(ctx, other, nil, "init", "-q")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(other, "g.txt"), []byte("other\n"), 0o644))
	_, err = Commit(ctx, other, "another history")
	require.NoError(t, err)
	_, err = RestoreBundle(ctx, in, stateB, []string{other}, file, c)
	require.ErrorIs(t, err, ErrNoBase, "another repository lacks the base")
	require.Contains(t, err.Error(), "does not give that commit")
	nowhere := filepath.Join(t.TempDir(), "nowhere")
	_, err = RestoreBundle(ctx, in, stateB, []string{nowhere, other}, file, c)
	require.ErrorIs(t, err, ErrNoBase)
	require.Contains(t, err.Error(), "the session's repository "+nowhere+", which is not on this machine", "the session's own repository is named first")
	require.Contains(t, err.Error(), "tried too: "+other)
	// A clone of the repository at another path (the restoring worker's
	// own workspace) gives the base when the session's path is not here.
	clone := filepath.Join(t.TempDir(), "clone")
	_, err = runAll(ctx, repo, "clone", "-q", repo, clone)
	require.NoError(t, err)
	fromClone, err := RestoreBundle(ctx, in, t.TempDir(), []string{nowhere, other, clone}, file, c)
	require.NoError(t, err)
	b, err := os.ReadFile(filepath.Join(fromClone.Dir, "f.txt"))
	require.NoError(t, err)
	require.Equal(t, "two\n", string(b))
	_, err = RestoreBundle(ctx, in, stateB, []string{repo}, file, "")
	require.ErrorIs(t, err, ErrNoCheckpoint)

	out2, err := RestoreBundle(ctx, in, stateB, []string{repo}, file, c)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(stateB, Dir, in.Name), out2.Dir)
	require.Equal(t, out2.Dir, out2.Repo)
	b, err = os.ReadFile(filepath.Join(out2.Dir, "f.txt"))
	require.NoError(t, err)
	require.Equal(t, "two\n", string(b))
	head, _ := git(ctx, out2.Dir, nil, "rev-parse", in.Branch)
	require.Equal(t, in.Base, head, "the branch is as it was")
	status, _ := git(ctx, out2.Dir, nil, "status", "--porcelain")
	require.Equal(t, "M f.txt\n?? untracked.txt", status)
	again, err := RestoreBundle(ctx, in, stateB, []string{repo}, file, c)
	require.NoError(t, err, "a retry makes it afresh")
	require.Equal(t, out2, again)

	// The next checkpoint on B bundles again: B's repository has the base.
	require.NoError(t, os.WriteFile(filepath.Join(out2.Dir, "b.txt"), []byte("on B\n"), 0o644))
	c2, err := Checkpoint(ctx, out2, c)
	require.NoError(t, err)
	require.NoError(t, BundleCheckpoint(ctx, out2, c2, filepath.Join(t.TempDir(), "b.bundle")))

	closed, err := CloseTo(ctx, out2, "the session's change", "")
	require.NoError(t, err)
	require.NotEmpty(t, closed.Commit)
	require.DirExists(t, out2.Dir, "no remote: kept until its branch is stored")
	branchFile := filepath.Join(t.TempDir(), "branch.bundle")
	ok, err := BundleBranch(ctx, out2, branchFile)
	require.NoError(t, err)
	require.True(t, ok)
	require.NoError(t, RemoveRestored(out2))
	require.NoDirExists(t, out2.Dir)
	require.NoError(t, FetchBranch(ctx, repo, branchFile, in.Branch))
	d, err := Diff(ctx, in)
	require.NoError(t, err)
	for _, want := range []string{"+two", "+u", "+on B"} {
		require.Contains(t, d, want)
	}
}

// A branch still at its base has nothing to bundle: the session's
// repository holds it already.
func TestBundleBranchAtItsBase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in, err := Create(ctx, newRepo(t), t.TempDir(), "b2", "")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "branch.bundle")
	ok, err := BundleBranch(ctx, in, file)
	require.NoError(t, err)
	require.False(t, ok)
	require.NoFileExists(t, file)
}

// A copy's repository is its own: its bundle holds the whole history, and
// restores on a machine that has nothing of it.
func TestBundleRestoresACopyCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, stateA, stateB := t.TempDir(), t.TempDir(), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "a.txt"), []byte("a\n"), 0o644))
	in, err := CreateCopy(ctx, src, stateA, "b3", DefaultCopyLimit)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "a.txt"), []byte("changed\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "new.txt"), []byte("new\n"), 0o644))
	c, err := Checkpoint(ctx, in, "")
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "ckpt.bundle")
	require.NoError(t, BundleCheckpoint(ctx, in, c, file))
	out, err := runAll(ctx, src, "bundle", "list-heads", file)
	require.NoError(t, err)
	require.Contains(t, out, CheckpointRef(in.Name))
	require.NoError(t, os.RemoveAll(stateA))

	got, err := RestoreBundle(ctx, in, stateB, nil, file, c)
	require.NoError(t, err, "a copy needs no repository")
	require.True(t, got.Copy)
	b, err := os.ReadFile(filepath.Join(got.Dir, "a.txt"))
	require.NoError(t, err)
	require.Equal(t, "changed\n", string(b))
	require.FileExists(t, filepath.Join(got.Dir, "new.txt"))
	head, _ := git(ctx, got.Dir, nil, "rev-parse", in.Branch)
	require.Equal(t, in.Base, head)

	closed, err := CloseTo(ctx, got, "done", "")
	require.NoError(t, err)
	require.NotEmpty(t, closed.Commit)
	branchFile := filepath.Join(t.TempDir(), "branch.bundle")
	ok, err := BundleBranch(ctx, got, branchFile)
	require.NoError(t, err)
	require.True(t, ok, "a copy's branch is always bundled: nobody else holds it")
	require.NoError(t, RemoveRestored(got))
	require.DirExists(t, got.Dir, "a copy is kept: its branch lives there")
	other := t.TempDir()
	_, err = git(ctx, other, nil, "init", "-q")
	require.NoError(t, err)
	require.NoError(t, FetchBranch(ctx, other, branchFile, in.Branch))
	files, _ := git(ctx, other, nil, "ls-tree", "-r", "--name-only", in.Branch)
	require.Equal(t, "a.txt\nnew.txt", files)
}

// runAll is git with its output and error output together (bundle verify
// writes to both).
func runAll(ctx context.Context, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir, cmd.Env = dir, append(os.Environ(), "LC_ALL=C")
	out, err := cmd.CombinedOutput()
	return strings.TrimSpace(string(out)), err
}
