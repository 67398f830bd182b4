package workflows

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

// TestNoToolNamesInTheWorkflow: what the session needs to know about a
// built-in tool is declared on its spec (tools.Spec's call metadata), so
// adding a tool needs only its own files and tools.Builtin. The workflow's
// code must not name one: no tools.*Name identifier and no string literal
// equal to a built-in's name. Tools the session answers itself (todo,
// tool_search, task) are its own and may be named.
func TestNoToolNamesInTheWorkflow(t *testing.T) {
	t.Parallel()
	builtin := map[string]bool{}
	for _, tl := range tools.Builtin(tools.DefaultConfig()) {
		builtin[tl.Spec().Name] = true
	}
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var found []string
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		file, err := parser.ParseFile(fset, f, src, 0)
		require.NoError(t, err)
		checked++
		toolsPkg := "tools"
		for _, imp := range file.Imports {
			if imp.Path.Value == `"github.com/longrun/longrun/tools"` && imp.Name != nil {
				toolsPkg = imp.Name.Name
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == toolsPkg && strings.HasSuffix(n.Sel.Name, "Name") {
					found = append(found, fset.Position(n.Pos()).String()+": "+toolsPkg+"."+n.Sel.Name)
				}
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				if v, err := strconv.Unquote(n.Value); err == nil && builtin[v] {
					found = append(found, fset.Position(n.Pos()).String()+": "+n.Value)
				}
			}
			return true
		})
	}
	require.Positive(t, checked, "no workflow files found")
	require.Empty(t, found, "the workflow names built-in tools; declare what it needs on the tool's Spec instead")
}
