package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// forbiddenDeps are what workflow code must not be able to reach: starting
// a process, speaking HTTP, or the tools' implementations (the sandbox,
// jobs, the patch engine, web, LSP), whose contract is package toolspec.
var forbiddenDeps = []string{"os/exec", "net/http", "github.com/longrun/longrun/tools"}

// knownDeps are the packages through which workflows/ still reaches a
// forbidden package, each with why; the walk does not go past them. The
// list only shrinks: an entry that no longer leads to a forbidden package
// fails the test, so whoever removes the last path also removes the entry.
var knownDeps = map[string]string{
	// The Temporal SDK speaks gRPC over HTTP/2 (net/http); no workflow
	// can do without it.
	"go.temporal.io/sdk/workflow":  "the Temporal SDK itself (gRPC over net/http)",
	"go.temporal.io/sdk/temporal":  "the Temporal SDK itself (gRPC over net/http)",
	"go.temporal.io/sdk/converter": "the Temporal SDK itself (gRPC over net/http)",
	// The shell parser's brace expansion (shellcmd, for the permission
	// engine's classifier) links os/exec in its internal package; it
	// starts nothing.
	"mvdan.cc/sh/v3/expand": "the shell parser's expansion links os/exec; shellcmd only expands braces",
}

// goPackage is what `go list -json -deps` says of one package.
type goPackage struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

// TestWorkflowReachesNoProcessOrHTTP: no package workflows/ depends on,
// directly or transitively, is os/exec, net/http or the tools'
// implementations, except through knownDeps. It fails when a workflows/
// file imports one of them, or imports a package that does.
func TestWorkflowReachesNoProcessOrHTTP(t *testing.T) {
	t.Parallel()
	pkgs := listDeps(t, ".")
	self := pkgs[0].ImportPath // go list -deps lists the package itself last; see listDeps
	graph := map[string][]string{}
	for _, p := range pkgs {
		graph[p.ImportPath] = p.Imports
	}
	// Walk from workflows, recording how each package was first reached,
	// not entering the known paths.
	via := map[string]string{self: ""}
	queue := []string{self}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if _, known := knownDeps[p]; known {
			continue
		}
		for _, imp := range graph[p] {
			if _, seen := via[imp]; !seen {
				via[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	chain := func(p string) string {
		var c []string
		for ; p != ""; p = via[p] {
			c = append(c, p)
		}
		slices.Reverse(c)
		return strings.Join(c, " -> ")
	}
	for _, f := range forbiddenDeps {
		if _, reached := via[f]; reached {
			t.Errorf("workflows reaches %s: %s", f, chain(f))
		}
	}
	// Every known path is still one: it is reached, and past it lies a
	// forbidden package.
	for k, why := range knownDeps {
		if _, reached := via[k]; !reached {
			t.Errorf("knownDeps lists %s (%s), which workflows no longer imports: remove the entry", k, why)
			continue
		}
		if !reachesAny(graph, k, forbiddenDeps) {
			t.Errorf("knownDeps lists %s (%s), which no longer reaches %v: remove the entry", k, why, forbiddenDeps)
		}
	}
	t.Logf("workflows depends on %d packages; none of %v except through %d known paths", len(via), forbiddenDeps, len(knownDeps))
}

// reachesAny reports whether from depends on any of targets.
func reachesAny(graph map[string][]string, from string, targets []string) bool {
	seen := map[string]bool{}
	stack := []string{from}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if slices.Contains(targets, p) {
			return true
		}
		for _, imp := range graph[p] {
			if !seen[imp] {
				seen[imp] = true
				stack = append(stack, imp)
			}
		}
	}
	return false
}

// listDeps runs `go list -json -deps` on dir (the non-test build), the
// named package first.
func listDeps(t *testing.T, dir string) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "-deps", dir)
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		t.Fatalf("go list -deps %s: %v\n%s", dir, err, ee.Stderr)
	}
	require.NoError(t, err)
	var pkgs []goPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else {
			require.NoError(t, err)
		}
		pkgs = append(pkgs, p)
	}
	require.NotEmpty(t, pkgs)
	slices.Reverse(pkgs) // -deps lists dependencies before what imports them
	return pkgs
}

