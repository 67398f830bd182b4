package e2e

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// A worker without a sandbox (here --sandbox off) fails closed: an auto
// session refuses to start with SandboxRequired, and in a build session
// even a read-only shell command waits for a person.
func TestNoSandboxFailsClosed(t *testing.T) {
	t.Parallel()
	e := newEnvWorkerEnv(t, []string{"LONGRUN_SANDBOX=off"},
		sm.Tools(sm.Call{ID: "c_ls", Name: "shell", Arguments: `{"command": "ls"}`}), sm.Text("ok"))

	auto := e.start(workflows.SessionInput{Prompt: "go", Profile: "auto"})
	err := tc.GetWorkflow(context.Background(), auto, "").Get(context.Background(), nil)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, workflows.ErrTypeSandboxRequired, appErr.Type())
	require.Contains(t, appErr.Message(), "profile auto needs the shell sandbox")
	require.Empty(t, e.model.Requests(), "no model call for a session that cannot start")

	id := e.start(workflows.SessionInput{Prompt: "go"})
	p := waitPending(t, id, 1)
	require.Equal(t, "c_ls", p[0].CallID)
	require.Contains(t, p[0].Reason, "this worker has no sandbox, so no shell command runs without a person's approval")
	out, err := e.starter("approve", id, "c_ls")
	require.NoError(t, err, out)
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	e.checkSession(id)
}
