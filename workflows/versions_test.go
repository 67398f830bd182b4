package workflows

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestVersionsFrozen freezes what was released: the change ids in
// testdata/versions.golden come first in changeIDs, in the same order, and
// every baseline there covers exactly what it covers in versions.go. A
// change after the first release appends its id to both; it never edits
// one already there.
func TestVersionsFrozen(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("testdata", "versions.golden"))
	require.NoError(t, err)
	var golden struct {
		Changes   []string            `json:"changes"`
		Baselines map[string][]string `json:"baselines"`
	}
	require.NoError(t, json.Unmarshal(raw, &golden))
	require.GreaterOrEqual(t, len(changeIDs), len(golden.Changes), "a released change id was removed")
	require.Equal(t, golden.Changes, changeIDs[:len(golden.Changes)], "released change ids are append-only")
	require.Equal(t, len(slices.Compact(slices.Sorted(slices.Values(changeIDs)))), len(changeIDs), "a change id is listed twice")
	for id, covers := range golden.Baselines {
		require.Equal(t, covers, baselines[id], "baseline %s: what a released baseline covers is frozen", id)
	}
	for id, covers := range baselines {
		require.Contains(t, golden.Baselines, id, "baseline %s: freeze it in testdata/versions.golden", id)
		for _, c := range covers {
			require.Contains(t, changeIDs, c, "baseline %s covers an id that is not in changeIDs", id)
		}
	}
}

// TestGetVersionIDsAreListed: every workflow.GetVersion in the package
// asks a constant whose value is in changeIDs or is a baseline, so no
// change id can ship without being frozen at the next release.
func TestGetVersionIDsAreListed(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	consts := map[string]string{}
	var asked []ast.Expr
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if i < len(n.Values) {
						if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							consts[name.Name], _ = strconv.Unquote(lit.Value)
						}
					}
				}
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "GetVersion" && len(n.Args) > 1 {
					asked = append(asked, n.Args[1])
				}
			}
			return true
		})
	}
	for _, arg := range asked {
		id, ok := arg.(*ast.Ident)
		require.True(t, ok, "%s: GetVersion must ask a named constant", fset.Position(arg.Pos()))
		v, ok := consts[id.Name]
		require.True(t, ok, "%s: %s is not a string constant of this package", fset.Position(arg.Pos()), id.Name)
		_, isBaseline := baselines[v]
		require.True(t, slices.Contains(changeIDs, v) || isBaseline, "%s: change id %q is not in changeIDs", fset.Position(arg.Pos()), v)
	}
}
