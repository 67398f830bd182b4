package durable

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestWriteFile: the file is written whole with its mode, replaces what
// was there, and its directory is synced after the rename; a write that
// fails leaves nothing behind and syncs nothing.
func TestWriteFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "worker-id")
	var synced []string
	w := Writer{SyncDir: func(d string) error {
		synced = append(synced, d)
		return SyncDir(d)
	}}
	require.NoError(t, w.WriteFile(path, []byte("one\n"), 0o600))
	require.NoError(t, w.WriteFile(path, []byte("two\n"), 0o600))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "two\n", string(b))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.Equal(t, []string{dir, dir}, synced)

	// A directory in the way: the rename fails, the temporary file goes.
	synced = nil
	require.NoError(t, os.Mkdir(filepath.Join(dir, "in-the-way"), 0o755))
	require.Error(t, w.WriteFile(filepath.Join(dir, "in-the-way"), []byte("x"), 0o600))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Equal(t, []string{"in-the-way", "worker-id"}, names)
	require.Empty(t, synced)

	// The zero Writer syncs by itself.
	require.NoError(t, Writer{}.WriteFile(path, []byte("three\n"), 0o644))
	require.Error(t, SyncDir(filepath.Join(dir, "missing")))
}
