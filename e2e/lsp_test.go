package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/lsp/lsptest"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

func lspArgs(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Must show 1 of issue 21: on a real Go module with gopls, an edit that
// breaks the type check returns the compiler's diagnostic in its result
// and the fix clears it; definition and references answer on the module;
// a rename across three files arrives as one patch that waits for
// approval and then applies to all three at once.
func TestLanguageServerOnAGoModule(t *testing.T) {
	t.Parallel()
	gopls := lsptest.Gopls(t)
	const broken = `return "many"`
	script := []sm.Reply{
		sm.Tools(sm.Call{ID: "c_read", Name: "read", Arguments: `{"path": "b.go"}`}),
		sm.Tools(sm.Call{ID: "c_break", Name: "edit", Arguments: lspArgs(map[string]string{
			"path": "b.go", "old_string": "return Total(1, 2) + Total(3, 4)", "new_string": broken})}),
		sm.Tools(sm.Call{ID: "c_fix", Name: "edit", Arguments: lspArgs(map[string]string{
			"path": "b.go", "old_string": broken, "new_string": "return Total(1, 2) + Total(3, 4)"})}),
		sm.Tools(
			sm.Call{ID: "c_def", Name: "lsp_definition", Arguments: `{"path": "c.go", "symbol": "Total"}`},
			sm.Call{ID: "c_refs", Name: "lsp_references", Arguments: `{"path": "a.go", "line": 4, "column": 6}`},
		),
		sm.Tools(sm.Call{ID: "c_rename", Name: "lsp_rename", Arguments: `{"path": "b.go", "symbol": "Total", "new_name": "Sum"}`}),
		sm.Text("renamed"),
	}
	e := &env{
		t: t, model: sm.New(script...), workspace: t.TempDir(), stateDir: t.TempDir(), configDir: t.TempDir(),
		taskQueue: "e2e-" + randHex(6), apiKey: "sk-test-" + randHex(16),
	}
	t.Cleanup(e.model.Close)
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a.go":   "package m\n\n// Total adds.\nfunc Total(a, b int) int { return a + b }\n",
		"b.go":   "package m\n\nfunc twice() int {\n\treturn Total(1, 2) + Total(3, 4)\n}\n",
		"c.go":   "package m\n\nvar sum = Total\n",
	}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(e.workspace, name), []byte(text), 0o644))
	}
	// The worker's own configuration names the server, as a person would;
	// the cap is wider than the default 3 s for a loaded CI machine.
	cfg := lspArgs(map[string]any{
		"servers":          map[string]any{"gopls": map[string]any{"command": gopls, "patterns": []string{"*.go", "go.mod"}}},
		"diagnostics_wait": "20s",
	})
	require.NoError(t, os.WriteFile(filepath.Join(e.configDir, "lsp.json"), []byte(cfg), 0o600))
	e.startWorker()

	id := e.start(workflows.SessionInput{Prompt: "rename Total to Sum"})
	for _, call := range []string{"c_break", "c_fix"} {
		p := waitPending(t, id, 1)
		require.Equal(t, call, p[0].CallID)
		out, err := e.starter("approve", id, call)
		require.NoError(t, err, out)
	}

	// The rename waits for approval as one patch over the three files,
	// and nothing is changed before it is approved.
	p := waitPending(t, id, 1)
	require.Equal(t, "c_rename", p[0].CallID)
	var args struct {
		Patch string `json:"patch"`
	}
	require.NoError(t, json.Unmarshal([]byte(p[0].Arguments), &args))
	for _, f := range []string{"a.go", "b.go", "c.go"} {
		require.Contains(t, args.Patch, "*** Update File: "+f, "one patch over every file")
		b, _ := os.ReadFile(filepath.Join(e.workspace, f))
		require.NotContains(t, string(b), "Sum(", "nothing changes before the approval")
	}
	require.Contains(t, args.Patch, "+func Sum(a, b int) int { return a + b }")
	out, err := e.starter("approve", id, "c_rename")
	require.NoError(t, err, out)
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	recordHistory(t, id, "lsp_rename_prepared")

	msgs := e.checkSession(id)
	broke := resultFor(msgs, "c_break")
	require.Contains(t, broke.Content, "b.go:4:9: error: cannot use \"many\" (untyped string constant) as int value in return statement",
		"the compiler's diagnostic, with its line, in the edit's result")
	fixed := resultFor(msgs, "c_fix")
	require.NotContains(t, fixed.Content, "error:")
	require.Contains(t, fixed.Content, "gopls reports no errors or warnings in b.go.", "the fix clears it")

	def := resultFor(msgs, "c_def")
	require.False(t, def.IsError, def.Content)
	require.Equal(t, "a.go:4:6: func Total(a, b int) int { return a + b }", def.Content)
	refs := resultFor(msgs, "c_refs")
	require.False(t, refs.IsError, refs.Content)
	require.Equal(t, strings.Join([]string{"4 references:",
		"a.go:4:6: func Total(a, b int) int { return a + b }",
		"b.go:4:9: return Total(1, 2) + Total(3, 4)",
		"b.go:4:23: return Total(1, 2) + Total(3, 4)",
		"c.go:3:11: var sum = Total"}, "\n"), refs.Content)

	ren := resultFor(msgs, "c_rename")
	require.Equal(t, conversation.ReasonRan, ren.Reason)
	require.False(t, ren.IsError, ren.Content)
	require.Contains(t, ren.Content, "renamed to Sum")
	for f, want := range map[string]string{"a.go": "func Sum(a, b int)", "b.go": "Sum(1, 2) + Sum(3, 4)", "c.go": "var sum = Sum"} {
		b, _ := os.ReadFile(filepath.Join(e.workspace, f))
		require.Contains(t, string(b), want, "all three files changed")
	}
	build := exec.Command("go", "build", "./...")
	build.Dir = e.workspace
	bout, err := build.CombinedOutput()
	require.NoError(t, err, "go build after the rename: %s", bout)
}

