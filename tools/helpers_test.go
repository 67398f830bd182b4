package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// testWorkspace returns a workspace over a fresh temp dir holding files
// (path -> content).
func testWorkspace(t *testing.T, files map[string]string) *Workspace {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	ws, err := NewWorkspace(dir)
	require.NoError(t, err)
	return ws
}

// runTool validates args against the tool's schema, as the workflow does,
// then runs it.
func runTool(t *testing.T, ctx context.Context, tool Tool, env Env, args any) Result {
	t.Helper()
	raw, err := json.Marshal(args)
	require.NoError(t, err)
	require.NoError(t, ValidateArguments(tool.Spec(), string(raw)))
	res, err := tool.Run(ctx, env, raw)
	require.NoError(t, err)
	return res
}
