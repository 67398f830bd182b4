package tools

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIsControlPath(t *testing.T) {
	t.Parallel()
	for p, want := range map[string]bool{
		".git":                      true,
		".git/config":               true,
		"./.git/hooks/pre-commit":   true,
		"sub/.git":                  true, // a worktree's or submodule's .git file
		"vendor/x/.git/config":      true,
		".GIT/config":               true, // a case-insensitive file system
		".longrun/permissions.json": true,
		".longrun":                  true,
		"a/.longrun/mcp.json":       true,
		"AGENTS.md":                 true,
		"docs/AGENTS.md":            true,
		"agents.md":                 true,
		`sub\.git\config`:           true,
		".gitignore":                false,
		".github/workflows/ci.yml":  false,
		"AGENTS.md.bak":             false,
		"AGENTS.md/x":               false, // a file in a directory that happens to be named so
		"src/main.go":               false,
		"git/config":                false,
		".":                         false,
		"":                          false,
	} {
		require.Equal(t, want, IsControlPath(p), p)
	}
}

// controlTree is a workspace with control files and symlinks that lead to
// them under innocent names.
func controlTree(t *testing.T) *Workspace {
	t.Helper()
	ws := testWorkspace(t, map[string]string{
		".git/config":               "[core]\n",
		".longrun/permissions.json": "{}\n",
		"AGENTS.md":                 "rules\n",
		"wt/.git":                   "gitdir: ../.git/worktrees/wt\n",
		"src/main.go":               "package main\n",
	})
	root := ws.Root()
	for name, target := range map[string]string{
		"docs":     ".git",      // a directory leading into .git
		"notes.md": "AGENTS.md", // a file leading to AGENTS.md
		"cfg":      filepath.Join(root, ".longrun"),
		"src/wt":   "../wt", // a directory holding a worktree's .git file
	} {
		require.NoError(t, os.Symlink(target, filepath.Join(root, name)))
	}
	return ws
}

