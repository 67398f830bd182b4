// Package lsptest finds the gopls that tests run against, one way for
// every package whose tests talk to a real language server.
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
	if p := os.Getenv("LONGRUN_GOPLS"); p != "" {
		return p
	}
	if p, err := filepath.Abs("../.longrun-bin/gopls"); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	msg := "gopls is not installed: the language-server tests DO NOT RUN (make test installs it: GOBIN=$PWD/.longrun-bin go install golang.org/x/tools/gopls@v0.23.0)"
	if os.Getenv("LONGRUN_REQUIRE_GOPLS") == "1" {
		t.Fatal(msg)
	}
	t.Skip("SKIPPED LOUDLY: " + msg)
	return ""
}
