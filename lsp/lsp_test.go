package lsp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/lsp/lsptest"
)

// goModule writes a module of files into a new directory.
func goModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files["go.mod"] = "module example.com/m\n\ngo 1.22\n"
	for name, text := range files {
		p := filepath.Join(dir, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	}
	return dir
}

func TestGoplsDiagnosticsDefinitionRename(t *testing.T) {
	gopls := lsptest.Gopls(t)
	root := goModule(t, map[string]string{
		"a.go": "package m\n\n// Greet says hello.\nfunc Greet(name string) string { return \"hi \" + name }\n",
		"b.go": "package m\n\nfunc twice() string { return Greet(\"a\") + Greet(\"b\") }\n",
		"c.go": "package m\n\nvar _ = Greet\n",
	})
	m := NewManager(Config{Launch: testLaunch, Servers: map[string]ServerConfig{GoplsName: Gopls(gopls)}, DiagnosticsWait: "20s"})
	defer m.Close()
	ctx := context.Background()

	// An edit that breaks the type check is reported with its line.
	b := filepath.Join(root, "b.go")
	require.NoError(t, os.WriteFile(b, []byte("package m\n\nfunc twice() int { return Greet(\"a\") }\n"), 0o644))
	out := m.AfterEdit(ctx, root, []string{b})
	require.Contains(t, out, "b.go:3:")
	require.Contains(t, out, "error:")
	// The fix clears it.
	require.NoError(t, os.WriteFile(b, []byte("package m\n\nfunc twice() string { return Greet(\"a\") + Greet(\"b\") }\n"), 0o644))
	out = m.AfterEdit(ctx, root, []string{b})
	require.NotContains(t, out, "error:")
	require.Contains(t, out, "no errors")

	// What an edit breaks in other files is reported too (errors only).
	a := filepath.Join(root, "a.go")
	aText, _ := os.ReadFile(a)
	require.NoError(t, os.WriteFile(a, []byte(strings.Replace(string(aText), "func Greet", "func Hail", 1)), 0o644))
	out = m.AfterEdit(ctx, root, []string{a})
	require.Contains(t, out, "gopls reports no errors or warnings in a.go; errors in other files now:\n", out)
	require.Contains(t, out, "b.go:3:30: error: undefined: Greet")
	require.Contains(t, out, "c.go:3:9: error: undefined: Greet")
	require.NoError(t, os.WriteFile(a, aText, 0o644))
	require.NotContains(t, m.AfterEdit(ctx, root, []string{a}), "error:")

	// A deleted file is closed and not waited for.
	require.NoError(t, os.Remove(filepath.Join(root, "c.go")))
	require.Equal(t, "", m.AfterEdit(ctx, root, []string{filepath.Join(root, "c.go")}))
	require.NoError(t, os.WriteFile(filepath.Join(root, "c.go"), []byte("package m\n\nvar _ = Greet\n"), 0o644))

	c, _, err := m.ForFile(ctx, root, b)
	require.NoError(t, err)
	text, _ := os.ReadFile(b)
	pt, ok := FindSymbol(string(text), "Greet", 3)
	require.True(t, ok)
	locs, err := c.Definition(ctx, b, ToPosition(string(text), pt))
	require.NoError(t, err)
	require.Len(t, locs, 1)
	require.True(t, strings.HasSuffix(locs[0].URI, "/a.go"), locs)
	require.Equal(t, 3, locs[0].Range.Start.Line)

	refs, err := c.References(ctx, b, ToPosition(string(text), pt))
	require.NoError(t, err)
	require.Len(t, refs, 4, "the declaration, two calls in b.go, one use in c.go")

	changed, err := c.Rename(ctx, b, ToPosition(string(text), pt), "Hello")
	require.NoError(t, err)
	require.Len(t, changed, 3)
	require.Contains(t, changed[filepath.Join(root, "c.go")], "var _ = Hello")

	m.CloseRoot(root)
	require.Empty(t, m.Running(root))
	require.False(t, c.Alive())
}

func TestSlowServerNeverHoldsTheEditLonger(t *testing.T) {
	// A "server" that reads and never answers: the start times out within
	// the cap and the report says diagnostics are not available.
	root := goModule(t, map[string]string{"a.go": "package m\n"})
	m := NewManager(Config{Launch: testLaunch, Servers: map[string]ServerConfig{"mute": {Command: "sleep", Args: []string{"60"}, Patterns: []string{"*.go"}}}, DiagnosticsWait: "300ms"})
	defer m.Close()
	start := time.Now()
	out := m.AfterEdit(context.Background(), root, []string{filepath.Join(root, "a.go")})
	require.Less(t, time.Since(start), 2*time.Second)
	require.Contains(t, out, "Diagnostics not available for a.go")
}

func TestFormatBoundsAndOrders(t *testing.T) {
	var ds []Diagnostic
	for i := 0; i < 30; i++ {
		ds = append(ds, Diagnostic{Range: Range{Start: Position{Line: i}}, Severity: SeverityWarning, Message: "w"})
	}
	ds = append(ds, Diagnostic{Range: Range{Start: Position{Line: 40, Character: 2}}, Severity: SeverityError, Message: "bad", Source: "compiler"},
		Diagnostic{Range: Range{Start: Position{Line: 40, Character: 2}}, Severity: SeverityError, Message: "bad", Source: "compiler"})
	out := Format("/r", map[string][]Diagnostic{"/r/x.go": ds}, SeverityWarning)
	lines := strings.Split(out, "\n")
	require.Equal(t, "x.go:41:3: error: bad [compiler]", lines[0], "errors first, duplicates once")
	require.Len(t, lines, MaxPerFile+1)
	require.Equal(t, "(11 more not shown)", lines[MaxPerFile])
}

func TestPositionsCountCharacters(t *testing.T) {
	text := "x := \"é😀\" + y\n"
	p := ToPosition(text, Point{Line: 1, Column: 14})
	require.Equal(t, Position{Line: 0, Character: 14}, p, "😀 is two UTF-16 units")
	require.Equal(t, Point{Line: 1, Column: 14}, ToPoint(text, p))
	dir := t.TempDir()
	f := filepath.Join(dir, "u.go")
	require.NoError(t, os.WriteFile(f, []byte(text), 0o644))
	out := Format(dir, map[string][]Diagnostic{f: {{Range: Range{Start: p}, Message: "undefined: y"}}}, SeverityWarning)
	require.Equal(t, "u.go:1:14: error: undefined: y", out, "diagnostics name the column in characters")
	pt, ok := FindSymbol("var xy, y = 1, 2\n", "y", 0)
	require.True(t, ok)
	require.Equal(t, Point{Line: 1, Column: 9}, pt, "whole words only")
}
