#!/usr/bin/env bash
# Says, in one loud line each, which security, browser and PostgreSQL
# tests will not run on this machine and why. `go test` prints a t.Skip
# only with -v, so without this a machine missing bwrap would pass `make
# test` having never exercised the sandbox. .ci/run installs everything
# named here; on your own machine: apt-get install bubblewrap passt
# chromium postgresql.
missing=0
loud() { printf '\n!!! make test: %s\n\n' "$*" >&2; missing=1; }

if ! command -v bwrap >/dev/null 2>&1; then
	loud "bwrap (bubblewrap) is not installed: the sandbox tests (tools) and the hostile-model suite with the sandbox on and the isolation tests and the lost-worker checkpoint test (e2e) DO NOT RUN. Install the bubblewrap package (.ci/run does)."
elif ! bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --unshare-net true >/dev/null 2>&1; then
	loud "bwrap is installed but cannot create namespaces here: the sandbox tests and the hostile-model suite with the sandbox on DO NOT RUN, and a worker here refuses unapproved shell commands."
fi
if ! command -v pasta >/dev/null 2>&1; then
	loud "pasta (package passt) is not installed: the tests of sandboxed commands with network: true DO NOT RUN, and such sessions' commands fail. Install the passt package (.ci/run does)."
fi
if ! command -v chromium >/dev/null 2>&1 && [ -z "${LONGRUN_CHROMIUM:-}" ]; then
	loud "chromium is not installed: the browser tests (Web UI, console) DO NOT RUN (.ci/run installs it)."
fi
if ! command -v python3 >/dev/null 2>&1; then
	loud "python3 is not installed: the tests of MCP servers run in a session's checkout (mcp TestCheckout*, activities TestCheckoutMCPCallRunsInTheCheckout, e2e TestIsolatedSessionMCPCallSeesItsCheckout) DO NOT RUN: their probe server is a python3 script."
fi
for tool in git curl ip; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		loud "$tool is not installed: the sandbox tests that need it (git neutralisation: git; host sockets and the network test host: curl, ip from iproute2) DO NOT RUN."
	fi
done
pg_bin=${LONGRUN_POSTGRES_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
if [ -z "$pg_bin" ] && command -v initdb >/dev/null 2>&1; then
	pg_bin=$(dirname "$(command -v initdb)")
fi
if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ]; then
	loud "PostgreSQL's server binaries (initdb, pg_ctl) are not installed: the e2e tests against Temporal on PostgreSQL (make test-postgres) DO NOT RUN. Install the postgresql package (.ci/run does), or set LONGRUN_POSTGRES_BIN."
elif [ "$(id -u)" -eq 0 ] && ! command -v runuser >/dev/null 2>&1 && ! command -v setpriv >/dev/null 2>&1; then
	loud "running as root without runuser or setpriv: PostgreSQL refuses root and cannot be started as another user, so the e2e tests against Temporal on PostgreSQL DO NOT RUN."
fi
if [ -n "${LONGRUN_TEMPORAL_CLI:-}" ] && [ ! -x "$LONGRUN_TEMPORAL_CLI" ]; then
	loud "the temporal CLI ($LONGRUN_TEMPORAL_CLI) did not build: the test that decodes history through the codec server with it DOES NOT RUN (go install github.com/temporalio/cli/cmd/temporal@v1.5.1)."
fi
if [ -n "${LONGRUN_GOPLS:-}" ] && [ ! -x "$LONGRUN_GOPLS" ]; then
	loud "gopls ($LONGRUN_GOPLS) did not build: the language-server tests (lsp, tools TestLSP*, e2e TestLanguageServerOnAGoModule) DO NOT RUN (GOBIN=\$PWD/.longrun-bin go install golang.org/x/tools/gopls@v0.23.0)."
fi
if [ -n "${LONGRUN_NODE_LSP:-}" ]; then
	for server in pyright-langserver typescript-language-server; do
		if [ ! -x "$LONGRUN_NODE_LSP/node_modules/.bin/$server" ]; then
			loud "$server is not installed in $LONGRUN_NODE_LSP: the tests of language servers other than gopls (lsp TestPyright*/TestTypeScript*, tools TestLSPToolsOnAPythonProject, e2e TestLanguageServerConfiguredInLSPJSON) DO NOT RUN (make lsp-node; it needs node and npm)."
		fi
	done
fi
exit 0
