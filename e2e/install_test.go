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
	for _, b := range []string{"longrun", "longrun-worker", "longrun-devserver"} {
		require.FileExists(t, filepath.Join(bin, b))
	}
	help, err := exec.Command(filepath.Join(bin, "longrun"), "help").CombinedOutput()
	require.NoError(t, err, string(help))
	require.True(t, strings.HasPrefix(string(help), "Usage: longrun [global flags] COMMAND"), string(help))
	help, _ = exec.Command(filepath.Join(bin, "longrun-worker"), "--help").CombinedOutput()
	require.Contains(t, string(help), "-workspace string")

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
