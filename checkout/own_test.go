package checkout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// allObjects is every object a repository can read, its alternates
// included, as git cat-file --batch-all-objects --batch prints them: what
// a command in a session's sandbox can enumerate.
func allObjects(t *testing.T, dir string) string {
	t.Helper()
	out, err := gitRaw(context.Background(), dir, nil, "cat-file", "--batch-all-objects", "--batch")
	require.NoError(t, err)
	return out
}

// Two sessions of one repository, each checkpointing and committing in
// its checkout: neither's objects nor refs are readable from the other's
// repository or from the person's while they run (before, every
// checkpoint of every session was an object of the person's repository,
// which each sandbox binds). The person's git gc --prune=now and git fsck
// stay clean meanwhile, and the sessions go on working after it: their
// base is kept by a ref of the person's own object. Each close brings its
// branch and checkpoint into the person's repository and takes the base
// ref away; discard removes them.
func TestSessionsKeepTheirObjectsToThemselves(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state := newRepo(t), t.TempDir()
	a, err := Create(ctx, repo, state, "own-a", "")
	require.NoError(t, err)
	b, err := Create(ctx, repo, state, "own-b", "")
	require.NoError(t, err)
	require.DirExists(t, filepath.Join(a.Dir, ".git"), "a repository of its own, not a worktree's .git file")

	secretA, secretB := "A_SECRET_"+randomHex(t), "B_SECRET_"+randomHex(t)
	writeFile(t, a.Dir, "a.txt", secretA+" checkpointed\n")
	writeFile(t, b.Dir, "b.txt", secretB+" checkpointed\n")
	ca, err := Checkpoint(ctx, a, "")
	require.NoError(t, err)
	cb, err := Checkpoint(ctx, b, "")
	require.NoError(t, err)
	writeFile(t, b.Dir, "b2.txt", secretB+" committed\n")
	cb2, err := Commit(ctx, b.Dir, "b's own commit")
	require.NoError(t, err)
	require.NotEmpty(t, cb2)

	for name, dir := range map[string]string{"a's repository": a.Dir, "the person's repository": repo} {
		require.NotContains(t, allObjects(t, dir), secretB, "%s holds none of b's objects", name)
		_, err := git(ctx, dir, nil, "cat-file", "-e", cb)
		require.Error(t, err, "b's checkpoint is no object of %s", name)
		_, err = git(ctx, dir, nil, "cat-file", "-e", cb2)
		require.Error(t, err, "b's commit is no object of %s", name)
	}
	require.NotContains(t, allObjects(t, b.Dir), secretA, "b's repository holds none of a's objects")
	require.Contains(t, allObjects(t, a.Dir), secretA, "a reads its own checkpoint")
	require.Contains(t, allObjects(t, a.Dir), "one\n", "and the person's objects, borrowed")
	refs, err := git(ctx, repo, nil, "for-each-ref", "--format=%(refname)")
	require.NoError(t, err)
	require.Equal(t, "refs/heads/main\n"+BaseRef(a.Name)+"\n"+BaseRef(b.Name), refs,
		"the person's repository holds nothing of a running session but the refs to its base")

	// The person moves on and cleans up: their base commit is reachable
	// only from the sessions' base refs.
	plainGit(t, repo, "commit", "-q", "--amend", "-m", "first, reworded")
	plainGit(t, repo, "reflog", "expire", "--expire=now", "--all")
	plainGit(t, repo, "gc", "-q", "--prune=now")
	plainGit(t, repo, "fsck", "--strict", "--no-dangling")
	for _, in := range []Info{a, b} {
		plainGit(t, in.Dir, "fsck", "--no-dangling")
		d, err := Diff(ctx, in)
		require.NoError(t, err, "diff against the base after the person's gc")
		require.Contains(t, d, "SECRET_")
	}
	writeFile(t, a.Dir, "later.txt", "after the gc\n")
	ca2, err := Checkpoint(ctx, a, ca)
	require.NoError(t, err)
	require.NotEqual(t, ca, ca2)

	closed, err := Close(ctx, a, "session a")
	require.NoError(t, err)
	require.NotEmpty(t, closed.Commit)
	require.NoDirExists(t, a.Dir)
	head, err := git(ctx, repo, nil, "rev-parse", "refs/heads/"+a.Branch)
	require.NoError(t, err)
	require.Equal(t, closed.Commit, head, "the close brings the branch into the person's repository")
	ref, err := git(ctx, repo, nil, "rev-parse", CheckpointRef(a.Name))
	require.NoError(t, err)
	require.Equal(t, ca2, ref, "and its last checkpoint, where it always was after a close")
	_, err = git(ctx, repo, nil, "rev-parse", "--verify", "--quiet", BaseRef(a.Name))
	require.Error(t, err, "the base ref goes at the close")
	files, err := git(ctx, repo, nil, "ls-tree", "-r", "--name-only", a.Branch)
	require.NoError(t, err)
	require.Equal(t, "a.txt\nf.txt\nlater.txt", files)
	require.NotContains(t, allObjects(t, repo), secretB, "b still runs: nothing of it in the person's repository")
	plainGit(t, repo, "fsck", "--strict", "--no-dangling")

	again, err := Close(ctx, a, "session a")
	require.NoError(t, err, "a retried close")
	require.Equal(t, closed.Commit, again.Commit)

	require.NoError(t, Discard(ctx, b))
	require.NoDirExists(t, b.Dir)
	refs, err = git(ctx, repo, nil, "for-each-ref", "--format=%(refname)")
	require.NoError(t, err)
	require.Equal(t, "refs/heads/"+a.Branch+"\nrefs/heads/main\n"+CheckpointRef(a.Name), refs, "discard leaves nothing of b")
	require.NotContains(t, allObjects(t, repo), secretB)
	require.NoError(t, Discard(ctx, a))
	plainGit(t, repo, "gc", "-q", "--prune=now")
	plainGit(t, repo, "fsck", "--strict", "--no-dangling")
}

