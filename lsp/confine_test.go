package lsp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConfineToTheRoot: what a server says about files outside the
// workspace root does not reach the model: publications, locations,
// symbols elsewhere, and diagnostics or hovers quoting a path elsewhere
// (the cgo `#include "/etc/secret"` finding); a URL is not a path.
func TestConfineToTheRoot(t *testing.T) {
	t.Parallel()
	root := "/work/ws"
	for text, outside := range map[string]bool{
		`could not import /etc/longrun/keys (open failed)`:         true,
		`In file included from "/home/w/.config/longrun/mcp.json"`: true,
		`see /work/ws/a.go:3`:                      false,
		`see https://pkg.go.dev/fmt/print#Println`: false,
		`a/b /x is prose`:                          false,
		`undefined: Total`:                         false,
		`path=/work/other/b.go`:                    true,
		`/work/ws/../other/secret`:                 true,
	} {
		require.Equal(t, outside, namesOutside(root, text), text)
	}
	require.Equal(t, []Diagnostic{{Message: "undefined: x"}},
		confineDiagnostics(root, []Diagnostic{{Message: "undefined: x"}, {Message: `"/etc/passwd": root:x:0:0`}}))
	require.Equal(t, []Location{{URI: "file:///work/ws/a.go"}},
		confineLocations(root, []Location{{URI: "file:///work/ws/a.go"}, {URI: "file:///usr/local/go/src/fmt/print.go"}, {URI: "file:///work/ws2/b.go"}}))
	syms := confineSymbols(root, []DocumentSymbol{
		{Name: "A", Location: &Location{URI: "file:///work/ws/a.go"}},
		{Name: "B", Location: &Location{URI: "file:///root/.ssh/x.go"}},
		{Name: "C", Detail: "from /etc/shadow", Children: []DocumentSymbol{{Name: "D"}}},
		{Name: "E", Children: []DocumentSymbol{{Name: "F", Detail: "/var/lib/longrun/state"}, {Name: "G"}}},
	})
	require.Len(t, syms, 2)
	require.Equal(t, "A", syms[0].Name)
	require.Equal(t, []DocumentSymbol{{Name: "G"}}, syms[1].Children)

	c := &Client{root: root, diags: map[string]published{}, changed: make(chan struct{})}
	c.publish(publishDiagnosticsParams{URI: "file:///etc/x.go", Diagnostics: []Diagnostic{{Message: "secret"}}})
	c.publish(publishDiagnosticsParams{URI: "file:///work/ws/a.go", Diagnostics: []Diagnostic{{Message: "ok"}, {Message: "reading /etc/shadow: x"}}})
	require.Equal(t, map[string][]Diagnostic{"/work/ws/a.go": {{Message: "ok"}}}, c.AllDiagnostics())
}
