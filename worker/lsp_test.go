package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

// lsp.json is read from the configuration directory: a bad one stops the
// worker with the file's name, and one that turns every server off
// leaves the worker without language servers (and without lsp_* tools).
func TestOpenLSPReadsTheConfigDirectory(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := t.TempDir()
	file := filepath.Join(dir, "lsp.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"servers": {"py": {"command": "pyright-langserver"}}}`), 0o600))
	_, err := openLSP(dir, logger, tools.DefaultConfig())
	require.ErrorContains(t, err, file)
	require.ErrorContains(t, err, `server py: "patterns" is empty`)

	require.NoError(t, os.WriteFile(file, []byte(`{"servers": {"gopls": {"disabled": true}}}`), 0o600))
	m, err := openLSP(dir, logger, tools.DefaultConfig())
	require.NoError(t, err)
	require.Nil(t, m)

	require.NoError(t, os.WriteFile(file, []byte(`{"servers": {"py": {"command": "pyright-langserver", "args": ["--stdio"], "patterns": ["*.py"]}}, "idle_timeout": "1m"}`), 0o600))
	m, err = openLSP(dir, logger, tools.DefaultConfig())
	require.NoError(t, err)
	require.NotNil(t, m)
	defer m.Close()
	require.Contains(t, m.Servers(), "py")
}
