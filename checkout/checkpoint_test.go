package checkout

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// newRemote is an empty bare repository standing for the shared
// checkpoint remote.
func newRemote(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	_, err := git(context.Background(), dir, nil, "init", "-q", "--bare")
	require.NoError(t, err)
	return dir
}

// A checkpoint holds the checkout's files, untracked ones included and
// ignored ones not, on the private ref, and leaves the checkout's index,
// branch and working tree as they were; an unchanged checkout makes no
// new commit.
func TestCheckpointRecordsFilesOnAPrivateRef(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state := newRepo(t), t.TempDir()
	in, err := Create(ctx, repo, state, "s1", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, ".gitignore"), []byte("*.log\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "f.txt"), []byte("two\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "new.txt"), []byte("new\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "noise.log"), []byte("x\n"), 0o644))
	statusBefore, _ := git(ctx, in.Dir, nil, "status", "--porcelain")

	c1, err := Checkpoint(ctx, in, "")
	require.NoError(t, err)
	ref, _ := git(ctx, in.Dir, nil, "rev-parse", CheckpointRef(in.Name))
	require.Equal(t, c1, ref)
	files, _ := git(ctx, in.Dir, nil, "ls-tree", "-r", "--name-only", c1)
	require.Equal(t, ".gitignore\nf.txt\nnew.txt", files, "untracked files in, ignored ones out")
	head, _ := git(ctx, in.Dir, nil, "rev-parse", "HEAD")
	require.Equal(t, in.Base, head, "the branch did not move")
	parent, _ := git(ctx, in.Dir, nil, "rev-parse", c1+"^")
	require.Equal(t, head, parent)
	statusAfter, _ := git(ctx, in.Dir, nil, "status", "--porcelain")
	require.Equal(t, statusBefore, statusAfter, "the checkout's index is untouched")

	again, err := Checkpoint(ctx, in, c1)
	require.NoError(t, err)
	require.Equal(t, c1, again, "unchanged: the previous checkpoint")
	require.NoError(t, os.Remove(filepath.Join(in.Dir, "new.txt")))
	c2, err := Checkpoint(ctx, in, c1)
	require.NoError(t, err)
	require.NotEqual(t, c1, c2)
	files, _ = git(ctx, in.Dir, nil, "ls-tree", "-r", "--name-only", c2)
	require.Equal(t, ".gitignore\nf.txt", files, "a deleted file is gone from the next one")
}

// A checkpoint pushed to a remote is restored on a machine with no copy of
// the repository: the branch as it was, the files as checkpointed; the
// restored checkout's close pushes the branch and removes it, and the
// person's repository fetches the branch from the remote.
func TestRestoreFromTheRemoteOnAnotherMachine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, stateA, stateB, remote := newRepo(t), t.TempDir(), t.TempDir(), newRemote(t)
	in, err := Create(ctx, repo, stateA, "s2", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "f.txt"), []byte("two\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "untracked.txt"), []byte("u\n"), 0o644))
	c, err := Checkpoint(ctx, in, "")
	require.NoError(t, err)
	require.NoError(t, PushCheckpoint(ctx, in.Dir, remote, in.Name, c))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "late.txt"), []byte("after the checkpoint\n"), 0o644))
	require.NoError(t, os.RemoveAll(stateA)) // machine A is gone

	_, err = Restore(ctx, in, stateB, "", c)
	require.ErrorIs(t, err, ErrNoCheckpoint, "no remote")
	_, err = Restore(ctx, in, stateB, remote, "")
	require.ErrorIs(t, err, ErrNoCheckpoint)

	out, err := Restore(ctx, in, stateB, remote, c)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(stateB, Dir, in.Name), out.Dir)
	require.Equal(t, out.Dir, out.Repo)
	b, err := os.ReadFile(filepath.Join(out.Dir, "f.txt"))
	require.NoError(t, err)
	require.Equal(t, "two\n", string(b))
	require.FileExists(t, filepath.Join(out.Dir, "untracked.txt"))
	require.NoFileExists(t, filepath.Join(out.Dir, "late.txt"), "only what the checkpoint holds")
	head, _ := git(ctx, out.Dir, nil, "rev-parse", in.Branch)
	require.Equal(t, in.Base, head, "the branch is as it was")
	status, _ := git(ctx, out.Dir, nil, "status", "--porcelain")
	require.Equal(t, "M f.txt\n?? untracked.txt", status)

	_, ok := Adopt(ctx, in, stateA)
	require.False(t, ok, "A's disk is gone")
	kept, ok := Adopt(ctx, out, stateB)
	require.True(t, ok, "B restarted finds its restored checkout")
	require.Equal(t, out, kept)

	again, err := Restore(ctx, in, stateB, remote, c)
	require.NoError(t, err, "a retry makes it afresh")
	require.Equal(t, out, again)

	closed, err := CloseTo(ctx, out, "the session's change", remote)
	require.NoError(t, err)
	require.NotEmpty(t, closed.Commit)
	require.NoDirExists(t, out.Dir, "removed once its branch is in the remote")
	require.NoError(t, FetchBranch(ctx, repo, remote, in.Branch))
	d, err := Diff(ctx, in)
	require.NoError(t, err)
	require.Contains(t, d, "+two")
	require.Contains(t, d, "+u")
}