// A session's checkout follows what of the person's repository decides
// its files: the ignore rules of .git/info/exclude (a checkpoint leaves
// those files out, as it did in a worktree), the line-ending settings and
// core.fileMode (the last value of a key given twice, as git reads it),
// the object format, and a branch longrun/<session> already there is
// taken up.
func TestOwnCheckoutFollowsThePersonsRepository(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state := newRepo(t), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".git", "info", "exclude"), []byte("build/\n"), 0o644))
	plainGit(t, repo, "config", "core.fileMode", "false")
	plainGit(t, repo, "config", "core.autocrlf", "input")
	plainGit(t, repo, "config", "core.eol", "crlf")
	plainGit(t, repo, "config", "--add", "core.eol", "lf") // the last one is git's
	plainGit(t, repo, "branch", "longrun/taken", "main")
	plainGit(t, repo, "commit", "-q", "--allow-empty", "-m", "the person's next commit")
	in, err := Create(ctx, repo, state, "taken", "")
	require.NoError(t, err)
	head, err := git(ctx, in.Dir, nil, "rev-parse", "HEAD")
	require.NoError(t, err)
	old, err := git(ctx, repo, nil, "rev-parse", "main^")
	require.NoError(t, err)
	require.Equal(t, old, head, "the branch there is taken up")

	// Packed (no loose ref file): still found, still taken up.
	plainGit(t, repo, "branch", "longrun/packed", "main^")
	plainGit(t, repo, "pack-refs", "--all")
	require.NoFileExists(t, filepath.Join(repo, ".git", "refs", "heads", "longrun", "packed"))
	packed, err := Create(ctx, repo, t.TempDir(), "packed", "")
	require.NoError(t, err)
	head, err = git(ctx, packed.Dir, nil, "rev-parse", "HEAD")
	require.NoError(t, err)
	require.Equal(t, old, head, "a packed branch is taken up too")
	for key, want := range map[string]string{"core.fileMode": "false", "core.autocrlf": "input", "core.eol": "lf"} {
		got, err := git(ctx, in.Dir, nil, "config", "--get", key)
		require.NoError(t, err)
		require.Equal(t, want, got, "%s copied from the person's repository", key)
	}
	_, err = git(ctx, in.Dir, nil, "config", "--get", "core.safecrlf")
	require.Error(t, err, "a key the person's repository does not set is not set")
	writeFile(t, in.Dir, "build/out.bin", "built\n")
	writeFile(t, in.Dir, "src.txt", "source\n")
	c, err := Checkpoint(ctx, in, "")
	require.NoError(t, err)
	files, err := git(ctx, in.Dir, nil, "ls-tree", "-r", "--name-only", c)
	require.NoError(t, err)
	require.Equal(t, "f.txt\nsrc.txt", files, "the person's info/exclude holds for the checkpoint")

	again, err := Create(ctx, repo, state, "taken", "")
	require.NoError(t, err, "a retried create")
	require.Equal(t, in, again)
	entries, err := os.ReadDir(filepath.Dir(in.Dir))
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing left beside the checkout")
}

// randomHex is 16 random hex digits: a mark no other test's file holds.
func randomHex(t *testing.T) string {
	t.Helper()
	b := make([]byte, 8)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}
