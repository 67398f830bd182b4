package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOpenMCP(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	m, err := openMCP(root, nil)
	require.NoError(t, err)
	require.Nil(t, m, "no .longrun/mcp.json: no MCP")

	path := filepath.Join(root, ".longrun", "mcp.json")
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(`{"servers":{"kb":{"url":"http://127.0.0.1:1/mcp"},"fs":{"command":"fs-mcp","args":["--ro"]}}}`), 0o644))
	m, err = openMCP(root, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"fs (command fs-mcp --ro)", "kb (url http://127.0.0.1:1/mcp)"}, m.Servers())
	require.NoError(t, m.Close())

	require.NoError(t, os.WriteFile(path, []byte(`{"servers":{"kb":{}}}`), 0o644))
	_, err = openMCP(root, nil)
	require.ErrorContains(t, err, path)
}
