package checkout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStatsCountTheCheckoutAgainstItsBase: files, lines added and
// deleted, untracked files included, control files listed apart; the
// checkout's own index is left as it was.
func TestStatsCountTheCheckoutAgainstItsBase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state := newRepo(t), t.TempDir()
	in, err := Create(ctx, repo, state, "stats", "")
	require.NoError(t, err)

	st, err := Stats(ctx, in.Dir, in.Base)
	require.NoError(t, err)
	require.Equal(t, Stat{}, st, "nothing changed yet")

	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "f.txt"), []byte("two\nthree\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "new.txt"), []byte("a\nb\nc\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(in.Dir, ".longrun"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, ".longrun", "permissions.json"), []byte("{}\n"), 0o644))
	st, err = Stats(ctx, in.Dir, in.Base)
	require.NoError(t, err)
	require.Equal(t, Stat{Files: 2, Insertions: 5, Deletions: 1, Paths: []string{"f.txt", "new.txt"},
		Control: []string{".longrun/permissions.json"}}, st)
	require.Equal(t, "2 files changed, +5 -1 (control files left out: .longrun/permissions.json)", st.String())
	staged, err := git(ctx, in.Dir, nil, "diff", "--cached", "--name-only")
	require.NoError(t, err)
	require.Empty(t, staged, "the checkout's own index is untouched")
}

// TestCloseLeavesControlFilesOut: a control file an approved command
// created in the checkout (.longrun/permissions.json, AGENTS.md) is not
// committed on the branch, and Close says so; the rest is.
func TestCloseLeavesControlFilesOut(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state := newRepo(t), t.TempDir()
	in, err := Create(ctx, repo, state, "control", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "f.txt"), []byte("two\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(in.Dir, ".longrun"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, ".longrun", "permissions.json"), []byte(`{"rules":[{"tool":"*","action":"allow"}]}`), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(in.Dir, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "sub", "AGENTS.md"), []byte("obey\n"), 0o644))

	c, err := Close(ctx, in, "change f")
	require.NoError(t, err)
	require.NotEmpty(t, c.Commit)
	require.ElementsMatch(t, []string{".longrun/permissions.json", "sub/AGENTS.md"}, c.LeftOut)
	require.NotNil(t, c.Changes)
	require.Equal(t, 1, c.Changes.Files)
	files, err := git(ctx, repo, nil, "diff", "--name-only", in.Base, in.Branch)
	require.NoError(t, err)
	require.Equal(t, "f.txt", files, "only the ordinary file is on the branch")
	msg, err := git(ctx, repo, nil, "log", "-1", "--format=%B", in.Branch)
	require.NoError(t, err)
	require.Contains(t, msg, "left out of this commit: .longrun/permissions.json")

	// Closed again (an activity retry after the checkout was removed):
	// nothing is made, and the branch is reported as it is.
	require.NoDirExists(t, in.Dir)
	again, err := Close(ctx, in, "change f")
	require.NoError(t, err)
	require.Equal(t, c.Commit, again.Commit, "the retry names the branch's head")
	require.NotNil(t, again.Changes)
	require.Equal(t, c.Changes.Files, again.Changes.Files)
	require.Empty(t, again.LeftOut, "gone with the checkout")

	// The session committed its change itself (git commit in a command):
	// nothing is left to commit at the end, and the result still names it.
	in3, err := Create(ctx, repo, state, "self-committed", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in3.Dir, "f.txt"), []byte("three\n"), 0o644))
	own, err := Commit(ctx, in3.Dir, "the session's own commit")
	require.NoError(t, err)
	c3, err := Close(ctx, in3, "done")
	require.NoError(t, err)
	require.Equal(t, own, c3.Commit)
	require.Equal(t, 1, c3.Changes.Files)

	// Only control files changed: no commit, and they are still named.
	in2, err := Create(ctx, repo, state, "control-only", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in2.Dir, "AGENTS.md"), []byte("obey\n"), 0o644))
	c2, err := Close(ctx, in2, "nothing")
	require.NoError(t, err)
	require.Empty(t, c2.Commit)
	require.Equal(t, []string{"AGENTS.md"}, c2.LeftOut)
}

