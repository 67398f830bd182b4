package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// untrustedFields are the fields that hold text the model, a tool or a
// file wrote: a call's arguments, id and name, a message's content and
// reasoning, a result's content, a reason, an event's text, a call's summary.
var untrustedFields = map[string]bool{"Arguments": true, "CallID": true, "Content": true, "Reasoning": true, "Reason": true, "FinalText": true, "Text": true, "Summary": true}

// One door per boundary: every line the CLI writes to a terminal passes
// the model's text through the renderer (untrusted, via oneLine, preview,
// showID, indentRest). This walks the starter's source for a write (a
// fmt.Fprint*) handed one of the untrusted fields as it is, so a new
// command cannot print one raw.
func TestUntrustedFieldsAreNeverWrittenRaw(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	var raw []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !strings.HasPrefix(sel.Sel.Name, "Fprint") {
				return true
			}
			if pkg, ok := sel.X.(*ast.Ident); !ok || pkg.Name != "fmt" {
				return true
			}
			for _, arg := range call.Args[1:] {
				if s, ok := arg.(*ast.SelectorExpr); ok && untrustedFields[s.Sel.Name] {
					raw = append(raw, fset.Position(arg.Pos()).String()+": "+s.Sel.Name)
				}
			}
			return true
		})
	}
	require.Empty(t, raw, "written to the terminal without the renderer (untrusted.Line/Visible, oneLine, preview, showID)")
}
