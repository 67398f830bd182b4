package tools

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A server installed with npm under a hidden directory (the home, /tmp)
// needs its whole node_modules back in the sandbox, not only the file
// its .bin link names: the script loads its package and dependencies
// from there (pyright-langserver failed with "Cannot find module
// './dist/pyright-langserver'" from a checkout under /tmp).
func TestNodeModulesOfAProgram(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ real, want string }{
		{"/home/u/.npm/lib/node_modules/pyright/langserver.index.js", "/home/u/.npm/lib/node_modules"},
		{"/tmp/x/node_modules/a/node_modules/b/cli.mjs", "/tmp/x/node_modules/a/node_modules"},
		{"/home/u/go/bin/gopls", ""},
		{"/usr/bin/node", ""},
	} {
		require.Equal(t, tc.want, nodeModules(tc.real), tc.real)
	}
}
