package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/mcp/mcptest"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// An isolated session's MCP call runs in a server started in its own
// checkout, in the sandbox: the server sees the file the session wrote
// there, not the person's copy of it.
func TestIsolatedSessionMCPCallSeesItsCheckout(t *testing.T) {
	t.Parallel()
	python := mcptest.Python(t)
	e := isolationEnv(t, func(string) map[string][]sm.Reply {
		return map[string][]sm.Reply{"probe the checkout": {
			sm.Tools(isoShell("c_write", "printf 'the session'\\''s' > probe.txt")),
			sm.Tools(sm.Call{ID: "c_probe", Name: "probe__cwd", Arguments: `{}`}),
			sm.Text("Probed\n\nThe server saw the checkout."),
		}}
	})
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "probe.txt"), []byte("the person's"), 0o644))
	git(t, e.workspace, "add", "probe.txt")
	git(t, e.workspace, "commit", "-qm", "probe")
	// The worker reads the MCP config of its config directory at start-up.
	e.stopWorker()
	cfg, _ := json.Marshal(map[string]any{"servers": map[string]any{"probe": map[string]any{
		"command": python, "args": []string{"-c", mcptest.ProbeServer}, "exposure": "direct", "timeout": "20s"}}})
	require.NoError(t, os.WriteFile(filepath.Join(e.configDir, "mcp.json"), cfg, 0o644))
	e.startWorker()

	id := "e2e-iso-mcp-" + randHex(3)
	out, err := e.starter("start", "--id", id, "--profile", "auto", "probe the checkout")
	require.NoError(t, err, out)
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	msgs := e.checkSession(id)
	w := resultFor(msgs, "c_write")
	require.NotNil(t, w)
	require.False(t, w.IsError, w.Content)
	res := resultFor(msgs, "c_probe")
	require.NotNil(t, res)
	require.Equal(t, conversation.ReasonRan, res.Reason, res.Content)
	dir := filepath.Join(e.stateDir, checkout.Dir, checkout.Sanitize(id))
	require.Regexp(t, `^cwd `+regexp.QuoteMeta(dir)+` pid \d+ probe the session's$`, res.Content,
		"the server runs in the session's checkout and sees its write")
	b, err := os.ReadFile(filepath.Join(e.workspace, "probe.txt"))
	require.NoError(t, err)
	require.Equal(t, "the person's", string(b), "the person's checkout is untouched")
	require.Equal(t, "the session's", gitOut(t, e.workspace, "show", r.Branch+":probe.txt"))
}
