package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"

	"github.com/longrun/longrun/checkout"
	sm "github.com/longrun/longrun/scriptedmodel"
)

// Control files in an isolated session: an approved command may create
// a missing AGENTS.md in the session's checkout (the sandbox mounts only
// existing control files read-only), but not .longrun/permissions.json:
// the checkout always has a .longrun, empty when the base has none, and
// it is read-only. starter status shows the diff's size with AGENTS.md set
// apart, starter apply refuses the diff until the person names it
// (--include-control), and the branch never holds it: closing the
// checkout leaves it out.
func TestControlFilesStayOffTheBranchAndOutOfApply(t *testing.T) {
	t.Parallel()
	id := "e2e-iso-ctl-" + randHex(3)
	e := isolationEnv(t, func(string) map[string][]sm.Reply {
		return map[string][]sm.Reply{"control": {
			sm.Tools(isoShell("c1", `printf 'obey\n' > AGENTS.md && printf 'code\n' > code.txt; mkdir -p .longrun && printf '{"rules":[{"tool":"*","action":"allow"}]}\n' > .longrun/permissions.json`)),
			sm.Text("made them"),
		}}
	})
	dir := filepath.Join(e.stateDir, checkout.Dir, checkout.Sanitize(id))
	out, err := e.starter("start", "--id", id, "--profile", "auto", "--idle-timeout", "forever", "control files")
	require.NoError(t, err, out)
	waitFor(t, "the command's files in the checkout", 60*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, "code.txt"))
		return err == nil
	})
	require.FileExists(t, filepath.Join(dir, "AGENTS.md"), "an approved command created the missing control file")
	require.NoFileExists(t, filepath.Join(dir, ".longrun", "permissions.json"), "the checkout's .longrun is read-only to a command")
	waitFor(t, "status shows the changes", 30*time.Second, func() bool {
		out, _ = e.starter("status", id)
		return containsAll(out, "1 file changed, +1 -0", "code.txt", "AGENTS.md")
	})

	// The Web UI's current details say it too.
	val, err := tc.QueryWorkflow(context.Background(), id, "", "__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, val.Get(&md))
	require.Contains(t, md.GetCurrentDetails(), "**changes on "+checkout.Branch(id)+":** 1 file changed, +1 -0 (control files left out: AGENTS.md)")
	require.Contains(t, md.GetCurrentDetails(), "files: `code.txt`")

	out, err = e.starter("apply", id)
	require.Error(t, err, out)
	require.Contains(t, out, "touch control files")
	require.Contains(t, out, "--include-control AGENTS.md")
	require.NoFileExists(t, filepath.Join(e.workspace, "code.txt"), "a refused apply changes nothing")
	require.NoFileExists(t, filepath.Join(e.workspace, "AGENTS.md"))

	out, err = e.starter("apply", "--include-control", "AGENTS.md", id)
	require.NoError(t, err, out)
	require.FileExists(t, filepath.Join(e.workspace, "AGENTS.md"), "named control files are applied")
	require.FileExists(t, filepath.Join(e.workspace, "code.txt"))

	out, err = e.starter("cancel", id)
	require.NoError(t, err, out)
	waitFor(t, "the checkout closed", 60*time.Second, func() bool {
		_, err := os.Stat(dir)
		return os.IsNotExist(err)
	})
	files := gitOut(t, e.workspace, "ls-tree", "-r", "--name-only", checkout.Branch(id))
	require.Contains(t, files, "code.txt")
	require.NotContains(t, files, "AGENTS.md", "the branch never holds a control file")
	require.NotContains(t, files, ".longrun")
	require.Contains(t, gitOut(t, e.workspace, "log", "-1", "--format=%B", checkout.Branch(id)), "left out of this commit: AGENTS.md")
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
