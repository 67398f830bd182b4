package hostcheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryServerIsWrapped walks the source of every module in the
// repository (the main module, devserver, this one) and checks that each
// HTTP server that code outside tests builds puts this package's check in
// front of its handler: an http.Server literal's Handler and the handler
// given to httptest.NewServer are a call of hostcheck.Wrap, and nothing
// serves through http.ListenAndServe, http.Serve or their TLS forms (they
// take a bare handler). One door: a new service cannot forget the check.
func TestEveryServerIsWrapped(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var servers int
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "testdata", "node_modules", ".longrun-bin", ".longrun":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		servers += checkServers(t, fset, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The console, the codec server, the worker's metrics, the Web UI and
	// the scripted demo model: a walk that finds fewer looked in the
	// wrong place.
	if servers < 5 {
		t.Fatalf("found %d HTTP servers under %s, want at least 5", servers, root)
	}
}

// checkServers reports every server in f without the check, and returns
// how many servers it found.
func checkServers(t *testing.T, fset *token.FileSet, f *ast.File) int {
	t.Helper()
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		switch x := node.(type) {
		case *ast.CompositeLit:
			if !isSel(x.Type, "http", "Server") {
				return true
			}
			n++
			for _, el := range x.Elts {
				if kv, ok := el.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Handler") && isWrap(kv.Value) {
					return true
				}
			}
			t.Errorf("%s: http.Server without Handler: hostcheck.Wrap(...)", fset.Position(x.Pos()))
		case *ast.CallExpr:
			switch {
			case isSel(x.Fun, "http", "ListenAndServe"), isSel(x.Fun, "http", "ListenAndServeTLS"),
				isSel(x.Fun, "http", "Serve"), isSel(x.Fun, "http", "ServeTLS"):
				t.Errorf("%s: serve through an http.Server whose Handler is hostcheck.Wrap(...), not %s", fset.Position(x.Pos()), exprString(x.Fun))
			case isSel(x.Fun, "httptest", "NewServer"), isSel(x.Fun, "httptest", "NewUnstartedServer"), isSel(x.Fun, "httptest", "NewTLSServer"):
				n++
				if len(x.Args) != 1 || !isWrap(x.Args[0]) {
					t.Errorf("%s: %s outside a test without hostcheck.Wrap(...)", fset.Position(x.Pos()), exprString(x.Fun))
				}
			case isIdent(x.Fun, "new") && len(x.Args) == 1 && isSel(x.Args[0], "http", "Server"):
				t.Errorf("%s: new(http.Server): build it as a literal with Handler: hostcheck.Wrap(...)", fset.Position(x.Pos()))
			}
		}
		return true
	})
	return n
}

// isWrap reports whether e is a call of hostcheck.Wrap.
func isWrap(e ast.Expr) bool {
	c, ok := e.(*ast.CallExpr)
	return ok && isSel(c.Fun, "hostcheck", "Wrap")
}

func isSel(e ast.Expr, pkg, name string) bool {
	s, ok := e.(*ast.SelectorExpr)
	return ok && isIdent(s.X, pkg) && s.Sel.Name == name
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func exprString(e ast.Expr) string {
	if s, ok := e.(*ast.SelectorExpr); ok {
		if id, ok := s.X.(*ast.Ident); ok {
			return id.Name + "." + s.Sel.Name
		}
	}
	return "a server"
}