// toolNamed matches the last name of an expression that holds a tool's
// name: c.Tool, cs.call.Name, tool, name, toolName, spec.Name.
var toolNamed = regexp.MustCompile(`^(?i:tool|name|toolname|toolName)$`)

// toolConst matches a constant naming a tool: permission's old ShellTool,
// tools.ShellName, TodoName, DoomLoopTool.
var toolConst = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*(Tool|Name)$`)

// notToolNames are constants matching toolConst that name no tool: the
// doom-loop check's reserved rule name is matched as a name on purpose
// (rules answer the check by it); the legacy command tool reads records
// written before tools declared kinds (permission.legacyKind).
var notToolNames = map[string]string{
	"DoomLoopTool":      "the rule name that answers the doom-loop check, not a tool",
	"legacyCommandTool": "reads calls recorded before kinds existed",
}

// TestNoDecisionOnAToolName: permission/, guardian/ and workflows/ (tests
// aside) never compare a tool's name with a string literal or a tool-name
// constant (== or != or a switch case): what a tool is, its spec says
// (tools.Spec.SubjectKind, Web, ReadOnly, ...), so a new tool is decided
// like the tools of its kind.
func TestNoDecisionOnAToolName(t *testing.T) {
	t.Parallel()
	var found []string
	for _, dir := range []string{"../permission", "../guardian", "."} {
		found = append(found, nameComparisons(t, dir)...)
	}
	require.Empty(t, found, "decide on the tool's spec (its kind), not on its name")
}

// nameComparisons lists the comparisons of a tool name with a constant in
// the non-test files of dir.
func nameComparisons(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	require.NoError(t, err)
	fset := token.NewFileSet()
	var found []string
	report := func(n ast.Node, what string) {
		found = append(found, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), what))
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				if (holdsToolName(n.X) && isToolConstant(n.Y)) || (holdsToolName(n.Y) && isToolConstant(n.X)) {
					report(n, "compares "+exprText(n.X)+" "+n.Op.String()+" "+exprText(n.Y))
				}
			case *ast.SwitchStmt:
				if n.Tag == nil || !holdsToolName(n.Tag) {
					return true
				}
				for _, s := range n.Body.List {
					for _, e := range s.(*ast.CaseClause).List {
						if isToolConstant(e) {
							report(e, "switch "+exprText(n.Tag)+" case "+exprText(e))
						}
					}
				}
			}
			return true
		})
	}
	return found
}

// holdsToolName reports whether e is a variable or field named like a
// tool's name.
func holdsToolName(e ast.Expr) bool {
	name := lastName(e)
	return name != "" && toolNamed.MatchString(name)
}

// isToolConstant reports whether e is a non-empty string literal or a
// constant named like a tool (ShellTool, tools.ShellName). An empty
// literal asks whether a name is set, which decides nothing about a tool.
func isToolConstant(e ast.Expr) bool {
	if lit, ok := e.(*ast.BasicLit); ok {
		return lit.Kind == token.STRING && lit.Value != `""` && lit.Value != "``"
	}
	name := lastName(e)
	if _, exempt := notToolNames[name]; exempt {
		return false
	}
	return name != "Name" && name != "Tool" && toolConst.MatchString(name)
}

// lastName is the identifier an expression ends in: x, a.b.x, or "".
func lastName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	case *ast.ParenExpr:
		return lastName(e.X)
	}
	return ""
}

// exprText renders a short expression for a report.
func exprText(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.BasicLit:
		return e.Value
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return exprText(e.X) + "." + e.Sel.Name
	}
	return fmt.Sprintf("%T", e)
}

// TestNameComparisonsFound: the check finds each way of deciding on a
// name that testdata/toolnames/bad.go writes, and nothing else there.
func TestNameComparisonsFound(t *testing.T) {
	t.Parallel()
	found := nameComparisons(t, filepath.Join("testdata", "toolnames"))
	require.Len(t, found, 7, strings.Join(found, "\n"))
	for i, want := range []string{
		"name == permission.ShellTool", `c.Tool != "shell"`, `"write" == cs.call.Name`, `switch c.Name case "shell"`,
		"cs.call.Name == tools.ShellName", "switch toolName case TodoName", `switch toolName case "read"`,
	} {
		require.Contains(t, found[i], want)
	}
}