// TestPatchPathsFindControlFiles: the files a diff touches, renames
// included, and which of them are control files.
func TestPatchPathsFindControlFiles(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state := newRepo(t), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(repo, "AGENTS.md"), []byte("a long enough instruction file\nwith lines\nso a rename is found\n"), 0o644))
	_, err := Commit(ctx, repo, "agents")
	require.NoError(t, err)
	in, err := Create(ctx, repo, state, "patch", "")
	require.NoError(t, err)
	require.NoError(t, os.Rename(filepath.Join(in.Dir, "AGENTS.md"), filepath.Join(in.Dir, "notes.md")))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "f.txt"), []byte("two\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(in.Dir, ".longrun"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, ".longrun", "mcp.json"), []byte("{}\n"), 0o644))
	d, err := Diff(ctx, in)
	require.NoError(t, err)
	paths, err := PatchPaths(ctx, d)
	require.NoError(t, err)
	require.Contains(t, paths, "f.txt")
	require.Contains(t, paths, "notes.md")
	require.ElementsMatch(t, []string{".longrun/mcp.json", "AGENTS.md"}, ControlPaths(paths), "a rename away from AGENTS.md touches it")
}

func TestParseSizeAndSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"0": 0, "4096": 4096, "20G": 20 << 30, "500M": 500 << 20, "1.5K": 1536, "2GiB": 2 << 30, "3gb": 3 << 30, "1T": 1 << 40} {
		got, err := ParseSize(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "lots", "-1G", "G"} {
		_, err := ParseSize(bad)
		require.Error(t, err, bad)
	}
	require.Equal(t, "512 B", Size(512))
	require.Equal(t, "1.5 GiB", Size(3<<29))
}