// A checkpoint given the paths the batch's file tools reported looks at
// those only (relative to the session's working directory): a file a tool
// created is in, one it deleted is out, and a change nobody reported is
// not looked at; an ignored one is left out, still without a full look.
// A fresh index of the checkpoints' own or no previous checkpoint mean a
// full look; no paths, no change. The ref moves past a packed one.
func TestCheckpointPathsLooksAtTheReportedFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state := newRepo(t), t.TempDir()
	in, err := Create(ctx, repo, state, "s3", "")
	require.NoError(t, err)
	write := func(name, body string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(in.Dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(in.Dir, name), []byte(body), 0o644))
	}
	files := func(c string) string {
		t.Helper()
		out, err := git(ctx, in.Dir, nil, "ls-tree", "-r", "--name-only", c)
		require.NoError(t, err)
		return out
	}
	write(".gitignore", "*.log\n")
	write("sub/a.txt", "a\n")
	write("early.txt", "before the first checkpoint\n")
	c1, err := CheckpointPaths(ctx, in, "", []string{"sub/a.txt"})
	require.NoError(t, err)
	require.Equal(t, ".gitignore\nearly.txt\nf.txt\nsub/a.txt", files(c1), "no previous checkpoint: a full look")

	in.Sub = "sub"
	write("sub/new.txt", "made by a tool\n")
	require.NoError(t, os.Remove(filepath.Join(in.Dir, "sub/a.txt")))
	write("unreported.txt", "made by nobody the session knows of\n")
	c2, err := CheckpointPaths(ctx, in, c1, []string{"new.txt", "a.txt"})
	require.NoError(t, err)
	require.Equal(t, ".gitignore\nearly.txt\nf.txt\nsub/new.txt", files(c2), "the new file in, the deleted one out, the unreported one not looked at")
	ref, _ := git(ctx, in.Dir, nil, "rev-parse", CheckpointRef(in.Name))
	require.Equal(t, c2, ref)

	same, err := CheckpointPaths(ctx, in, c2, []string{})
	require.NoError(t, err)
	require.Equal(t, c2, same, "no paths: nothing changed")

	_, err = git(ctx, in.Dir, nil, "pack-refs", "--all")
	require.NoError(t, err)
	write("sub/noise.log", "ignored\n")
	write("sub/new.txt", "changed\n")
	c3, err := CheckpointPaths(ctx, in, c2, []string{"noise.log", "new.txt"})
	require.NoError(t, err)
	require.Equal(t, ".gitignore\nearly.txt\nf.txt\nsub/new.txt", files(c3), "an ignored path left out, the unreported one still not looked at")
	ref, _ = git(ctx, in.Dir, nil, "rev-parse", CheckpointRef(in.Name))
	require.Equal(t, c3, ref, "the loose ref wins over the packed one")
	refs, _ := git(ctx, in.Dir, nil, "for-each-ref", "--format=%(objectname) %(refname)", CheckpointPrefix)
	require.Equal(t, c3+" "+CheckpointRef(in.Name), refs)

	gitDir, err := git(ctx, in.Dir, nil, "rev-parse", "--path-format=absolute", "--git-path", checkpointIndex)
	require.NoError(t, err)
	require.NoError(t, os.Remove(gitDir))
	write("late.txt", "unreported again\n")
	c4, err := CheckpointPaths(ctx, in, c3, []string{})
	require.NoError(t, err)
	require.Contains(t, files(c4), "late.txt", "a fresh index of the checkpoints' own: a full look")
	status, _ := git(ctx, in.Dir, nil, "status", "--porcelain")
	require.Equal(t, "?? .gitignore\n?? early.txt\n?? late.txt\n?? sub/\n?? unreported.txt", status, "the checkout's index is untouched")
}