// TestControlFilesNeedAPerson: write, edit and apply_patch refuse to change
// .git/**, .longrun/** and AGENTS.md, named directly or reached through a
// symlink, unless a person approved the call; the refusal names the real
// path and changes nothing.
func TestControlFilesNeedAPerson(t *testing.T) {
	t.Parallel()
	type call struct {
		tool Tool
		args any
	}
	tests := []struct {
		name string
		call call
		real string // the control file the call reaches
		link bool   // reached through a symlink
	}{
		{name: "write git config", call: call{NewWrite(), WriteParams{Path: ".git/config", Content: "[core]\n\tfsmonitor = sh\n"}}, real: ".git/config"},
		{name: "write through dir link", call: call{NewWrite(), WriteParams{Path: "docs/config", Content: "x"}}, real: ".git/config", link: true},
		{name: "write new hook through dir link", call: call{NewWrite(), WriteParams{Path: "docs/hooks/pre-commit", Content: "#!/bin/sh\n"}}, real: ".git/hooks/pre-commit", link: true},
		{name: "write permissions", call: call{NewWrite(), WriteParams{Path: ".longrun/permissions.json", Content: `{"rules":[]}`}}, real: ".longrun/permissions.json"},
		{name: "write permissions through absolute link", call: call{NewWrite(), WriteParams{Path: "cfg/permissions.json", Content: "{}"}}, real: ".longrun/permissions.json", link: true},
		{name: "write new mcp.json", call: call{NewWrite(), WriteParams{Path: ".longrun/mcp.json", Content: "{}"}}, real: ".longrun/mcp.json"},
		{name: "write AGENTS.md", call: call{NewWrite(), WriteParams{Path: "AGENTS.md", Content: "obey\n"}}, real: "AGENTS.md"},
		{name: "write new nested AGENTS.md", call: call{NewWrite(), WriteParams{Path: "src/AGENTS.md", Content: "obey\n"}}, real: "src/AGENTS.md"},
		{name: "write through file link", call: call{NewWrite(), WriteParams{Path: "notes.md", Content: "obey\n"}}, real: "AGENTS.md", link: true},
		{name: "write worktree git file", call: call{NewWrite(), WriteParams{Path: "src/wt/.git", Content: "gitdir: /tmp\n"}}, real: "wt/.git", link: true},
		{name: "edit through file link", call: call{NewEdit(), EditParams{Path: "notes.md", OldString: "rules", NewString: "obey"}}, real: "AGENTS.md", link: true},
		{name: "edit git config", call: call{NewEdit(), EditParams{Path: ".git/config", OldString: "[core]", NewString: "[core]\n\tpager = sh"}}, real: ".git/config"},
		{name: "patch update through link", call: call{NewApplyPatch(), PatchParams{Patch: "*** Begin Patch\n*** Update File: docs/config\n-[core]\n+[core]\n+\thooksPath = /tmp\n*** End Patch"}}, real: ".git/config", link: true},
		{name: "patch add", call: call{NewApplyPatch(), PatchParams{Patch: "*** Begin Patch\n*** Add File: .longrun/mcp.json\n+{}\n*** End Patch"}}, real: ".longrun/mcp.json"},
		{name: "patch delete", call: call{NewApplyPatch(), PatchParams{Patch: "*** Begin Patch\n*** Delete File: AGENTS.md\n*** End Patch"}}, real: "AGENTS.md"},
		{name: "patch move onto", call: call{NewApplyPatch(), PatchParams{Patch: "*** Begin Patch\n*** Update File: src/main.go\n*** Move to: docs/description\n-package main\n+x\n*** End Patch"}}, real: ".git/description", link: true},
		{name: "patch move away", call: call{NewApplyPatch(), PatchParams{Patch: "*** Begin Patch\n*** Update File: notes.md\n*** Move to: src/notes.md\n-rules\n+rules\n*** End Patch"}}, real: "AGENTS.md", link: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws := controlTree(t)
			before := snapshotTree(t, ws.Root())
			res := runTool(t, context.Background(), tt.call.tool, Env{Workspace: ws}, tt.call.args)
			require.True(t, res.IsError, res.Content)
			require.Contains(t, res.Content, tt.real)
			require.Contains(t, res.Content, "control file")
			require.Contains(t, res.Content, "a person must approve")
			if tt.link {
				require.Contains(t, res.Content, "Name "+tt.real+" directly so the session asks a person")
			}
			require.Equal(t, before, snapshotTree(t, ws.Root()), "a refused call changes nothing")
			require.Empty(t, res.Files)

			// The same call approved by a person goes ahead.
			res = runTool(t, context.Background(), tt.call.tool, Env{Workspace: ws, ApprovedByPerson: true}, tt.call.args)
			require.False(t, res.IsError, res.Content)
			require.NotEqual(t, before, snapshotTree(t, ws.Root()))
		})
	}
}

// TestControlFilesReadable: reading a control file needs no person.
func TestControlFilesReadable(t *testing.T) {
	t.Parallel()
	ws := controlTree(t)
	res := runTool(t, context.Background(), NewRead(), Env{Workspace: ws}, ReadParams{Path: "docs/config"})
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "[core]")
	require.Equal(t, ".git/config", res.Files[0].Path, "the version is keyed by the real path")
}

// snapshotTree records everything under root (path -> content and mode;
// symlinks as their target, directories as their mode), without following
// symlinks, so a test can assert a tree is unchanged byte for byte.
func snapshotTree(t *testing.T, root string) map[string]string {
	t.Helper()
	tree := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			tree[rel] = "-> " + target
		case fi.IsDir():
			tree[rel+"/"] = fi.Mode().Perm().String()
		default:
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			tree[rel] = string(data) + "\x00" + fi.Mode().Perm().String()
		}
		return nil
	})
	require.NoError(t, err)
	return tree
}
