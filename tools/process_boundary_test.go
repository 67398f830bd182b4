package tools

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// processStarters are the functions that start a process, by import
// path: a reference to any of them (a call, or the function taken as a
// value) counts, and so does an exec.Cmd literal (a command built by
// hand); a mere *exec.Cmd in a type does not.
var processStarters = map[string][]string{
	"os/exec":               {"Command", "CommandContext"},
	"os":                    {"StartProcess"},
	"syscall":               {"ForkExec", "StartProcess", "Exec"},
	"golang.org/x/sys/unix": {"Exec"},
}

// processAllowed are the files and directories (ending in "/") of the
// module that may start a process, each with why. Everything else that
// runs a program for a session goes through SandboxCommand (or the
// shell's use of newSandboxExec), so a new feature cannot add a host
// process by accident: it fails here and must say why it is safe.
var processAllowed = map[string]string{
	"tools/sandbox_cmd.go":   "the sandbox's one entry point: runs bwrap, which runs the session's command",
	"tools/sandbox.go":       "the start-up probe: bwrap running `true`, and the worker's own `go env` before any session exists",
	"tools/sandbox_net.go":   "pasta, attached from the host to the sandbox's network namespace; it runs nothing of the session's",
	"tools/sandbox_host.go":  "HostCommand, the one door for a process that runs unsandboxed (sandbox mode off, or a server its owner marks \"sandbox\": false): a minimal environment, the program resolved on the host",
	"tools/shell_start.go":   "an approved shell command when no sandbox works (mode off or no bwrap): the worker says so at start and nothing runs unapproved",
	"checkout/checkout.go":   "the worker's own git over a checkout, with every program-running key neutralised (gitSafe) and no environment beyond git's",
	"mcp/manager.go":         "ExecCommand, the default Options.Command for tests and tools listings; the worker passes its own, sandboxed",
	"bench/":                 "benchmark programs: run by a person, never by a session",
	"lsp/internal/lspbench/": "a benchmark program: run by a person, never by a session",
	"tools/internal/":        "benchmark programs: run by a person, never by a session",
	"forge/forgetest/":       "test servers standing in for a remote (git http-backend, the scripted forge's look at its repository): imported by tests only, never by the worker",
}

// processStart is one place in the source that starts a process.
type processStart struct {
	file string // slash-separated, relative to the module root
	line int
	what string // e.g. exec.Command
}

// moduleRoot is the directory of go.mod above the test's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	require.NoError(t, err)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		require.NotEqual(t, parent, dir, "no go.mod above the test's directory")
		dir = parent
	}
}

// findProcessStarts parses every non-test .go file under root (not
// testdata, vendor, node_modules or dot directories) and returns each
// reference to a processStarters name, however the package is imported.
func findProcessStarts(root string) ([]processStart, error) {
	var out []processStart
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "testdata" || name == "vendor" || name == "node_modules" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parse %s: %w", p, err)
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, processStartsIn(fset, f, filepath.ToSlash(rel))...)
		return nil
	})
	return out, err
}

// processStartsIn finds the references in one parsed file: the local
// name each starter package is imported as, then every selector on it.
func processStartsIn(fset *token.FileSet, f *ast.File, rel string) []processStart {
	local := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := processStarters[path]; !ok {
			continue
		}
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if name == "." {
			// A dot import would hide the package name: count the file.
			return []processStart{{file: rel, line: fset.Position(imp.Pos()).Line, what: "dot import of " + path}}
		}
		local[name] = path
	}
	var out []processStart
	ast.Inspect(f, func(n ast.Node) bool {
		if lit, ok := n.(*ast.CompositeLit); ok {
			if sel, ok := lit.Type.(*ast.SelectorExpr); ok && sel.Sel.Name == "Cmd" {
				if id, ok := sel.X.(*ast.Ident); ok && local[id.Name] == "os/exec" {
					out = append(out, processStart{file: rel, line: fset.Position(lit.Pos()).Line, what: id.Name + ".Cmd{}"})
				}
			}
			return true
		}
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		path, ok := local[id.Name]
		if !ok {
			return true
		}
		for _, fn := range processStarters[path] {
			if sel.Sel.Name == fn {
				out = append(out, processStart{file: rel, line: fset.Position(sel.Pos()).Line, what: id.Name + "." + fn})
			}
		}
		return true
	})
	return out
}

// processAllowedFor returns the processAllowed entry covering file.
func processAllowedFor(file string) (string, bool) {
	for entry := range processAllowed {
		if file == entry || (strings.HasSuffix(entry, "/") && strings.HasPrefix(file, entry)) {
			return entry, true
		}
	}
	return "", false
}

// TestOneDoorForProcesses: no file of the module outside processAllowed
// starts a process (exec.Command, exec.CommandContext, an exec.Cmd
// literal, os.StartProcess, syscall.ForkExec/StartProcess/Exec). The
// failure names every offending file:line. Every file entry of the
// allowlist must still start one, so the list cannot rot into a blanket
// exception.
func TestOneDoorForProcesses(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	starts, err := findProcessStarts(root)
	require.NoError(t, err)
	require.NotEmpty(t, starts, "the walk found no process start at all: it is not looking where the code is")
	var bad []string
	used := map[string]bool{}
	for _, s := range starts {
		if entry, ok := processAllowedFor(s.file); ok {
			used[entry] = true
			continue
		}
		bad = append(bad, fmt.Sprintf("%s:%d: %s", s.file, s.line, s.what))
	}
	sort.Strings(bad)
	require.Empty(t, bad, "processes started outside the sandbox's door: run them through tools.SandboxCommand (or tools.HostCommand, with a reason in processAllowed)")
	for entry := range processAllowed {
		if !strings.HasSuffix(entry, "/") {
			require.True(t, used[entry], "processAllowed names %s, which starts no process any more: remove it", entry)
		}
	}
}

// TestFindProcessStarts: the walker sees a renamed import, a function
// taken as a value, a hand-built exec.Cmd and syscall's starters, and
// nothing in a file that only mentions them in a comment or a string.
func TestFindProcessStarts(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":          "module example.com/m\n",
		"a/a.go":          "package a\n\nimport run \"os/exec\"\n\nfunc A() { _ = run.Command(\"x\") }\n",
		"b/b.go":          "package b\n\nimport \"os/exec\"\n\nvar start = exec.CommandContext\n\nfunc B() *exec.Cmd { return &exec.Cmd{Path: \"/bin/x\"} }\n",
		"c/c.go":          "package c\n\nimport \"syscall\"\n\nfunc C() { _, _ = syscall.ForkExec(\"/bin/x\", nil, nil) }\n",
		"d/d.go":          "package d\n\n// exec.Command is not called here.\nvar s = \"exec.Command\"\n",
		"d/d_test.go":     "package d\n\nimport \"os/exec\"\n\nvar _ = exec.Command\n",
		"e/testdata/e.go": "package e\n\nimport \"os/exec\"\n\nvar _ = exec.Command\n",
	}
	for name, content := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	starts, err := findProcessStarts(root)
	require.NoError(t, err)
	var got []string
	for _, s := range starts {
		got = append(got, fmt.Sprintf("%s:%d: %s", s.file, s.line, s.what))
	}
	sort.Strings(got)
	require.Equal(t, []string{
		"a/a.go:5: run.Command",
		"b/b.go:5: exec.CommandContext",
		"b/b.go:7: exec.Cmd{}",
		"c/c.go:5: syscall.ForkExec",
	}, got)
}
