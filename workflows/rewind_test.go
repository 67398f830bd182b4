package workflows

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
)

// A waiting session rewound to turn 2 puts its checkout's files back to
// turn 2's checkpoint on the worker holding it, its conversation back to
// the end of turn 2 with a message saying so; a rewind to an unknown
// turn, or while the session works, is refused and changes nothing.
func TestRewindPutsTheFilesAndTheConversationBack(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w1", "write", `{"path":"a","content":"x"}`)),
		toolReply(call("r1", "read", `{"path":"a"}`)),
		toolReply(call("w2", "write", `{"path":"b","content":"y"}`)),
		textReply("done"),
	}, nil)
	var cps checkpoints
	cps.mock(h)
	var rewound []activities.RewindRequest
	h.env.OnActivity(a.RewindCheckout, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.RewindRequest) error { rewound = append(rewound, r); return nil })
	h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{}, nil)
	var refused []string
	var out RewindOutcome
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(UpdateRewind, "bad", &testsuite.TestUpdateCallback{
			OnAccept: func() { t.Error("a rewind to turn 9 was accepted") }, OnReject: func(err error) { refused = append(refused, err.Error()) },
			OnComplete: func(any, error) {},
		}, RewindRequest{Turn: 9})
		h.env.UpdateWorkflow(UpdateRewind, "good", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Error(err) },
			OnComplete: func(v any, err error) { require.NoError(t, err); out = v.(RewindOutcome) },
		}, RewindRequest{Turn: 2})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase, IdleTimeout: Duration(time.Hour)})
	require.NoError(t, h.env.GetWorkflowError())

	require.Len(t, refused, 1)
	require.Contains(t, refused[0], "turn 9: no such turn (turns to go back to: 1, 2, 3, 4)")
	require.Equal(t, RewindOutcome{Turn: 2, From: 4, Checkpoint: "cp1"}, out)
	require.Equal(t, []activities.RewindRequest{{Checkout: testCheckout, Commit: "cp1"}}, rewound)
	var msgs []conversation.Message
	v, err := h.env.QueryWorkflow(QueryConversation)
	require.NoError(t, err)
	require.NoError(t, v.Get(&msgs))
	last := msgs[len(msgs)-1]
	require.Contains(t, last.Content, "rewound this session from turn 4 to turn 2")
	require.Equal(t, "r1", msgs[len(msgs)-2].Result.CallID, "turn 2's result, then the message")
	var turns []TurnInfo
	v, err = h.env.QueryWorkflow(QueryTurns)
	require.NoError(t, err)
	require.NoError(t, v.Get(&turns))
	require.Len(t, turns, 2, "the later turns' marks are gone")
	var rw []string
	for _, e := range h.events(t, 0).Events {
		if e.Kind == eventlog.KindRewound {
			rw = append(rw, fmt.Sprintf("%d %s", e.Turn, e.Outcome))
		}
	}
	require.Equal(t, []string{"2 from turn 4"}, rw, "the event stream says so")
}
