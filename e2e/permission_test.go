package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// In plan profile the model is never shown a tool that changes things.
func TestPlanProfileRequestHasNoWriteTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Text("here is my plan"))
	out, err := e.starter("start", "--profile", "plan", "--wait", "plan the work")
	require.NoError(t, err, out)
	reqs := e.model.Requests()
	require.Len(t, reqs, 1)
	var names []string
	for _, tool := range reqs[0].Tools {
		names = append(names, tool.Function.Name)
	}
	// web_fetch changes nothing (it asks before it reaches the web).
	require.ElementsMatch(t, []string{"read", "list", "glob", "grep", "web_fetch", "todo", "tool_search", "task"}, names)
	raw := string(reqs[0].Raw)
	for _, leak := range []string{"read_only", "timeout_seconds"} {
		require.NotContains(t, raw, leak, "runtime metadata sent to the model")
	}
}

// The workspace's .longrun/permissions.json allows `go version`-style
// rules and hard blocks still win; remember: session stops a second
// identical approval request.
func TestWorkspaceRulesAndRemember(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(
			sm.Call{ID: "c_echo", Name: "shell", Arguments: `{"command": "echo hi > hi.txt"}`},
			sm.Call{ID: "c_rm", Name: "shell", Arguments: `{"command": "bash -c 'rm -rf /'"}`},
			sm.Call{ID: "c_mk", Name: "shell", Arguments: `{"command": "mkdir -p build/a"}`},
		),
		sm.Tools(sm.Call{ID: "c_mk2", Name: "shell", Arguments: `{"command": "mkdir -p build/b"}`}),
		sm.Text("done"),
	)
	require.NoError(t, os.MkdirAll(filepath.Join(e.workspace, ".longrun"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, ".longrun", "permissions.json"),
		[]byte(`{"rules": [{"tool": "shell", "pattern": "echo *", "action": "allow"}]}`), 0o644))
	e.trustWorkspace() // the workspace's rules count only for a trusted one
	// In place: the test looks for the commands' files in the workspace.
	out, err := e.starter("start", "--in-place", "go")
	require.NoError(t, err, out)
	id := strings.TrimSpace(regexp.MustCompile(`session-\S+`).FindString(out))
	p := waitPending(t, id, 1)
	require.Equal(t, "c_mk", p[0].CallID)

	out, err = e.starter("approve", id, "c_mk", "--remember", "--pattern", "mkdir *")
	require.NoError(t, err, out)
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	msgs := e.checkSession(id)
	// Each with the result's text: a call that failed says why (it
	// failed once under load with only its reason to go on).
	echo, rm, mk2 := resultFor(msgs, "c_echo"), resultFor(msgs, "c_rm"), resultFor(msgs, "c_mk2")
	require.Equal(t, conversation.ReasonRan, echo.Reason, echo.Content)
	require.Equal(t, conversation.ReasonBlocked, rm.Reason, rm.Content)
	require.Equal(t, conversation.ReasonRan, mk2.Reason, "the remembered rule let the second mkdir run unasked: %s", mk2.Content)
	// The worker's log carries what a call that did not run said, not
	// only its reason.
	require.Regexp(t, `msg="tool call" .*call_id=c_rm tool=shell reason=blocked detail=".*rm -rf /`, e.logs.String())
	require.DirExists(t, filepath.Join(e.workspace, "build", "b"))
	require.FileExists(t, filepath.Join(e.workspace, "hi.txt"))
}

// A malformed permissions file stops the session with a message naming
// the file, before anything runs.
func TestMalformedPermissionsFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Text("never"))
	e.trustWorkspace()
	require.NoError(t, os.MkdirAll(filepath.Join(e.workspace, ".longrun"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, ".longrun", "permissions.json"), []byte(`{"rules": [{"tool": "shell", "action": "maybe"}]}`), 0o644))
	id := e.start(workflows.SessionInput{Prompt: "go"})
	_, err := e.starter("result", id)
	require.Error(t, err)
	out, _ := e.starter("status", id)
	_ = out
	require.Empty(t, e.model.Requests())
	var r workflows.SessionResult
	err = tc.GetWorkflow(t.Context(), id, "").Get(t.Context(), &r)
	require.ErrorContains(t, err, "permissions.json")
}

// An untrusted workspace's permissions.json is ignored (the model could
// have written it): its allow-everything rule does not let a command run
// unasked, and the worker's log says why the file did not count.
func TestUntrustedWorkspacePermissionsIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_touch", Name: "shell", Arguments: `{"command": "touch planted.txt"}`}),
		sm.Text("done"),
	)
	require.NoError(t, os.MkdirAll(filepath.Join(e.workspace, ".longrun"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, ".longrun", "permissions.json"),
		[]byte(`{"rules": [{"tool": "*", "action": "allow"}]}`), 0o644))
	id := e.start(workflows.SessionInput{Prompt: "go"})
	p := waitPending(t, id, 1)
	require.Equal(t, "c_touch", p[0].CallID, "the planted rule did not allow it")
	require.NoFileExists(t, filepath.Join(e.workspace, "planted.txt"))
	require.Contains(t, string(decodedPayloads(history(t, id))), ".longrun/permissions.json ignored: the workspace is not trusted; see README Security model")
	out, err := e.starter("deny", id, "--all", "--feedback", "no")
	require.NoError(t, err, out)
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
}
