package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// The worker binary refuses a state directory inside its workspace, naming
// both, and exits before it dials Temporal.
func TestWorkerRefusesStateInWorkspace(t *testing.T) {
	t.Parallel()
	ws, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	cmd := exec.Command(filepath.Join(binDir, "worker"), "--workspace", ws, "--state-dir", filepath.Join(ws, ".longrun", "state"), "--config", t.TempDir())
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+temporalAddr)
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the worker must exit")
	require.Contains(t, string(out), "worker: the state directory "+filepath.Join(ws, ".longrun", "state")+" lies inside the workspace "+ws)
	require.NoDirExists(t, filepath.Join(ws, ".longrun", "state"))
}

// A command's long output is cut for the model and saved in the worker's
// state directory, capped by --max-spill-bytes; nothing lands in the
// workspace.
func TestSpillInStateDirCapped(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_big", Name: "shell", Arguments: `{"command": "seq 1 200000"}`}),
		sm.Text("done"),
	)
	e.stopWorker()
	// No sweep while the test reads the spill of the session that ended.
	e.workerArgs = append(e.workerArgs, "--max-spill-bytes", "50000", "--reap-interval", "1h")
	e.startWorker()
	id := e.start(workflows.SessionInput{Prompt: "count", Profile: "auto"})
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	res := resultFor(e.checkSession(id), "c_big")
	require.NotNil(t, res)
	require.Equal(t, conversation.ReasonRan, res.Reason, res.Content)
	m := regexp.MustCompile(`\[full output cut at 50000 bytes: the command printed 1288895, the rest was discarded; the first 50000 bytes are saved to (\S+), outside the workspace`).FindStringSubmatch(res.Content)
	require.NotNil(t, m, res.Content)
	require.True(t, strings.HasPrefix(m[1], filepath.Join(e.stateDir, "sessions")+"/"), m[1])
	fi, err := os.Stat(m[1])
	require.NoError(t, err)
	require.Equal(t, int64(50000), fi.Size())
	require.NoDirExists(t, filepath.Join(e.workspace, ".longrun"))
}