// TestAnUntouchedCheckoutClosesWithoutFetching: a checkout the session
// left as it was opened closes by the short way (closeUntouched): the
// branch at the base in the person's repository, BaseRef gone, the
// checkout removed, no commit, nothing changed. Every way a session can
// leave something behind takes the full close, and its result says what
// the full close always said.
func TestAnUntouchedCheckoutClosesWithoutFetching(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state := newRepo(t), t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(repo, "run.sh"), []byte("echo hi\n"), 0o644))
	base, err := Commit(ctx, repo, "second")
	require.NoError(t, err)

	in, err := Create(ctx, repo, state, "untouched", "")
	require.NoError(t, err)
	require.Equal(t, base, in.Base)
	c, ok, err := closeUntouched(ctx, in)
	require.NoError(t, err)
	require.True(t, ok, "a checkout nothing touched takes the short way")
	require.Equal(t, Closed{Changes: &Stat{}}, c)
	head, err := git(ctx, repo, nil, "rev-parse", "refs/heads/"+in.Branch)
	require.NoError(t, err)
	require.Equal(t, in.Base, head, "the branch is in the person's repository, at the base")
	_, err = git(ctx, repo, nil, "rev-parse", "--verify", "--quiet", BaseRef(in.Name))
	require.Error(t, err, "BaseRef is gone")
	require.NoDirExists(t, in.Dir)
	again, err := Close(ctx, in, "again")
	require.NoError(t, err, "a retry after the removal")
	require.Empty(t, again.Commit)

	// Each of these leaves something the branch must hold (or says the
	// short way cannot know): the full close runs and commits it.
	touched := map[string]func(t *testing.T, in Info){
		"changed file":  func(t *testing.T, in Info) { writeFile(t, in.Dir, "f.txt", "two\n") },
		"new file deep": func(t *testing.T, in Info) { writeFile(t, in.Dir, "a/b/new.txt", "new\n") },
		"deleted file":  func(t *testing.T, in Info) { require.NoError(t, os.Remove(filepath.Join(in.Dir, "f.txt"))) },
		"executable bit": func(t *testing.T, in Info) {
			require.NoError(t, os.Chmod(filepath.Join(in.Dir, "run.sh"), 0o755))
		},
		"same size, same second": func(t *testing.T, in Info) { writeFile(t, in.Dir, "f.txt", "two\n"[:3]+"X") },
		"committed by the session": func(t *testing.T, in Info) {
			writeFile(t, in.Dir, "f.txt", "three\n")
			_, err := Commit(ctx, in.Dir, "the session's own")
			require.NoError(t, err)
		},
		"checkpoint, then undone": func(t *testing.T, in Info) {
			writeFile(t, in.Dir, "tmp.txt", "x\n")
			_, err := Checkpoint(ctx, in, "")
			require.NoError(t, err)
			require.NoError(t, os.Remove(filepath.Join(in.Dir, "tmp.txt")))
		},
	}
	names := make([]string, 0, len(touched))
	for name := range touched {
		names = append(names, name)
	}
	slices.Sort(names)
	for i, name := range names {
		t.Run(name, func(t *testing.T) {
			in, err := Create(ctx, repo, state, fmt.Sprintf("touched-%d", i), "")
			require.NoError(t, err)
			touched[name](t, in)
			_, ok, err := closeUntouched(ctx, in)
			require.NoError(t, err)
			require.False(t, ok, "touched: the full close")
			require.DirExists(t, in.Dir, "nothing done")
			c, err := Close(ctx, in, "close")
			require.NoError(t, err)
			head, err := git(ctx, repo, nil, "rev-parse", "refs/heads/"+in.Branch)
			require.NoError(t, err)
			if name == "checkpoint, then undone" {
				require.Equal(t, in.Base, head, "the branch holds nothing")
				_, err := git(ctx, repo, nil, "rev-parse", "--verify", "--quiet", CheckpointRef(in.Name))
				require.NoError(t, err, "the checkpoint was brought into the person's repository")
				return
			}
			require.NotEqual(t, in.Base, head, "the branch holds the change")
			require.NotEmpty(t, c.Commit)
			require.Equal(t, 1, c.Changes.Files)
		})
	}

	// A base with a gitlink: status may not look inside a submodule (the
	// worker's git never goes into one), so the full close reports it.
	withLink := newRepo(t)
	plainGit(t, withLink, "update-index", "--add", "--cacheinfo", "160000,"+base+",sub")
	plainGit(t, withLink, "commit", "-q", "-m", "a submodule")
	linked, err := Create(ctx, withLink, state, "with-gitlink", "")
	require.NoError(t, err)
	require.False(t, isUntouched(ctx, linked))

	// On another branch than the session's, at the base: not the
	// session's branch, so not the short way.
	other, err := Create(ctx, repo, state, "other-branch", "")
	require.NoError(t, err)
	_, err = git(ctx, other.Dir, nil, "checkout", "-q", "-b", "elsewhere")
	require.NoError(t, err)
	_, ok, err = closeUntouched(ctx, other)
	require.NoError(t, err)
	require.False(t, ok)
}

// TestUntouchedReadsStatus: what git status --porcelain=v2 --branch -z
// says, read as the short close needs it.
func TestUntouchedReadsStatus(t *testing.T) {
	t.Parallel()
	in := Info{Base: "abc", Branch: "longrun/s"}
	head := "# branch.oid abc\x00# branch.head longrun/s\x00"
	require.True(t, untouched(head, in))
	require.True(t, untouched(head+"# branch.upstream x\x00", in))
	require.False(t, untouched(head+"? new.txt\x00", in))
	require.False(t, untouched(head+"1 .M N... 100644 100644 100644 a b f.txt\x00", in))
	require.False(t, untouched("# branch.oid abd\x00# branch.head longrun/s\x00", in))
	require.False(t, untouched("# branch.oid abc\x00# branch.head (detached)\x00", in))
	require.False(t, untouched("# branch.oid (initial)\x00# branch.head longrun/s\x00", in))
	require.False(t, untouched("", in), "no answer is no proof")
}

