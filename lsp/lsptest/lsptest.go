// Package lsptest finds the language servers that tests run against (gopls,
// pyright, typescript-language-server), one way for every package whose
// tests talk to a real language server.
package lsptest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Gopls finds gopls: LONGRUN_GOPLS, then the repository's .longrun-bin
// (where make test installs it; tests run one directory below the
// repository's top), then the PATH. Without one the test skips loudly, or
// fails when LONGRUN_REQUIRE_GOPLS=1 (.ci/run): a CI run must not pass
// with the language-server tests silently not run.
func Gopls(t testing.TB) string {
	t.Helper()
	return find(t, server{
		name: "gopls", env: "LONGRUN_GOPLS", bin: "../.longrun-bin/gopls", require: "LONGRUN_REQUIRE_GOPLS",
		install: "GOBIN=$PWD/.longrun-bin go install golang.org/x/tools/gopls@v0.23.0",
	})
}

// server says where one server is looked for and how it is installed.
type server struct {
	name    string // the program, looked up on the PATH last
	env     string // a variable naming it first
	bin     string // where make test installs it, from a package directory
	require string // a variable that, set to 1, fails a test that cannot find it
	install string // what the skip message tells a person to run
}

func find(t testing.TB, s server) string {
	t.Helper()
	if p := os.Getenv(s.env); p != "" {
		return p
	}
	if p, err := filepath.Abs(s.bin); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath(s.name); err == nil {
		return p
	}
	msg := s.name + " is not installed: the language-server tests that need it DO NOT RUN (make test installs it: " + s.install + ")"
	if os.Getenv(s.require) == "1" || os.Getenv("LONGRUN_REQUIRE_LSP") == "1" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPED LOUDLY: " + msg)
	return ""
}
