package workflows

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
)

// testSetupBase is the base for which newSessionEnv's OpenCheckout names
// a setup command.
const testSetupBase = "test-setup"

// TestSetupRunsBeforeTheFirstModelCall: a checkout whose worker has a
// setup command runs SetupCheckout on the checkout's queue before the
// first model call; a setup that succeeds says nothing to the model, one
// that fails is a note after the task (with its output's end), and the
// session goes on and completes.
func TestSetupRunsBeforeTheFirstModelCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		res  activities.SetupResult
		note bool
	}{
		{"ran", activities.SetupResult{Command: "go mod download", Key: "k", Millis: 300}, false},
		{"reused", activities.SetupResult{Command: "go mod download", Key: "k", Cached: true, MadeBy: "s0"}, false},
		{"failed", activities.SetupResult{Command: "go mod download", Key: "k", ExitCode: 1, Output: "dial tcp: no route to host", Error: "the setup command exited with status 1"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarnessWith(t, activities.WorkspaceConfig{}, []activities.ModelResponse{textReply("Done")},
				func(context.Context, activities.ToolRequest) (tools.Result, error) { return tools.Result{}, nil })
			var mu sync.Mutex
			var order []string
			var setupQueue string
			h.env.SetOnActivityStartedListener(func(i *activity.Info, _ context.Context, _ converter.EncodedValues) {
				mu.Lock()
				defer mu.Unlock()
				order = append(order, i.ActivityType.Name)
				if i.ActivityType.Name == "SetupCheckout" {
					setupQueue = i.TaskQueue
				}
			})
			var got activities.SetupRequest
			h.env.OnActivity(a.SetupCheckout, mock.Anything, mock.Anything).Return(
				func(_ context.Context, r activities.SetupRequest) (activities.SetupResult, error) {
					got = r
					return tc.res, nil
				})
			h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{}, nil)
			h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "task", Profile: "auto", Base: testSetupBase})
			require.NoError(t, h.env.GetWorkflowError())
			var r SessionResult
			require.NoError(t, h.env.GetWorkflowResult(&r))
			require.Equal(t, ResultCompleted, r.Status)

			require.Equal(t, testCheckout, got.Checkout)
			require.Equal(t, testCheckoutQueue, setupQueue, "the setup runs on the worker holding the checkout")
			require.Equal(t, []string{"OpenCheckout", "SetupCheckout", "CallModel"}, order[:3], "before the first model call")
			var notes []string
			for _, m := range h.requests[0].Messages {
				if m.Role == conversation.RoleUser && strings.Contains(m.Content, "setup command") {
					notes = append(notes, m.Content)
				}
			}
			if !tc.note {
				require.Empty(t, notes)
				return
			}
			require.Len(t, notes, 1)
			require.Contains(t, notes[0], "`go mod download` failed")
			require.Contains(t, notes[0], "no route to host")
			last := h.requests[0].Messages[len(h.requests[0].Messages)-1]
			require.Equal(t, notes[0], last.Content, "after the task")
		})
	}
}