// goplsIn lists the gopls processes whose working directory (the root
// the worker started them with) is under dir.
func goplsIn(gopls, dir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		exe, err := os.Readlink(filepath.Join(p, "exe"))
		if err != nil || exe != gopls {
			continue
		}
		cwd, err := os.Readlink(filepath.Join(p, "cwd"))
		if err == nil && strings.HasPrefix(cwd, dir) {
			out = append(out, p+" "+cwd)
		}
	}
	return out
}

// An isolated session gets its own gopls, rooted in its checkout, which
// reports the type error of an edit there and stops when the session
// ends and its checkout is closed.
func TestLanguageServerPerCheckoutStopsWithTheSession(t *testing.T) {
	t.Parallel()
	gopls, err := filepath.EvalSymlinks(lsptest.Gopls(t))
	require.NoError(t, err)
	e := isolationEnv(t, func(string) map[string][]sm.Reply {
		return map[string][]sm.Reply{"break it": {
			sm.Tools(sm.Call{ID: "c1", Name: "write", Arguments: lspArgs(map[string]string{"path": "b.go", "content": "package m\n\nvar n int = \"x\"\n"})}),
			sm.Text("broke it"),
		}}
	})
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "go.mod"), []byte("module example.com/m\n\ngo 1.22\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "a.go"), []byte("package m\n"), 0o644))
	git(t, e.workspace, "add", "go.mod", "a.go")
	git(t, e.workspace, "commit", "-qm", "go module")
	require.NoError(t, os.WriteFile(filepath.Join(e.configDir, "lsp.json"), []byte(lspArgs(map[string]any{
		"servers":          map[string]any{"gopls": map[string]any{"command": gopls, "patterns": []string{"*.go"}}},
		"diagnostics_wait": "20s",
	})), 0o600))
	e.stopWorker()
	e.startWorker() // with the language server configured

	id := "e2e-lsp-iso-" + randHex(3)
	out, err := e.starter("start", "--id", id, "--profile", "auto", "break it")
	require.NoError(t, err, out)
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	res := resultFor(e.checkSession(id), "c1")
	require.NotNil(t, res)
	require.Contains(t, res.Content, `b.go:3:13: error: cannot use "x" (untyped string constant) as int value in variable declaration`,
		"the checkout's own server reports the edit's error")
	checkouts := filepath.Join(e.stateDir, "checkouts")
	waitFor(t, "the session's gopls to stop with its checkout", 20*time.Second, func() bool {
		return len(goplsIn(gopls, checkouts)) == 0
	})
	require.Empty(t, goplsIn(gopls, e.workspace), "no server ran in the person's own checkout")
}
