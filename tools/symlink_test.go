package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSymlinksThroughTheTools: every file tool follows a symlink that stays
// inside the workspace (relative or absolute) and refuses one that leads
// out with the "outside the workspace" message, touching nothing outside.
func TestSymlinksThroughTheTools(t *testing.T) {
	t.Parallel()
	patch := func(p string) PatchParams {
		return PatchParams{Patch: "*** Begin Patch\n*** Update File: " + p + "/f.txt\n-inside\n+changed\n*** End Patch"}
	}
	tests := []struct {
		name string
		tool Tool
		args func(dir string) any
		want string // in the result through an inside link
	}{
		{name: "read", tool: NewRead(), args: func(d string) any { return ReadParams{Path: d + "/f.txt"} }, want: "inside"},
		{name: "read dir", tool: NewRead(), args: func(d string) any { return ReadParams{Path: d} }, want: "f.txt"},
		{name: "list", tool: NewList(), args: func(d string) any { return ListParams{Path: d} }, want: "f.txt"},
		{name: "grep", tool: NewGrep(), args: func(d string) any { return GrepParams{Pattern: "inside|canary", Path: d} }, want: "real/f.txt:1: inside"},
		{name: "grep file", tool: NewGrep(), args: func(d string) any { return GrepParams{Pattern: "inside|canary", Path: d + "/f.txt"} }, want: "real/f.txt:1: inside"},
		{name: "glob", tool: NewGlob(), args: func(d string) any { return GlobParams{Pattern: "*.txt", Path: d} }, want: "real/f.txt"},
		{name: "write", tool: NewWrite(), args: func(d string) any { return WriteParams{Path: d + "/new.txt", Content: "x"} }, want: "created"},
		{name: "edit", tool: NewEdit(), args: func(d string) any { return EditParams{Path: d + "/f.txt", OldString: "inside", NewString: "changed"} }, want: "edited"},
		{name: "apply_patch", tool: NewApplyPatch(), args: func(d string) any { return patch(d) }, want: "Success"},
	}
	for _, tt := range tests {
		for _, link := range []string{"rel", "abs", "out", "outrel"} {
			t.Run(tt.name+"/"+link, func(t *testing.T) {
				t.Parallel()
				base := t.TempDir()
				root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
				require.NoError(t, os.MkdirAll(filepath.Join(root, "real"), 0o755))
				require.NoError(t, os.MkdirAll(outside, 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(root, "real", "f.txt"), []byte("inside\n"), 0o644))
				require.NoError(t, os.WriteFile(filepath.Join(outside, "f.txt"), []byte("inside canary\n"), 0o644))
				for name, target := range map[string]string{
					"rel": "real", "abs": filepath.Join(root, "real"), "out": outside, "outrel": "../outside",
				} {
					require.NoError(t, os.Symlink(target, filepath.Join(root, name)))
				}
				ws, err := NewWorkspace(root)
				require.NoError(t, err)
				before := snapshotTree(t, outside)
				res := runTool(t, context.Background(), tt.tool, Env{Workspace: ws}, tt.args(link))
				if link == "rel" || link == "abs" {
					require.False(t, res.IsError, res.Content)
					require.Contains(t, res.Content, tt.want)
				} else {
					require.True(t, res.IsError, res.Content)
					require.Contains(t, res.Content, "outside the workspace")
				}
				require.NotContains(t, res.Content, "canary")
				require.Equal(t, before, snapshotTree(t, outside))
			})
		}
	}
}
