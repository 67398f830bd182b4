package lsptest

import "testing"

// The servers installed with npm (make lsp-node) and the versions pinned
// there; the Makefile's NODE_LSP names the same.
const (
	PyrightVersion    = "1.1.414"
	TSServerVersion   = "5.1.3"
	TypeScriptVersion = "5.9.3"
	nodeBin           = "../.longrun-bin/node/node_modules/.bin/"
	npmInstall        = "npm install --prefix .longrun-bin/node pyright@" + PyrightVersion +
		" typescript-language-server@" + TSServerVersion + " typescript@" + TypeScriptVersion
)

// Pyright finds pyright-langserver (run with --stdio): LONGRUN_PYRIGHT,
// then .longrun-bin/node (make test installs it there), then the PATH.
// Without one the test skips loudly, or fails when
// LONGRUN_REQUIRE_PYRIGHT=1 or LONGRUN_REQUIRE_LSP=1 (.ci/run).
func Pyright(t testing.TB) string {
	t.Helper()
	return find(t, server{
		name: "pyright-langserver", env: "LONGRUN_PYRIGHT", bin: nodeBin + "pyright-langserver",
		require: "LONGRUN_REQUIRE_PYRIGHT", install: npmInstall,
	})
}

// TypeScript finds typescript-language-server (run with --stdio), which
// finds the typescript package installed beside it: LONGRUN_TSSERVER,
// then .longrun-bin/node, then the PATH. It skips or fails as Pyright
// does (LONGRUN_REQUIRE_TSSERVER=1 or LONGRUN_REQUIRE_LSP=1).
func TypeScript(t testing.TB) string {
	t.Helper()
	return find(t, server{
		name: "typescript-language-server", env: "LONGRUN_TSSERVER", bin: nodeBin + "typescript-language-server",
		require: "LONGRUN_REQUIRE_TSSERVER", install: npmInstall,
	})
}
