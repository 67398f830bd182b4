package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/lsp"
	"github.com/longrun/longrun/lsp/lsptest"
)

// TestLSPToolsOnAPythonProject runs the lsp_* tools against pyright,
// configured as lsp.json names it: nothing in the tools knows it is not
// gopls.
func TestLSPToolsOnAPythonProject(t *testing.T) {
	pyright := lsptest.Pyright(t)
	ws := testWorkspace(t, map[string]string{
		"models.py": "def total(a: int, b: int) -> int:\n    return a + b\n",
		"app.py":    "from models import total\n\n\ndef twice() -> int:\n    return total(1, 2) + total(3, 4)\n",
	})
	m := lsp.NewManager(lsp.Config{Launch: testLSPLaunch(), Servers: map[string]lsp.ServerConfig{"pyright": {
		Command: pyright, Args: []string{"--stdio"}, Patterns: []string{"*.py"}}}, DiagnosticsWait: "30s"})
	defer m.Close()
	byName := map[string]Tool{}
	for _, tl := range LSPTools(m) {
		byName[tl.Spec().Name] = tl
	}
	env := Env{Workspace: ws, GuardWrites: true, Seen: map[string]string{}}

	res := lspCall(t, byName[LSPDefinitionName], env, LSPPositionParams{Path: "app.py", Line: 5, Symbol: "total"})
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "models.py:1:5: def total(a: int, b: int) -> int:", res.Content)

	res = lspCall(t, byName[LSPReferencesName], env, LSPPositionParams{Path: "models.py", Line: 1, Column: 5})
	require.False(t, res.IsError, res.Content)
	require.True(t, strings.HasPrefix(res.Content, "4 references:"), res.Content)
	require.Contains(t, res.Content, "app.py:5:12:")

	res = lspCall(t, byName[LSPHoverName], env, LSPPositionParams{Path: "app.py", Line: 5, Symbol: "total"})
	require.Contains(t, res.Content, "(function) def total(")
	require.Contains(t, res.Content, ") -> int")
	res = lspCall(t, byName[LSPSymbolsName], env, LSPSymbolsParams{Path: "models.py"})
	require.Contains(t, res.Content, "function total")

	require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "app.py"), []byte("from models import total\n\nx: str = total(1, 2)\n"), 0o644))
	res = lspCall(t, byName[LSPDiagnosticsName], env, LSPDiagnosticsParams{Path: "app.py"})
	require.Contains(t, res.Content, "app.py:3:10: error:")
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "app.py"), []byte("from models import total\n\n\ndef twice() -> int:\n    return total(1, 2) + total(3, 4)\n"), 0o644))

	// The rename is prepared into one patch over both files and applies.
	rename := byName[LSPRenameName].(*LSPRename)
	args, _ := json.Marshal(LSPRenameParams{LSPPositionParams: LSPPositionParams{Path: "app.py", Line: 5, Symbol: "total"}, NewName: "add"})
	prepared, pres, err := rename.Prepare(context.Background(), env, args)
	require.NoError(t, err)
	require.False(t, pres.IsError, pres.Content)
	require.Len(t, pres.Files, 2)
	for _, f := range pres.Files {
		env.Seen[f.Path] = f.SHA256
	}
	res, err = rename.Run(context.Background(), env, prepared)
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	for f, want := range map[string]string{"models.py": "def add(a: int", "app.py": "return add(1, 2) + add(3, 4)"} {
		b, _ := os.ReadFile(filepath.Join(ws.Root(), f))
		require.Contains(t, string(b), want)
	}
}
