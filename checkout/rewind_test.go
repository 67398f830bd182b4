package checkout

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A checkpoint of an earlier turn, on no ref any more, is what a rewind
// puts back (files added later removed, ignored ones kept, the branch and
// its index untouched) and what a fork's new checkout fetches from the
// original's repository by id.
func TestResetToAnEarlierCheckpointAndForkFromIt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state, in := origCheckout(t)
	write(t, in.Dir, ".gitignore", "*.log\n")
	write(t, in.Dir, "f.txt", "two\n")
	c2, err := Checkpoint(ctx, in, "")
	require.NoError(t, err)
	write(t, in.Dir, "f.txt", "five\n")
	write(t, in.Dir, "later.txt", "later\n")
	write(t, in.Dir, "keep.log", "ignored\n")
	c5, err := Checkpoint(ctx, in, c2)
	require.NoError(t, err)
	require.NotEqual(t, c2, c5)
	statusRef, _ := git(ctx, in.Dir, nil, "rev-parse", CheckpointRef(in.Name))
	require.Equal(t, c5, statusRef, "turn 2's checkpoint is on no ref now")

	// A fork: a new checkout at the base, then turn 2's files.
	fork, err := Create(ctx, repo, state, "fork", "")
	require.NoError(t, err)
	require.NoError(t, FetchCommit(ctx, fork.Dir, c2, filepath.Join(state, "gone"), in.Dir))
	require.NoError(t, ResetTo(ctx, fork.Dir, c2))
	require.Equal(t, "two\n", readString(t, fork.Dir, "f.txt"))
	require.NoFileExists(t, filepath.Join(fork.Dir, "later.txt"))
	head, _ := git(ctx, fork.Dir, nil, "rev-parse", "HEAD")
	require.Equal(t, fork.Base, head, "the fork's branch starts at the base")
	require.ErrorIs(t, FetchCommit(ctx, fork.Dir, "0123456789abcdef0123456789abcdef01234567", in.Dir), ErrCheckpointGone)

	// A rewind of the original to turn 2.
	require.NoError(t, ResetTo(ctx, in.Dir, c2))
	require.Equal(t, "two\n", readString(t, in.Dir, "f.txt"))
	require.NoFileExists(t, filepath.Join(in.Dir, "later.txt"))
	require.Equal(t, "ignored\n", readString(t, in.Dir, "keep.log"), "ignored files stay, as checkpoints leave them")
	head, _ = git(ctx, in.Dir, nil, "rev-parse", "HEAD")
	require.Equal(t, in.Base, head, "the branch did not move")
	staged, _ := git(ctx, in.Dir, nil, "diff", "--cached", "--name-only")
	require.Empty(t, staged, "the index is the branch's")
	again, err := Checkpoint(ctx, in, c2)
	require.NoError(t, err)
	require.Equal(t, c2, again, "the files are turn 2's exactly")

	// Back to the base.
	require.NoError(t, ResetTo(ctx, in.Dir, ""))
	require.Equal(t, "one\n", readString(t, in.Dir, "f.txt"))
	require.NoFileExists(t, filepath.Join(in.Dir, ".gitignore"))
}

// origCheckout is a session's checkout "orig" of a new repository, with
// the repository and the state directory.
func origCheckout(t *testing.T) (repo, state string, in Info) {
	t.Helper()
	repo, state = newRepo(t), t.TempDir()
	in, err := Create(context.Background(), repo, state, "orig", "")
	require.NoError(t, err)
	return repo, state, in
}

// write writes body to name in dir.
func write(t *testing.T, dir, name, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
}

func readString(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	require.NoError(t, err)
	return string(b)
}

// The close keeps every turn's checkpoint reachable in the person's
// repository (KeepTurns, brought with the branch), so a fork of an
// earlier turn of a closed session finds its files there even after a
// gc; turns the checkout does not have are left out, and a discard
// drops the ref with the branch.
func TestCloseKeepsTheTurnsCheckpointsForAFork(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state, in := origCheckout(t)
	write(t, in.Dir, "f.txt", "two\n")
	c2, err := Checkpoint(ctx, in, "")
	require.NoError(t, err)
	write(t, in.Dir, "f.txt", "three\n")
	c3, err := Checkpoint(ctx, in, c2)
	require.NoError(t, err)
	write(t, in.Dir, "f.txt", "five\n")
	c5, err := Checkpoint(ctx, in, c3)
	require.NoError(t, err)

	missing := "0123456789abcdef0123456789abcdef01234567"
	kept, err := KeepTurns(ctx, in.Dir, in.Name, []string{c2, "not an id; rm -rf", c3, c2, missing, c5})
	require.NoError(t, err)
	require.Equal(t, 3, kept)
	parents, err := git(ctx, in.Dir, nil, "rev-list", "--parents", "-n", "1", TurnsRef(in.Name))
	require.NoError(t, err)
	require.Equal(t, []string{c2, c3, c5}, strings.Fields(parents)[1:], "each turn once, in order, the missing one left out")

	_, err = Close(ctx, in, "done")
	require.NoError(t, err)
	require.NoDirExists(t, in.Dir)
	_, err = git(ctx, repo, nil, "gc", "--quiet", "--prune=now")
	require.NoError(t, err)
	fork, err := Create(ctx, repo, state, "fork", "")
	require.NoError(t, err)
	require.NoError(t, FetchCommit(ctx, fork.Dir, c3, in.Dir, repo), "turn 3's checkpoint is in the person's repository after the close")
	require.NoError(t, ResetTo(ctx, fork.Dir, c3))
	require.Equal(t, "three\n", readString(t, fork.Dir, "f.txt"))

	require.NoError(t, Discard(ctx, in))
	_, err = git(ctx, repo, nil, "rev-parse", "--verify", "--quiet", TurnsRef(in.Name))
	require.Error(t, err, "a discard drops the turns' checkpoints with the branch")

	none, err := KeepTurns(ctx, fork.Dir, fork.Name, []string{missing, ""})
	require.NoError(t, err)
	require.Zero(t, none)
	_, err = git(ctx, fork.Dir, nil, "rev-parse", "--verify", "--quiet", TurnsRef(fork.Name))
	require.Error(t, err, "no ref without a turn to keep")
}
