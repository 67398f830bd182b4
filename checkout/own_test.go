package checkout

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

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

// TestInitFromTheTemplateIsGitInit: a checkout's repository copied from
// the state directory's template holds what git init makes (sample
// hooks aside), with HEAD on the session's branch, in either object
// format; a branch name git would not take as it is goes to git init.
func TestInitFromTheTemplateIsGitInit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, format := range []string{"sha1", "sha256"} {
		t.Run(format, func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			want := filepath.Join(t.TempDir(), "want")
			require.NoError(t, os.MkdirAll(want, 0o700))
			_, err := git(ctx, want, nil, "init", "--quiet", "--object-format="+format, "--initial-branch=longrun/s", want)
			require.NoError(t, err)
			require.NoError(t, os.RemoveAll(filepath.Join(want, ".git", "hooks")))
			require.NoError(t, os.Mkdir(filepath.Join(want, ".git", "hooks"), 0o755))
			for i, name := range []string{"first", "second"} { // the first makes the template, the second copies it
				dir := filepath.Join(t.TempDir(), name)
				require.NoError(t, initOwn(ctx, state, dir, "longrun/s", format))
				require.DirExists(t, filepath.Join(state, "git-init", format, ".git"), "attempt %d", i)
				require.Equal(t, gitDirFiles(t, want), gitDirFiles(t, dir), "%s: what git init makes", name)
				head, err := git(ctx, dir, nil, "symbolic-ref", "HEAD")
				require.NoError(t, err)
				require.Equal(t, "refs/heads/longrun/s", head)
				got, err := git(ctx, dir, nil, "rev-parse", "--show-object-format")
				require.NoError(t, err)
				require.Equal(t, format, got)
			}
		})
	}
	// A template that lost a part is made again.
	state := t.TempDir()
	require.NoError(t, initOwn(ctx, state, filepath.Join(t.TempDir(), "a"), "longrun/s", "sha1"))
	require.NoError(t, os.Remove(filepath.Join(state, "git-init", "sha1", ".git", "config")))
	again := filepath.Join(t.TempDir(), "b")
	require.NoError(t, initOwn(ctx, state, again, "longrun/s", "sha1"))
	require.FileExists(t, filepath.Join(again, ".git", "config"))
	require.FileExists(t, filepath.Join(state, "git-init", "sha1", ".git", "config"))

	require.False(t, plainRefName("longrun/x.lock"))
	require.False(t, plainRefName("longrun/.x"))
	require.False(t, plainRefName("longrun/a b"))
	require.True(t, plainRefName(Branch("s-1.2_x")))
	dir := filepath.Join(t.TempDir(), "bad")
	require.Error(t, initOwn(ctx, t.TempDir(), dir, "longrun/a b", "sha1"), "git init, which refuses the name")
}

// gitDirFiles are the files and directories under dir/.git, with the
// files' contents.
func gitDirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join(dir, ".git")
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		require.NoError(t, err)
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			out[rel+"/"] = ""
			return nil
		}
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		out[rel] = string(b)
		return nil
	}))
	return out
}

// TestPersonSettingsFollowTheConfiguration: the settings a checkout
// copies are read again when the person's configuration changes (same
// size, another time), and always when it includes another file, whose
// change the configuration's own file does not show.
func TestPersonSettingsFollowTheConfiguration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	cfg := filepath.Join(repo, ".git", "config")
	common := filepath.Join(repo, ".git")
	value := func(key string) string {
		for _, kv := range personSettings(ctx, repo, common) {
			if kv[0] == key {
				return kv[1]
			}
		}
		return ""
	}
	set := func(value string, age time.Duration) {
		plainGit(t, repo, "config", "core.autocrlf", value)
		at := time.Now().Add(-age)
		require.NoError(t, os.Chtimes(cfg, at, at))
	}
	set("input", 10*time.Second)
	require.Equal(t, "input", value("core.autocrlf"))
	settingsCache.Lock()
	_, kept := settingsCache.m[common]
	settingsCache.Unlock()
	require.True(t, kept, "git's answer is kept for the next session")
	require.Equal(t, "input", value("core.autocrlf"))
	set("false", 5*time.Second) // as long as "input"
	require.Equal(t, "false", value("core.autocrlf"), "a changed file is read again")
	set("true", 0)
	require.Equal(t, "true", value("core.autocrlf"), "just written: read again")

	other := filepath.Join(t.TempDir(), "more.config")
	require.NoError(t, os.WriteFile(other, []byte("[core]\n\teol = lf\n"), 0o644))
	plainGit(t, repo, "config", "--unset", "core.autocrlf")
	plainGit(t, repo, "config", "include.path", other)
	at := time.Now().Add(-time.Minute)
	require.NoError(t, os.Chtimes(cfg, at, at))
	require.Equal(t, "lf", value("core.eol"))
	require.NoError(t, os.WriteFile(other, []byte("[core]\n\teol = crlf\n"), 0o644))
	require.Equal(t, "crlf", value("core.eol"), "an included file's change is seen")
}
