package checkout

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A workspace root a checkout cannot hold is found before a session
// asks (CheckRoot), and Create refuses such a working directory before
// it makes a branch or a worktree: a session there would otherwise see
// none of its files (issue 29: the demo's ignored workspace).
func TestCheckRootAndCreateRefuseWhatTheBaseDoesNotHold(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	mk := func(rel string) string {
		d := filepath.Join(repo, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(d, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(d, "x.txt"), []byte("x\n"), 0o644))
		return d
	}
	mk("src/pkg")
	require.NoError(t, os.WriteFile(filepath.Join(repo, ".gitignore"), []byte("/.state/\nbuild/\n"), 0o644))
	_, err := Commit(ctx, repo, "src and .gitignore")
	require.NoError(t, err)
	mk(".state/demo-workspace")
	mk("build")
	mk("scratch")
	staged := mk("staged")
	_, err = git(ctx, repo, nil, "add", "staged")
	require.NoError(t, err)
	empty := t.TempDir()
	_, err = git(ctx, empty, nil, "init", "-q")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(empty, "sub"), 0o755))
	outside := t.TempDir()

	cases := []struct {
		name, dir string
		want      error
		says      string
	}{
		{"repository top", repo, nil, ""},
		{"committed subdirectory", filepath.Join(repo, "src", "pkg"), nil, ""},
		{"outside git: a copy", outside, nil, ""},
		{"under an ignored directory", filepath.Join(repo, ".state", "demo-workspace"), ErrNotInBase, "is ignored by git"},
		{"ignored directory", filepath.Join(repo, "build"), ErrNotInBase, "is ignored by git"},
		{"untracked directory", filepath.Join(repo, "scratch"), ErrNotInBase, "is not committed"},
		{"added, not committed", staged, ErrNotInBase, "is not committed"},
		{"no commit yet", empty, ErrNoCommit, empty},
		{"no commit yet, a subdirectory", filepath.Join(empty, "sub"), ErrNoCommit, empty},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckRoot(ctx, c.dir)
			if c.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, c.want)
			require.Contains(t, err.Error(), c.says)
			if c.want == ErrNotInBase {
				require.Contains(t, err.Error(), c.dir, "the refusal names the directory")
			}
			state := t.TempDir()
			_, err = Create(ctx, c.dir, state, "s-"+Sanitize(c.name), "")
			require.ErrorIs(t, err, c.want)
			top, _, err := locate(ctx, c.dir)
			require.NoError(t, err)
			branches, err := git(ctx, top, nil, "branch", "--list", BranchPrefix+"*")
			require.NoError(t, err)
			require.Empty(t, branches, "a refused checkout leaves no branch")
			entries, err := os.ReadDir(filepath.Join(state, Dir))
			if err == nil {
				require.Empty(t, entries, "a refused checkout leaves no worktree")
			}
		})
	}
}
