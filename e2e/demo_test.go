package e2e

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
)

// Issue 29, must show 1: `make demo` as a newcomer runs it, in a fresh
// git clone of this commit (what is not committed is not tested here),
// with the embedded server built once (LONGRUN_DEVSERVER) and offline
// (the scripted demo model). The session works in the demo's own
// repository under the state directory, waits for the approval the demo
// gives, and the demo ends with the diff of NOTES.md; the clone's own git
// is left as it was (no session branch, nothing changed). Then the demo
// must fail loudly, exit 1: when its session changes nothing (its base
// moved to a commit holding what it writes) and when the workspace
// cannot be read.
func TestDemoScript(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("make demo needs make: %v", err)
	}
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	head := strings.TrimSpace(gitOut(t, root, "rev-parse", "HEAD"))
	clone := filepath.Join(t.TempDir(), "longrun")
	out, err := exec.Command("git", "clone", "-q", "--no-checkout", root, clone).CombinedOutput()
	require.NoError(t, err, "%s", out)
	gitOut(t, clone, "checkout", "-q", "--detach", head)
	ws := filepath.Join(clone, ".longrun", "demo-workspace")
	config := t.TempDir() // not the developer's own ~/.config/longrun

	demo := func(cmd ...string) (string, error) {
		t.Helper()
		c := exec.Command(cmd[0], append(cmd[1:], "make", "-C", clone, "demo")...)
		c.Env = append(os.Environ(),
			"LONGRUN_DEVSERVER="+devserverPath,
			"LONGRUN_PORT="+strconv.Itoa(freePort(t)),
			"LONGRUN_UI_PORT="+strconv.Itoa(freePort(t)),
			"LONGRUN_STATE=", // the default: .longrun in the clone
			"LONGRUN_CONFIG_DIR="+config,
			"LONGRUN_SKILLS_DIRS=off",
			"DEMO_EXIT=1",
			"OPENAI_API_KEY=",
		)
		b, err := c.CombinedOutput()
		return string(b), err
	}
	cloneUntouched := func() {
		t.Helper()
		require.Empty(t, strings.TrimSpace(gitOut(t, clone, "branch", "--list", "longrun/*")), "a session branch in the Longrun clone")
		require.Empty(t, strings.TrimSpace(gitOut(t, clone, "status", "--porcelain")), "the demo changed the Longrun clone")
		require.Len(t, strings.Split(strings.TrimSpace(gitOut(t, clone, "worktree", "list")), "\n"), 1, "a worktree of the Longrun clone")
		require.Equal(t, head, strings.TrimSpace(gitOut(t, clone, "rev-parse", "HEAD")))
	}
	sessionOf := regexp.MustCompile(`Session (\S+) started`)

	first, err := demo("env")
	require.NoError(t, err, first)
	require.Contains(t, first, "using the scripted demo model")
	require.Contains(t, first, "Approving as the demo's person would: longrun approve")
	require.Regexp(t, `approved \S+ \(write\)`, first)
	require.Regexp(t, `status +completed`, first)
	require.Contains(t, first, "Web UI: http://127.0.0.1:")
	require.Contains(t, first, "export TEMPORAL_ADDRESS=127.0.0.1:")
	// The diff the demo ends with shows the change.
	require.Contains(t, first, "+++ b/NOTES.md\n@@ -0,0 +1,3 @@\n+# Written by the Longrun demo\n")
	require.Contains(t, first, "The demo worked")
	require.NotContains(t, first, "FAILED")
	m := sessionOf.FindStringSubmatch(first)
	require.NotNil(t, m, first)
	// The workspace is a repository of its own, holding the session's
	// branch; the clone holds nothing of the session.
	require.Equal(t, ws, strings.TrimSpace(gitOut(t, ws, "rev-parse", "--show-toplevel")))
	branch := checkout.Branch(m[1])
	require.Contains(t, gitOut(t, ws, "show", branch+":NOTES.md"), "# Written by the Longrun demo")
	cloneUntouched()

	// A session that changes nothing: the base already holds what the
	// demo writes (the first session's branch). It reads NOTES.md before
	// it writes it, completes, and the demo says it did nothing.
	gitOut(t, ws, "tag", "-f", "longrun-demo-base", branch)
	nothing, err := demo("env")
	require.Error(t, err, nothing)
	require.Regexp(t, `status +completed`, nothing)
	require.Contains(t, nothing, "- read: ")
	require.NotContains(t, nothing, "has not been read in this session")
	require.Contains(t, nothing, "!!! make demo FAILED: session ")
	require.Contains(t, nothing, "its diff does not write NOTES.md")
	require.NotContains(t, nothing, "The demo worked")
	cloneUntouched()

	// A workspace nobody can read: root reads anything, so the demo runs
	// without the capabilities that let it.
	require.NoError(t, os.Chmod(ws, 0))
	t.Cleanup(func() { _ = os.Chmod(ws, 0o755) })
	asUser := []string{"env"}
	if os.Geteuid() == 0 {
		asUser = []string{"setpriv", "--bounding-set", "-dac_override,-dac_read_search"}
	}
	unreadable, err := demo(asUser...)
	require.Error(t, err, unreadable)
	require.Contains(t, unreadable, "!!! make demo FAILED: the demo workspace "+ws+" cannot be read")
	require.NotContains(t, unreadable, "The demo worked")
	require.NoError(t, os.Chmod(ws, 0o755))
	cloneUntouched()
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
