package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSandboxNestedGitReadOnly: a nested repository's .git (a directory,
// or a .git file and the git directory it names, under the working
// directory) is as read-only to a command as the top one: its
// configuration, hooks and the .git itself cannot be changed, moved or
// removed by a command that may write everything else.
func TestSandboxNestedGitReadOnly(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	ws := testWorkspace(t, map[string]string{
		"src/main.go":     "package main\n",
		"vendor/lib/.git": "gitdir: ../../libgit\n",
		"vendor/lib/x.go": "package lib\n",
		"libgit/config":   "[core]\n",
	})
	for _, dir := range []string{ws.Root(), filepath.Join(ws.Root(), "a", "b")} {
		require.NoError(t, exec.Command("git", "init", "-q", dir).Run())
	}
	cfg := filepath.Join(ws.Root(), "a", "b", ".git", "config")
	before, err := os.ReadFile(cfg)
	require.NoError(t, err)
	for _, cmd := range []string{
		"git -C a/b config core.fsmonitor /bin/evil",
		"echo '[core] fsmonitor = /bin/evil' >> a/b/.git/config",
		"echo evil > a/b/.git/hooks/pre-commit",
		"mv a/b/.git a/b/moved",
		"rm -rf a/b/.git",
		"echo 'gitdir: /tmp/evil' > vendor/lib/.git",
		"echo '[core] fsmonitor = /bin/evil' >> libgit/config",
	} {
		res := runEnv(t, Env{Workspace: ws}, cmd)
		require.True(t, res.IsError, "%s: %s", cmd, res.Content)
	}
	after, err := os.ReadFile(cfg)
	require.NoError(t, err)
	require.Equal(t, string(before), string(after))
	require.NoFileExists(t, filepath.Join(ws.Root(), "a", "b", ".git", "hooks", "pre-commit"))
	got, err := os.ReadFile(filepath.Join(ws.Root(), "vendor", "lib", ".git"))
	require.NoError(t, err)
	require.Equal(t, "gitdir: ../../libgit\n", string(got))
	got, err = os.ReadFile(filepath.Join(ws.Root(), "libgit", "config"))
	require.NoError(t, err)
	require.Equal(t, "[core]\n", string(got))

	// The files beside them are the command's.
	res := runEnv(t, Env{Workspace: ws}, "echo ok >> vendor/lib/x.go && touch a/b/new")
	require.False(t, res.IsError, res.Content)
}

// TestNestedGitEntriesBounded: the walk finds nested .git entries of
// every kind below the top, breadth first, without walking into a .git
// directory or following a symlink, and stops at its bounds.
func TestNestedGitEntriesBounded(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	elsewhere := t.TempDir()
	mk := func(p string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, p), 0o755))
	}
	mk(".git/modules/x/.git") // the top's own, not walked into
	mk("a/.git/deeper/.git")  // inside a nested one: not walked into
	mk("b/c/d/.git")
	require.NoError(t, os.WriteFile(filepath.Join(root, "b", ".git"), []byte("gitdir: x\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(elsewhere, "e", ".git"), 0o755))
	require.NoError(t, os.Symlink(elsewhere, filepath.Join(root, "link")))
	require.Equal(t, []string{
		filepath.Join(root, "a", ".git"), filepath.Join(root, "b", ".git"), filepath.Join(root, "b", "c", "d", ".git"),
	}, nestedGitEntries(root))

	// Past nestedGitMaxFound, the rest is left.
	many := t.TempDir()
	for i := range nestedGitMaxFound + 10 {
		require.NoError(t, os.MkdirAll(filepath.Join(many, fmt.Sprintf("r%03d", i), ".git"), 0o755))
	}
	require.Len(t, nestedGitEntries(many), nestedGitMaxFound)

	// Past nestedGitMaxEntries entries looked at, the deeper ones are left.
	wide := t.TempDir()
	for i := range nestedGitMaxEntries + 1 {
		require.NoError(t, os.WriteFile(filepath.Join(wide, fmt.Sprintf("f%05d", i)), nil, 0o644))
	}
	require.NoError(t, os.MkdirAll(filepath.Join(wide, "zz", "deep", ".git"), 0o755))
	require.Empty(t, nestedGitEntries(wide))
}

// TestNestedGitConfigNeedsAPerson: write, edit and apply_patch treat a
// nested repository's .git/config exactly as the top one's: refused
// without a person, whatever the depth.
func TestNestedGitConfigNeedsAPerson(t *testing.T) {
	t.Parallel()
	for name, call := range map[string]struct {
		tool Tool
		args any
	}{
		"write": {NewWrite(), WriteParams{Path: "a/b/.git/config", Content: "[core]\n\tfsmonitor = sh\n"}},
		"edit":  {NewEdit(), EditParams{Path: "a/b/.git/config", OldString: "[core]", NewString: "[core]\n\tfsmonitor = sh"}},
		"patch": {NewApplyPatch(), PatchParams{Patch: "*** Begin Patch\n*** Update File: a/b/.git/config\n-[core]\n+[core]\n+\tfsmonitor = sh\n*** End Patch"}},
		"new":   {NewWrite(), WriteParams{Path: "vendor/x/.git/hooks/pre-commit", Content: "#!/bin/sh\n"}},
		"file":  {NewWrite(), WriteParams{Path: "vendor/y/.git", Content: "gitdir: /tmp/evil\n"}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ws := testWorkspace(t, map[string]string{"a/b/.git/config": "[core]\n", "src/main.go": "package main\n"})
			before := snapshotTree(t, ws.Root())
			res := runTool(t, context.Background(), call.tool, Env{Workspace: ws}, call.args)
			require.True(t, res.IsError, res.Content)
			require.Contains(t, res.Content, "control file")
			require.Equal(t, before, snapshotTree(t, ws.Root()))
		})
	}
}
