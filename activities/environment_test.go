package activities

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

// The environment block's facts come from the files: a branch, a detached
// HEAD, a worktree's .git file, a working directory below the checkout's
// root, and no checkout at all.
func TestEnvironment(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, path, content string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	}
	tests := []struct {
		name         string
		setup        func(t *testing.T, root string)
		sub          string
		branch, head string
		git          bool
	}{
		{name: "branch", setup: func(t *testing.T, root string) {
			write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/feature/x\n")
		}, git: true, branch: "feature/x"},
		{name: "detached", setup: func(t *testing.T, root string) {
			write(t, filepath.Join(root, ".git/HEAD"), "0123456789abcdef0123456789abcdef01234567\n")
		}, git: true, head: "0123456"},
		{name: "worktree .git file", setup: func(t *testing.T, root string) {
			write(t, filepath.Join(root, "../gitdirs/wt/HEAD"), "ref: refs/heads/wt-branch\n")
			write(t, filepath.Join(root, ".git"), "gitdir: ../gitdirs/wt\n")
		}, git: true, branch: "wt-branch"},
		{name: "working directory below the root", setup: func(t *testing.T, root string) {
			write(t, filepath.Join(root, ".git/HEAD"), "ref: refs/heads/main\n")
			require.NoError(t, os.MkdirAll(filepath.Join(root, "sub/dir"), 0o755))
		}, sub: "sub/dir", git: true, branch: "main"},
		{name: "HEAD content that is no ref is not shown", setup: func(t *testing.T, root string) {
			write(t, filepath.Join(root, ".git/HEAD"), "secret text\n")
		}, git: true},
		{name: "no checkout", setup: func(*testing.T, string) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			root := filepath.Join(t.TempDir(), "repo")
			require.NoError(t, os.MkdirAll(root, 0o755))
			tt.setup(t, root)
			ws, err := tools.NewWorkspace(root)
			require.NoError(t, err)
			if tt.sub != "" {
				ws, err = ws.Sub(tt.sub)
				require.NoError(t, err)
			}
			env := environment(ws)
			require.Equal(t, ws.Root(), env.WorkDir)
			require.Equal(t, tt.branch, env.Branch)
			require.Equal(t, tt.head, env.Head)
			if tt.git {
				require.Equal(t, ws.Root(), filepath.Join(env.GitRoot, tt.sub))
			} else {
				require.Empty(t, env.GitRoot)
			}
			require.Contains(t, env.OS, "/")
			require.Contains(t, env.Shell, "bash")
		})
	}
}
