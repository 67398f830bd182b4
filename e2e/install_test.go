package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// make install puts longrun, longrun-worker and longrun-devserver in
// $(DESTDIR)$(PREFIX)/bin, and the CLI names itself longrun in its help.
func TestMakeInstallPutsLongrunOnThePath(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("!!! make is not installed: make install is not tested")
	}
	dest := t.TempDir()
	cmd := exec.Command("make", "-C", "..", "-s", "install", "DESTDIR="+dest, "PREFIX=/usr/local")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	bin := filepath.Join(dest, "usr", "local", "bin")
	require.Contains(t, string(out), "installed longrun, longrun-worker and longrun-devserver in "+bin)
	requireProgress(t, string(out), "longrun", "longrun-worker", "longrun-devserver")
	for _, b := range []string{"longrun", "longrun-worker", "longrun-devserver"} {
		require.FileExists(t, filepath.Join(bin, b))
	}
	help, err := exec.Command(filepath.Join(bin, "longrun"), "help").CombinedOutput()
	require.NoError(t, err, string(help))
	require.True(t, strings.HasPrefix(string(help), "Usage: longrun [global flags] COMMAND"), string(help))
	help, _ = exec.Command(filepath.Join(bin, "longrun-worker"), "--help").CombinedOutput()
	require.Contains(t, string(help), "-workspace dir", "the installed longrun-worker is the one with --workspace")

	// Without PREFIX it installs where go install would: $GOBIN here,
	// and says so when that is not on the PATH.
	gobin := t.TempDir()
	cmd = exec.Command("make", "-C", "..", "-n", "install")
	cmd.Env = append(os.Environ(), "GOBIN="+gobin)
	out, err = cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "go build -o "+gobin+"/longrun ./starter")
	require.Contains(t, string(out), "go build -o "+gobin+"/longrun-worker ./worker")
}

// requireProgress checks that an install said, before building each
// program, which one and how long it takes: one line each, in order.
func requireProgress(t *testing.T, out string, programs ...string) {
	t.Helper()
	last := -1
	for _, p := range programs {
		i := strings.Index(out, p+": building ")
		require.Greater(t, i, last, "no progress line for %s, or out of order:\n%s", p, out)
		line, _, _ := strings.Cut(out[i:], "\n")
		require.Regexp(t, `\((.* )?(minute|minutes|seconds)\b.*\)$`, line, "the line says how long")
		last = i
	}
}

// make install-cli installs the CLI and the worker, not the embedded
// server, for a person who already runs Temporal, and says so.
func TestMakeInstallCLISkipsTheServer(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("!!! make is not installed: make install-cli is not tested")
	}
	dest := t.TempDir()
	out, err := exec.Command("make", "-C", "..", "-s", "install-cli", "BINDIR="+dest).CombinedOutput()
	require.NoError(t, err, string(out))
	requireProgress(t, string(out), "longrun", "longrun-worker")
	require.NotContains(t, string(out), "longrun-devserver: building")
	require.Contains(t, string(out), "installed longrun and longrun-worker in "+dest)
	require.FileExists(t, filepath.Join(dest, "longrun"))
	require.FileExists(t, filepath.Join(dest, "longrun-worker"))
	require.NoFileExists(t, filepath.Join(dest, "longrun-devserver"))
}
