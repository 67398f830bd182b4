package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/mcp"
	"github.com/longrun/longrun/tools"
)

func TestOpenMCP(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	m, err := openMCP(mcp.Config{Servers: map[string]mcp.ServerConfig{}}, root, nil, tools.DefaultConfig())
	require.NoError(t, err)
	require.Nil(t, m, "no servers: no MCP")

	m, err = openMCP(mcp.Config{Servers: map[string]mcp.ServerConfig{
		"kb": {URL: "http://127.0.0.1:1/mcp"},
		"fs": {Command: "fs-mcp", Args: []string{"--ro"}},
	}}, root, nil, tools.DefaultConfig())
	require.NoError(t, err)
	require.Equal(t, []string{"fs (command fs-mcp --ro)", "kb (url http://127.0.0.1:1/mcp)"}, m.Servers())
	require.NoError(t, m.Close())
}
