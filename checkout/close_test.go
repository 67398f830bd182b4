package checkout

import (
	"context"
	"os"
	"path/filepath"
	"testing"

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
