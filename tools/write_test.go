package tools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		args     WriteParams
		isError  bool
		contains string
		file     string // file expected to hold args.Content, relative to root
		mode     os.FileMode
	}{
		{name: "create", args: WriteParams{Path: "new.txt", Content: "hello"},
			contains: "wrote 5 bytes to new.txt (created)", file: "new.txt", mode: 0o644},
		{name: "nested dirs", args: WriteParams{Path: "a/b/c/d.go", Content: "package d\n"},
			contains: "wrote 10 bytes to a/b/c/d.go (created)", file: "a/b/c/d.go", mode: 0o644},
		{name: "overwrite keeps mode", args: WriteParams{Path: "run.sh", Content: "echo hi\n"},
			contains: "wrote 8 bytes to run.sh (overwrote)", file: "run.sh", mode: 0o755},
		{name: "empty content", args: WriteParams{Path: "empty", Content: ""},
			contains: "wrote 0 bytes to empty (created)", file: "empty", mode: 0o644},
		{name: "through inside symlink", args: WriteParams{Path: "link/x.txt", Content: "x"},
			contains: "wrote 1 bytes", file: "sub/x.txt", mode: 0o644},
		{name: "parent escape", args: WriteParams{Path: "../escape.txt", Content: "x"}, isError: true,
			contains: "outside the workspace"},
		{name: "absolute outside", args: WriteParams{Path: "/tmp/longrun-write-test", Content: "x"}, isError: true,
			contains: "outside the workspace"},
		{name: "symlinked-out dir", args: WriteParams{Path: "out/new/file.txt", Content: "x"}, isError: true,
			contains: "outside the workspace"},
		{name: "directory target", args: WriteParams{Path: "sub", Content: "x"}, isError: true,
			contains: "sub is a directory"},
		{name: "parent is a file", args: WriteParams{Path: "run.sh/x", Content: "x"}, isError: true,
			contains: "cannot create directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := t.TempDir()
			root := filepath.Join(base, "root")
			outside := filepath.Join(base, "outside")
			require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
			require.NoError(t, os.MkdirAll(outside, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(root, "run.sh"), []byte("old"), 0o755))
			require.NoError(t, os.Chmod(filepath.Join(root, "run.sh"), 0o755))
			require.NoError(t, os.Symlink(outside, filepath.Join(root, "out")))
			require.NoError(t, os.Symlink("sub", filepath.Join(root, "link")))
			ws, err := NewWorkspace(root)
			require.NoError(t, err)

			res := runTool(t, context.Background(), NewWrite(), Env{Workspace: ws}, tt.args)
			require.Equal(t, tt.isError, res.IsError, res.Content)
			require.Contains(t, res.Content, tt.contains)
			if tt.file != "" {
				p := filepath.Join(root, filepath.FromSlash(tt.file))
				got, err := os.ReadFile(p)
				require.NoError(t, err)
				require.Equal(t, tt.args.Content, string(got))
				fi, err := os.Stat(p)
				require.NoError(t, err)
				require.Equal(t, tt.mode, fi.Mode().Perm())
			}
			// Nothing leaks outside, and no temp files are left behind.
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			require.Empty(t, entries)
			leftovers, err := filepath.Glob(filepath.Join(root, "*", ".*.tmp-*"))
			require.NoError(t, err)
			require.Empty(t, leftovers)
			_, err = os.Stat("/tmp/longrun-write-test")
			require.True(t, os.IsNotExist(err))
		})
	}
}

func TestWriteKeepsEndingsAndBOMAndShowsDiff(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	path := filepath.Join(root, "w.txt")
	require.NoError(t, os.WriteFile(path, []byte("\ufeffone\r\ntwo\r\n"), 0o600))
	res, err := NewWrite().Run(context.Background(), Env{Workspace: ws}, []byte(`{"path":"w.txt","content":"one\nTWO\n"}`))
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "-two\n+TWO")
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "\ufeffone\r\nTWO\r\n", string(got))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	res, err = NewWrite().Run(context.Background(), Env{Workspace: ws}, []byte(`{"path":"w.txt","content":"one\nTWO\n"}`))
	require.NoError(t, err)
	require.Contains(t, res.Content, "unchanged")
}
