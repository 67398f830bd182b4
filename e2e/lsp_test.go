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
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/lsp/lsptest"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

func lspArgs(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// lspCase is a project and the language server the worker's lsp.json
// names for it, with what every server must do through a real worker:
// an edit that breaks the type check returns the server's diagnostic in
// its result and the fix clears it; definition and references answer
// across files; a rename across files arrives as one patch that waits for
// approval and then applies to all of them at once.
type lspCase struct {
	name   string         // the server's name in lsp.json, which results use
	server map[string]any // its lsp.json entry
	files  map[string]string
	// The edit in path replaces good with bad, which breaks the type
	// check, and then bad with good; broken is the diagnostic it returns.
	path, good, bad, broken string
	// definition and references are the lsp_* calls' arguments and
	// wantDefinition and wantReferences their results.
	definition, references         string
	wantDefinition, wantReferences string
	rename                         string            // lsp_rename's arguments
	patchAdds                      string            // a line the rename's patch adds
	renamed                        map[string]string // each file it changes, and text it then holds
	history                        string            // the recorded history's name, or ""
	// after checks the workspace once the rename is applied, or is nil.
	after func(t *testing.T, workspace string)
}

// runLSPCase runs c's session through a real worker whose lsp.json
// names c's server, and checks every call paired and the history
// replaying.
func runLSPCase(t *testing.T, c lspCase) {
	t.Helper()
	var rename struct {
		NewName string `json:"new_name"`
	}
	require.NoError(t, json.Unmarshal([]byte(c.rename), &rename))
	script := []sm.Reply{
		sm.Tools(sm.Call{ID: "c_read", Name: "read", Arguments: lspArgs(map[string]string{"path": c.path})}),
		sm.Tools(sm.Call{ID: "c_break", Name: "edit", Arguments: lspArgs(map[string]string{
			"path": c.path, "old_string": c.good, "new_string": c.bad})}),
		sm.Tools(sm.Call{ID: "c_fix", Name: "edit", Arguments: lspArgs(map[string]string{
			"path": c.path, "old_string": c.bad, "new_string": c.good})}),
		// Deferred tools, called by name as a model that knows them does.
		sm.Tools(
			sm.Call{ID: "c_def", Name: "lsp_definition", Arguments: c.definition},
			sm.Call{ID: "c_refs", Name: "lsp_references", Arguments: c.references},
		),
		sm.Tools(sm.Call{ID: "c_rename", Name: "lsp_rename", Arguments: c.rename}),
		sm.Text("renamed"),
	}
	e := &env{
		t: t, model: sm.New(script...), workspace: t.TempDir(), stateDir: t.TempDir(), configDir: t.TempDir(),
		taskQueue: "e2e-" + randHex(6), apiKey: "sk-test-" + randHex(16),
	}
	t.Cleanup(e.model.Close)
	for name, text := range c.files {
		require.NoError(t, os.WriteFile(filepath.Join(e.workspace, name), []byte(text), 0o644))
	}
	// The worker's own configuration names the server, as a person would;
	// the cap is wider than the default 3 s for a loaded CI machine.
	cfg := lspArgs(map[string]any{"servers": map[string]any{c.name: c.server}, "diagnostics_wait": "20s"})
	require.NoError(t, os.WriteFile(filepath.Join(e.configDir, "lsp.json"), []byte(cfg), 0o600))
	e.startWorker()

	id := e.start(workflows.SessionInput{Prompt: "rename it"})
	for _, call := range []string{"c_break", "c_fix"} {
		p := waitPending(t, id, 1)
		require.Equal(t, call, p[0].CallID)
		out, err := e.starter("approve", id, call)
		require.NoError(t, err, out)
	}

	// The rename waits for approval as one patch over every file, and
	// nothing is changed before it is approved.
	p := waitPending(t, id, 1)
	require.Equal(t, "c_rename", p[0].CallID)
	var args struct {
		Patch string `json:"patch"`
	}
	require.NoError(t, json.Unmarshal([]byte(p[0].Arguments), &args))
	for f := range c.renamed {
		require.Contains(t, args.Patch, "*** Update File: "+f, "one patch over every file")
		b, _ := os.ReadFile(filepath.Join(e.workspace, f))
		require.Equal(t, c.files[f], string(b), "nothing changes before the approval")
	}
	require.Contains(t, args.Patch, "\n+"+c.patchAdds+"\n")
	out, err := e.starter("approve", id, "c_rename")
	require.NoError(t, err, out)
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	if c.history != "" {
		recordHistory(t, id, c.history)
	}
	rep := worker.NewWorkflowReplayer()
	rep.RegisterWorkflowWithOptions((&workflows.Sessions{}).AgentSession, workflow.RegisterOptions{Name: workflows.WorkflowType})
	require.NoError(t, rep.ReplayWorkflowHistory(nil, history(t, id)), "the history replays")

	msgs := e.checkSession(id)
	broke := resultFor(msgs, "c_break")
	require.Contains(t, broke.Content, c.broken, "the server's diagnostic, with its line, in the edit's result")
	fixed := resultFor(msgs, "c_fix")
	require.NotContains(t, fixed.Content, "error:")
	require.Contains(t, fixed.Content, c.name+" reports no errors or warnings in "+c.path+".", "the fix clears it")

	def := resultFor(msgs, "c_def")
	require.False(t, def.IsError, def.Content)
	require.Equal(t, c.wantDefinition, def.Content)
	refs := resultFor(msgs, "c_refs")
	require.False(t, refs.IsError, refs.Content)
	require.Equal(t, c.wantReferences, refs.Content)

	ren := resultFor(msgs, "c_rename")
	require.Equal(t, conversation.ReasonRan, ren.Reason)
	require.False(t, ren.IsError, ren.Content)
	require.Contains(t, ren.Content, "renamed to "+rename.NewName)
	for f, want := range c.renamed {
		b, _ := os.ReadFile(filepath.Join(e.workspace, f))
		require.Contains(t, string(b), want, "every file changed")
	}
	if c.after != nil {
		c.after(t, e.workspace)
	}
}

// Must show 1 of issue 21: on a real Go module with gopls, the edit's
// compiler diagnostic, definition and references, and a rename across
// three files applied at once after one approval.
func TestLanguageServerOnAGoModule(t *testing.T) {
	t.Parallel()
	gopls := lsptest.Gopls(t)
	runLSPCase(t, lspCase{
		name: "gopls", server: map[string]any{"command": gopls, "patterns": []string{"*.go", "go.mod"}},
		files: map[string]string{
			"go.mod": "module example.com/m\n\ngo 1.22\n",
			"a.go":   "package m\n\n// Total adds.\nfunc Total(a, b int) int { return a + b }\n",
			"b.go":   "package m\n\nfunc twice() int {\n\treturn Total(1, 2) + Total(3, 4)\n}\n",
			"c.go":   "package m\n\nvar sum = Total\n",
		},
		path: "b.go", good: "return Total(1, 2) + Total(3, 4)", bad: `return "many"`,
		broken:         "b.go:4:9: error: cannot use \"many\" (untyped string constant) as int value in return statement",
		definition:     `{"path": "c.go", "symbol": "Total"}`,
		wantDefinition: "a.go:4:6: func Total(a, b int) int { return a + b }",
		references:     `{"path": "a.go", "line": 4, "column": 6}`,
		wantReferences: strings.Join([]string{"4 references:",
			"a.go:4:6: func Total(a, b int) int { return a + b }",
			"b.go:4:9: return Total(1, 2) + Total(3, 4)",
			"b.go:4:23: return Total(1, 2) + Total(3, 4)",
			"c.go:3:11: var sum = Total"}, "\n"),
		rename:    `{"path": "b.go", "symbol": "Total", "new_name": "Sum"}`,
		patchAdds: "func Sum(a, b int) int { return a + b }",
		renamed:   map[string]string{"a.go": "func Sum(a, b int)", "b.go": "Sum(1, 2) + Sum(3, 4)", "c.go": "var sum = Sum"},
		history:   "lsp_rename_prepared",
		after: func(t *testing.T, workspace string) {
			build := exec.Command("go", "build", "./...")
			build.Dir = workspace
			out, err := build.CombinedOutput()
			require.NoError(t, err, "go build after the rename: %s", out)
		},
	})
}

// Issue 21: a server that is not Go's, named only in the worker's
// lsp.json (command, arguments, file patterns, settings, initialization
// options), works through a real worker as gopls does.
func TestLanguageServerConfiguredInLSPJSON(t *testing.T) {
	t.Parallel()
	t.Run("pyright", func(t *testing.T) {
		t.Parallel()
		pyright := lsptest.Pyright(t)
		runLSPCase(t, lspCase{
			name: "pyright", server: map[string]any{"command": pyright, "args": []string{"--stdio"}, "patterns": []string{"*.py", "*.pyi"},
				// The settings make the broken return a warning, not pyright's
				// usual error: they reach the server through the worker.
				"settings": map[string]any{"python": map[string]any{"analysis": map[string]any{"typeCheckingMode": "basic",
					"diagnosticSeverityOverrides": map[string]any{"reportReturnType": "warning"}}}}},
			files: map[string]string{
				"models.py": "def total(a: int, b: int) -> int:\n    return a + b\n",
				"app.py":    "from models import total\n\n\ndef twice() -> int:\n    return total(1, 2) + total(3, 4)\n",
				"util.py":   "from models import total\n\nplus = total\n",
			},
			path: "app.py", good: "return total(1, 2) + total(3, 4)", bad: `return "many"`,
			broken:         `app.py:5:12: warning: Type "Literal['many']" is not assignable to return type "int"; "Literal['many']" is not assignable to "int" [Pyright]`,
			definition:     `{"path": "util.py", "line": 3, "symbol": "total"}`,
			wantDefinition: "models.py:1:5: def total(a: int, b: int) -> int:",
			references:     `{"path": "models.py", "line": 1, "column": 5}`,
			wantReferences: strings.Join([]string{"6 references:",
				"app.py:1:20: from models import total",
				"app.py:5:12: return total(1, 2) + total(3, 4)",
				"app.py:5:26: return total(1, 2) + total(3, 4)",
				"models.py:1:5: def total(a: int, b: int) -> int:",
				"util.py:1:20: from models import total",
				"util.py:3:8: plus = total"}, "\n"),
			rename:    `{"path": "app.py", "line": 5, "symbol": "total", "new_name": "add"}`,
			patchAdds: "def add(a: int, b: int) -> int:",
			renamed: map[string]string{"models.py": "def add(a: int, b: int) -> int:",
				"app.py":  "from models import add\n\n\ndef twice() -> int:\n    return add(1, 2) + add(3, 4)\n",
				"util.py": "from models import add\n\nplus = add\n"},
			history: "lsp_rename_pyright",
		})
	})
	t.Run("typescript", func(t *testing.T) {
		t.Parallel()
		tsls := lsptest.TypeScript(t)
		runLSPCase(t, lspCase{
			// Without the initialization option a rename at a use of an
			// imported name renames it at the import alone ("total as add").
			name: "typescript", server: map[string]any{"command": tsls, "args": []string{"--stdio"}, "patterns": []string{"*.ts"},
				"initialization_options": map[string]any{"preferences": map[string]any{"providePrefixAndSuffixTextForRename": false}}},
			files: map[string]string{
				"tsconfig.json": `{"compilerOptions": {"strict": true, "target": "es2020", "module": "commonjs"}}`,
				"models.ts":     "export function total(a: number, b: number): number {\n  return a + b;\n}\n",
				"app.ts":        "import { total } from \"./models\";\n\nexport function twice(): number {\n  return total(1, 2) + total(3, 4);\n}\n",
				"util.ts":       "import { total } from \"./models\";\n\nexport const plus = total;\n",
			},
			path: "app.ts", good: "return total(1, 2) + total(3, 4);", bad: `return "many";`,
			broken:         "app.ts:4:3: error: Type 'string' is not assignable to type 'number'. [typescript]",
			definition:     `{"path": "util.ts", "line": 3, "symbol": "total"}`,
			wantDefinition: "models.ts:1:17: export function total(a: number, b: number): number {",
			references:     `{"path": "models.ts", "line": 1, "column": 17}`,
			wantReferences: strings.Join([]string{"6 references:",
				`app.ts:1:10: import { total } from "./models";`,
				"app.ts:4:10: return total(1, 2) + total(3, 4);",
				"app.ts:4:24: return total(1, 2) + total(3, 4);",
				"models.ts:1:17: export function total(a: number, b: number): number {",
				`util.ts:1:10: import { total } from "./models";`,
				"util.ts:3:21: export const plus = total;"}, "\n"),
			rename:    `{"path": "app.ts", "line": 4, "symbol": "total", "new_name": "add"}`,
			patchAdds: "export function add(a: number, b: number): number {",
			renamed: map[string]string{"models.ts": "export function add(a: number, b: number): number {",
				"app.ts":  "import { add } from \"./models\";\n\nexport function twice(): number {\n  return add(1, 2) + add(3, 4);\n}\n",
				"util.ts": "import { add } from \"./models\";\n\nexport const plus = add;\n"},
		})
	})
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
