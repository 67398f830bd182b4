package tools

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/lsp/lsptest"

	"github.com/longrun/longrun/lsp"
)

func lspCall(t *testing.T, tl Tool, env Env, args any) Result {
	t.Helper()
	raw, _ := json.Marshal(args)
	res, err := tl.Run(context.Background(), env, raw)
	require.NoError(t, err)
	return res
}

func TestLSPToolsOnAGoModule(t *testing.T) {
	gopls := lsptest.Gopls(t)
	ws := testWorkspace(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a.go":   "package m\n\n// Total adds.\nfunc Total(a, b int) int { return a + b }\n",
		"b.go":   "package m\n\nfunc twice() int { return Total(1, 2) + Total(3, 4) }\n",
		"c.go":   "package m\n\nvar sum = Total\n",
	})
	m := lsp.NewManager(lsp.Config{Launch: testLSPLaunch(), Servers: map[string]lsp.ServerConfig{lsp.GoplsName: lsp.Gopls(gopls)}})
	defer m.Close()
	byName := map[string]Tool{}
	for _, tl := range LSPTools(m) {
		byName[tl.Spec().Name] = tl
	}
	env := Env{Workspace: ws, GuardWrites: true, Seen: map[string]string{}}

	res := lspCall(t, byName[LSPDefinitionName], env, LSPPositionParams{Path: "c.go", Symbol: "Total"})
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "a.go:4:6: func Total(a, b int) int { return a + b }", res.Content)

	res = lspCall(t, byName[LSPReferencesName], env, LSPPositionParams{Path: "a.go", Line: 4, Column: 6})
	require.False(t, res.IsError, res.Content)
	require.True(t, strings.HasPrefix(res.Content, "4 references:"), res.Content)
	require.Contains(t, res.Content, "b.go:3:27:")
	require.Contains(t, res.Content, "c.go:3:11:")

	res = lspCall(t, byName[LSPHoverName], env, LSPPositionParams{Path: "b.go", Symbol: "Total"})
	require.Contains(t, res.Content, "func Total(a int, b int) int")
	res = lspCall(t, byName[LSPSymbolsName], env, LSPSymbolsParams{Path: "a.go"})
	require.Contains(t, res.Content, "function Total")
	res = lspCall(t, byName[LSPSymbolsName], env, LSPSymbolsParams{Query: "Total"})
	require.Contains(t, res.Content, "a.go:4:6")

	require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "c.go"), []byte("package m\n\nvar sum int = Total\n"), 0o644))
	res = lspCall(t, byName[LSPDiagnosticsName], env, LSPDiagnosticsParams{Path: "c.go"})
	require.Contains(t, res.Content, "c.go:3:15: error:")
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "c.go"), []byte("package m\n\nvar sum = Total\n"), 0o644))

	// The rename is prepared into one patch over the three files...
	rename := byName[LSPRenameName].(*LSPRename)
	args, _ := json.Marshal(LSPRenameParams{LSPPositionParams: LSPPositionParams{Path: "b.go", Symbol: "Total"}, NewName: "Sum"})
	prepared, pres, err := rename.Prepare(context.Background(), env, args)
	require.NoError(t, err)
	require.False(t, pres.IsError, pres.Content)
	require.Len(t, pres.Files, 3)
	var pa lspRenameArgs
	require.NoError(t, json.Unmarshal(prepared, &pa))
	for _, f := range []string{"a.go", "b.go", "c.go"} {
		require.Contains(t, pa.Patch, "*** Update File: "+f)
	}
	for _, f := range pres.Files {
		env.Seen[f.Path] = f.SHA256
	}
	// ...which applies exactly, all files at once.
	res, err = rename.Run(context.Background(), env, prepared)
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	for f, want := range map[string]string{"a.go": "func Sum(a, b int)", "b.go": "Sum(1, 2) + Sum(3, 4)", "c.go": "var sum = Sum"} {
		b, _ := os.ReadFile(filepath.Join(ws.Root(), f))
		require.Contains(t, string(b), want)
	}
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = ws.Root()
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
}

func TestLSPRenameRefusesFilesChangedSincePrepared(t *testing.T) {
	gopls := lsptest.Gopls(t)
	ws := testWorkspace(t, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a.go":   "package m\n\nfunc Old() {}\n",
		"b.go":   "package m\n\nfunc use() { Old() }\n",
	})
	m := lsp.NewManager(lsp.Config{Launch: testLSPLaunch(), Servers: map[string]lsp.ServerConfig{lsp.GoplsName: lsp.Gopls(gopls)}})
	defer m.Close()
	rename := &LSPRename{m}
	env := Env{Workspace: ws, GuardWrites: true, Seen: map[string]string{}}
	args, _ := json.Marshal(LSPRenameParams{LSPPositionParams: LSPPositionParams{Path: "a.go", Symbol: "Old"}, NewName: "New"})
	prepared, pres, err := rename.Prepare(context.Background(), env, args)
	require.NoError(t, err)
	require.False(t, pres.IsError, pres.Content)
	for _, f := range pres.Files {
		env.Seen[f.Path] = f.SHA256
	}
	b := filepath.Join(ws.Root(), "b.go")
	require.NoError(t, os.WriteFile(b, []byte("package m\n\nfunc use() { Old(); Old() }\n"), 0o644))
	res, err := rename.Run(context.Background(), env, prepared)
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Equal(t, "b.go changed after the rename was computed, so nothing was changed: call lsp_rename again", res.Content)
	a, _ := os.ReadFile(filepath.Join(ws.Root(), "a.go"))
	require.Equal(t, "package m\n\nfunc Old() {}\n", string(a), "nothing was applied")
}

func TestMakePatchFallsBackToWholeFiles(t *testing.T) {
	t.Parallel()
	// The same three lines twice: a 3-line-context hunk for the second
	// would match the first.
	block := "a\nb\nc\nx\nd\ne\nf\n"
	before := block + block
	after := block + strings.Replace(block, "x", "y", 1)
	ws := testWorkspace(t, map[string]string{"f.txt": before})
	patch, err := PatchFor(ws, []FileChange{{Path: "f.txt", Before: before, After: after}})
	require.NoError(t, err)
	res := lspCall(t, NewApplyPatch(), Env{Workspace: ws}, PatchParams{Patch: patch})
	require.False(t, res.IsError, res.Content)
	got, _ := os.ReadFile(filepath.Join(ws.Root(), "f.txt"))
	require.Equal(t, after, string(got))
}