// TestAnUntouchedCopyClosesAsBefore: a copy (outside git) the session
// left as it was: the close's one git status answers no commit and
// nothing changed, and the copy stays (its branch lives there); a copy
// with a change still gets its commit.
func TestAnUntouchedCopyClosesAsBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, state := t.TempDir(), t.TempDir()
	writeFile(t, src, "notes.txt", "one\n")
	in, err := CreateCopy(ctx, src, state, "copy-untouched", DefaultCopyLimit)
	require.NoError(t, err)
	require.True(t, isUntouched(ctx, in))
	c, err := Close(ctx, in, "close")
	require.NoError(t, err)
	require.Equal(t, Closed{Changes: &Stat{}}, c)
	require.DirExists(t, in.Dir, "a copy stays until discard")

	writeFile(t, in.Dir, "sub/new.txt", "new\n")
	require.False(t, isUntouched(ctx, in))
	c, err = Close(ctx, in, "close")
	require.NoError(t, err)
	require.NotEmpty(t, c.Commit)
	require.Equal(t, 1, c.Changes.Files)
}

// TestMayHaveRefSaysNoOnlyWhenItKnows: a no only when no file of the
// repository could hold the ref; anything it cannot read is a yes.
func TestMayHaveRefSaysNoOnlyWhenItKnows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const ref = "refs/heads/longrun/s"
	require.False(t, mayHaveRef(dir, ref), "nothing there")
	writeFile(t, dir, "packed-refs", "# pack-refs with: peeled fully-peeled sorted\nabc refs/heads/main\n")
	require.False(t, mayHaveRef(dir, ref), "packed, but not that one")
	writeFile(t, dir, "packed-refs", "abc refs/heads/longrun/s\n")
	require.True(t, mayHaveRef(dir, ref), "packed")
	require.NoError(t, os.Remove(filepath.Join(dir, "packed-refs")))
	writeFile(t, dir, "refs/heads/longrun/s", "abc\n")
	require.True(t, mayHaveRef(dir, ref), "loose")
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "refs")))
	writeFile(t, dir, "refs/heads/longrun", "a file where a directory would be\n")
	require.True(t, mayHaveRef(dir, ref), "in the way: git decides")
	require.NoError(t, os.RemoveAll(filepath.Join(dir, "refs")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "reftable"), 0o755))
	require.True(t, mayHaveRef(dir, ref), "a ref store it does not read")
	require.NoError(t, os.Remove(filepath.Join(dir, "reftable")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "packed-refs"), make([]byte, maxPackedRefs+1), 0o644))
	require.True(t, mayHaveRef(dir, ref), "packed refs too large to read here: git decides")
	require.True(t, mayHaveRef("", ref))
	require.True(t, mayHaveRef("relative/.git", ref))
}

// A hostile repository's packed-refs or config that is not a regular file
// (a FIFO that never answers, a link to a device that never ends) is not
// read here: mayHaveRef says yes and settingsKey keeps nothing, at once,
// and git, run with gitsafe's limits, decides.
func TestRefAndSettingsReadsRefuseWhatIsNotAFile(t *testing.T) {
	t.Parallel()
	const ref = "refs/heads/longrun/s"
	for name, plant := range map[string]func(path string) error{
		"fifo":        func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"to a device": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			require.NoError(t, plant(filepath.Join(dir, "packed-refs")))
			require.NoError(t, plant(filepath.Join(dir, "config")))
			old := time.Now().Add(-time.Minute)
			_ = os.Chtimes(filepath.Join(dir, "config"), old, old)
			done := make(chan [2]bool, 1)
			go func() {
				_, keep := settingsKey(dir)
				done <- [2]bool{mayHaveRef(dir, ref), keep}
			}()
			select {
			case got := <-done:
				require.True(t, got[0], "mayHaveRef: a packed-refs that is not a file is a doubt")
				require.False(t, got[1], "settingsKey: a config that is not a file is not kept")
			case <-time.After(5 * time.Second):
				t.Fatal("reading a packed-refs or config that is not a regular file did not return")
			}
		})
	}
}
