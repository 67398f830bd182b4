package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The README's main job (`make demo`) works offline: the scripted model
// asks for a write and a shell command, the demo approves them, the
// session completes and NOTES.md exists.
func TestDemoScript(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	port := freePort(t)
	demo := func() string {
		t.Helper()
		cmd := exec.Command(filepath.Join("..", "scripts", "demo.sh"))
		cmd.Env = append(os.Environ(),
			"BIN="+binDir,
			"DEVSERVER="+devserverPath,
			"LONGRUN_PORT="+strconv.Itoa(port),
			"LONGRUN_UI_PORT="+strconv.Itoa(freePort(t)),
			"LONGRUN_STATE="+state,
			"DEMO_EXIT=1",
			"OPENAI_API_KEY=",
		)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
		require.Contains(t, string(out), "using the scripted demo model")
		require.Regexp(t, `status +completed`, string(out))
		require.Contains(t, string(out), "Web UI: http://127.0.0.1:")
		// A second terminal needs the address of a non-default port.
		require.Contains(t, string(out), "export TEMPORAL_ADDRESS=127.0.0.1:"+strconv.Itoa(port))
		require.FileExists(t, filepath.Join(state, "demo-workspace", "NOTES.md"))
		return string(out)
	}
	first := demo()
	require.NotContains(t, first, "has not been read in this session")
	// The second run finds the NOTES.md the first one wrote: it reads it
	// before replacing it, so the approved write does not fail.
	second := demo()
	require.Contains(t, second, "- read: ")
	require.NotContains(t, second, "has not been read in this session")
	require.NotContains(t, second, "is_error")
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
