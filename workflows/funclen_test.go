package workflows

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxFuncLines bounds a function of the driver: a longer one is doing more
// than one named step, and the decision belongs in package session.
const maxFuncLines = 60

// TestDriverFunctionsAreShort: no function in workflows/ (tests aside) is
// longer than maxFuncLines, and no two free functions or methods of
// different receivers share a name unless they implement one interface
// method (selfTool's offer, spec and answer).
func TestDriverFunctionsAreShort(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	interfaceMethods := map[string]bool{"offer": true, "spec": true, "answer": true}
	where := map[string][]string{}
	var long []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			pos := fset.Position(fd.Pos())
			if n := fset.Position(fd.End()).Line - pos.Line + 1; n > maxFuncLines {
				long = append(long, pos.String()+" "+fd.Name.Name)
			}
			if !interfaceMethods[fd.Name.Name] {
				where[fd.Name.Name] = append(where[fd.Name.Name], pos.String())
			}
		}
	}
	require.Empty(t, long, "functions longer than %d lines", maxFuncLines)
	for name, at := range where {
		require.Len(t, at, 1, "%s is defined more than once: %v", name, at)
	}
}

// TestActivityCallsInOneFile: every activity, local activity and child
// workflow the session starts is started in activity.go, with its options,
// so what a session asks of workers reads in one place.
func TestActivityCallsInOneFile(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	starts := map[string]bool{"ExecuteActivity": true, "ExecuteLocalActivity": true, "ExecuteChildWorkflow": true,
		"WithActivityOptions": true, "WithLocalActivityOptions": true, "WithChildOptions": true}
	var elsewhere []string
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "activity.go" {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && starts[sel.Sel.Name] {
				elsewhere = append(elsewhere, fset.Position(sel.Pos()).String()+" "+sel.Sel.Name)
			}
			return true
		})
	}
	require.Empty(t, elsewhere, "start activities and children in activity.go")
}
