package workflows

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/tools"
)

// guardianHarness is a session harness whose ReviewCall answers by the
// call's arguments from verdicts (an absent key fails the activity) and
// records every review and every tool request; with verdicts nil the test
// mocks ReviewCall itself.
type guardianHarness struct {
	*harness
	mu      sync.Mutex
	reviews []guardian.Request
	runs    []activities.ToolRequest
}

func newGuardianHarness(t *testing.T, replies []activities.ModelResponse, verdicts map[string]guardian.Verdict) *guardianHarness {
	t.Helper()
	g := &guardianHarness{}
	g.harness = newHarness(t, replies, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
		g.mu.Lock()
		g.runs = append(g.runs, r)
		g.mu.Unlock()
		return tools.Result{Content: "ok " + r.CallID}, nil
	})
	if verdicts == nil {
		return g // the test mocks ReviewCall itself
	}
	g.env.OnActivity(a.ReviewCall, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req guardian.Request) (guardian.Verdict, error) {
			g.mu.Lock()
			g.reviews = append(g.reviews, req)
			g.mu.Unlock()
			v, ok := verdicts[req.Arguments]
			if !ok {
				return guardian.Verdict{}, errors.New("reviewer down")
			}
			return v, nil
		})
	return g
}

func (g *guardianHarness) status(t *testing.T) Status {
	t.Helper()
	v, err := g.env.QueryWorkflow(QueryStatus)
	require.NoError(t, err)
	var st Status
	require.NoError(t, v.Get(&st))
	return st
}

const argsA = `{"path":"a.txt","content":"x"}`

func TestGuardianApprovalRunsAsUnapproved(t *testing.T) {
	t.Parallel()
	g := newGuardianHarness(t, []activities.ModelResponse{
		toolReply(call("w", "write", argsA)),
		toolReply(call("w2", "write", `{"content":"x","path":"a.txt"}`)), // the same call, keys reordered
		textReply("done"),
	}, map[string]guardian.Verdict{argsA: {Decision: guardian.Approve, Reason: "a plain edit",
		Usage: &conversation.Usage{PromptTokens: 1000, TotalTokens: 1000}}})
	g.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Approval: ApproverGuardian})
	require.NoError(t, g.env.GetWorkflowError())
	var res SessionResult
	require.NoError(t, g.env.GetWorkflowResult(&res))
	require.GreaterOrEqual(t, res.Usage.TotalTokens, int64(1000), "the review's tokens count, once")
	require.Less(t, res.Usage.TotalTokens, int64(2000), "the cached repeat costs nothing")
	require.Equal(t, []string{"w", "w2"}, g.ran)
	for _, r := range g.runs {
		require.False(t, r.ApprovedByPerson, "a guardian approval is not a person's: no control file may change")
		require.True(t, r.ReadOnlySandbox, "a guardian approval is not a person's: a command runs read-only and offline")
	}
	require.Len(t, g.reviews, 1, "the identical second call used the cached decision")
	require.Contains(t, g.reviews[0].Why, "ask")
	st := g.status(t)
	require.Len(t, st.Guardian, 2)
	require.Equal(t, guardian.Approve, st.Guardian[0].Decision)
	require.False(t, st.Guardian[0].Cached)
	require.True(t, st.Guardian[1].Cached)
	require.Equal(t, "a plain edit", st.Guardian[1].Reason)
}

func TestGuardianDenialReachesTheModel(t *testing.T) {
	t.Parallel()
	g := newGuardianHarness(t, []activities.ModelResponse{
		toolReply(call("w", "write", argsA)),
		textReply("ok"),
	}, map[string]guardian.Verdict{argsA: {Decision: guardian.Deny, Reason: "a.txt is not part of the task"}})
	g.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Approval: ApproverGuardian})
	require.NoError(t, g.env.GetWorkflowError())
	require.Empty(t, g.ran)
	last := g.requests[len(g.requests)-1].Messages
	r := last[len(last)-1].Result
	require.NotNil(t, r)
	require.Equal(t, conversation.ReasonDenied, r.Reason)
	require.Contains(t, r.Content, "denied by the guardian")
	require.Contains(t, r.Content, "a.txt is not part of the task")
}

func TestGuardianAsksAPersonWhenItCannotDecide(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		verdict *guardian.Verdict // nil: the activity fails
		want    string
	}{
		{"ask", &guardian.Verdict{Decision: guardian.AskPerson, Reason: "only the user knows"}, "only the user knows"},
		{"timeout", &guardian.Verdict{Decision: guardian.AskPerson, Failure: guardian.FailTimeout, Reason: "no answer within 90s"}, "could not decide (timeout)"},
		{"unusable verdict", &guardian.Verdict{Decision: "APPROVE!"}, "could not decide (malformed)"},
		{"activity error", nil, "reviewer down"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			verdicts := map[string]guardian.Verdict{}
			if c.verdict != nil {
				verdicts[argsA] = *c.verdict
			}
			g := newGuardianHarness(t, []activities.ModelResponse{
				toolReply(call("w", "write", argsA)),
				textReply("ok"),
			}, verdicts)
			g.env.RegisterDelayedCallback(func() {
				require.Empty(t, g.ran)
				p := g.pending(t)
				require.Len(t, p, 1)
				require.NotNil(t, p[0].Guardian)
				require.Equal(t, guardian.AskPerson, p[0].Guardian.Decision)
				require.Contains(t, p[0].Reason, c.want)
				require.Equal(t, PhaseWaitingApproval, g.status(t).Phase)
				g.env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: "approve"})
			}, time.Minute)
			g.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Approval: ApproverGuardian})
			require.NoError(t, g.env.GetWorkflowError())
			require.Equal(t, []string{"w"}, g.ran)
			require.True(t, g.runs[0].ApprovedByPerson, "this time a person approved")
			require.False(t, g.runs[0].ReadOnlySandbox)
		})
	}
}

func TestGuardianStreakAsksAPerson(t *testing.T) {
	t.Parallel()
	deny := guardian.Verdict{Decision: guardian.Deny, Reason: "no"}
	g := newGuardianHarness(t, []activities.ModelResponse{
		toolReply(call("w1", "write", `{"path":"1","content":"x"}`)),
		toolReply(call("w2", "write", `{"path":"2","content":"x"}`)),
		toolReply(call("w3", "write", `{"path":"3","content":"x"}`)),
		toolReply(call("w4", "write", `{"path":"4","content":"x"}`)),
		toolReply(call("w5", "write", `{"path":"5","content":"x"}`)),
		textReply("ok"),
	}, map[string]guardian.Verdict{
		`{"path":"1","content":"x"}`: deny, `{"path":"2","content":"x"}`: deny, `{"path":"3","content":"x"}`: deny,
		`{"path":"4","content":"x"}`: {Decision: guardian.Approve}, `{"path":"5","content":"x"}`: {Decision: guardian.Approve},
	})
	g.env.RegisterDelayedCallback(func() {
		p := g.pending(t)
		require.Len(t, p, 1)
		require.Equal(t, "w4", p[0].CallID)
		require.Equal(t, guardian.FailStreak, p[0].Guardian.Failure)
		require.Len(t, g.reviews, 3, "the fourth call went to a person without a review")
		g.env.SignalWorkflow(SignalApproval, Approval{CallID: "w4", Decision: "deny", Feedback: "stop writing files"})
	}, time.Minute)
	g.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Approval: ApproverGuardian})
	require.NoError(t, g.env.GetWorkflowError())
	require.Equal(t, []string{"w5"}, g.ran, "a person's decision ended the streak: the guardian approved w5")
	require.Len(t, g.reviews, 4)
}

func TestGuardianNeverSeesControlFiles(t *testing.T) {
	t.Parallel()
	g := newGuardianHarness(t, []activities.ModelResponse{
		toolReply(call("w", "write", `{"path":"AGENTS.md","content":"obey the agent"}`)),
		textReply("ok"),
	}, map[string]guardian.Verdict{`{"path":"AGENTS.md","content":"obey the agent"}`: {Decision: guardian.Approve}})
	g.env.RegisterDelayedCallback(func() {
		p := g.pending(t)
		require.Len(t, p, 1)
		require.Nil(t, p[0].Guardian)
		require.Contains(t, p[0].Reason, "control file")
		g.env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: "deny"})
	}, time.Minute)
	g.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Approval: ApproverGuardian})
	require.NoError(t, g.env.GetWorkflowError())
	require.Empty(t, g.reviews, "the guardian is never asked about a control file")
	require.Empty(t, g.ran)
}

func TestPersonModeNeverAsksTheGuardian(t *testing.T) {
	t.Parallel()
	g := newGuardianHarness(t, []activities.ModelResponse{
		toolReply(call("w", "write", argsA)),
		textReply("ok"),
	}, map[string]guardian.Verdict{argsA: {Decision: guardian.Approve}})
	g.env.RegisterDelayedCallback(func() {
		require.Len(t, g.pending(t), 1)
		g.env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: "approve"})
	}, time.Minute)
	g.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, g.env.GetWorkflowError())
	require.Empty(t, g.reviews)
}

func TestGuardianReviewIsNotAPersonsToDecide(t *testing.T) {
	t.Parallel()
	g := newGuardianHarness(t, []activities.ModelResponse{
		toolReply(call("w", "write", argsA)),
		textReply("ok"),
	}, nil)
	g.env.OnActivity(a.ReviewCall, mock.Anything, mock.Anything).After(time.Hour).Return(guardian.Verdict{Decision: guardian.Deny, Reason: "no"}, nil).Once()
	var rejected error
	g.env.RegisterDelayedCallback(func() {
		require.Empty(t, g.pending(t), "under review: not yet a person's")
		require.Equal(t, PhaseRunning, g.status(t).Phase)
		g.env.UpdateWorkflow(UpdateApprove, "u1", &testsuite.TestUpdateCallback{
			OnAccept:   func() {},
			OnReject:   func(err error) { rejected = err },
			OnComplete: func(any, error) {},
		}, Approval{CallID: "w", Decision: "approve"})
	}, time.Minute)
	g.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Approval: ApproverGuardian})
	require.NoError(t, g.env.GetWorkflowError())
	require.ErrorContains(t, rejected, "being reviewed by the guardian")
	require.Empty(t, g.ran)
}

func TestGuardianReviewCancelled(t *testing.T) {
	t.Parallel()
	g := newGuardianHarness(t, []activities.ModelResponse{
		toolReply(call("w", "write", argsA)),
	}, nil)
	g.env.OnActivity(a.ReviewCall, mock.Anything, mock.Anything).After(time.Hour).Return(guardian.Verdict{Decision: guardian.Approve}, nil).Once()
	g.env.RegisterDelayedCallback(g.env.CancelWorkflow, time.Minute)
	g.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Approval: ApproverGuardian})
	require.Error(t, g.env.GetWorkflowError())
	require.Empty(t, g.ran, "cancelled under review: it never ran")
	require.Equal(t, conversation.ReasonCancelledBeforeRun, byID(g.conversation(t), "w").Reason)
}

// The guardian's cache, streak and log are session state: a repeat of an
// approved call in a later run (after continue-as-new) is not reviewed
// again, and status still lists the decisions.
func TestGuardianMemoryCarriedAcrossContinueAsNew(t *testing.T) {
	t.Parallel()
	l := &longHarness{t: t, store: &memTranscript{heads: map[string][]conversation.Message{}}}
	write := conversation.ToolCall{Name: "write", Arguments: argsA}
	l.reply = func(turn int, _ activities.ModelRequest) activities.ModelResponse {
		switch turn {
		case 1, 7:
			c := write
			c.ID = fmt.Sprintf("w%d", turn)
			return toolReply(c)
		case 9:
			return textReply("all done")
		}
		return toolReply(readCall(turn))
	}
	var mu sync.Mutex
	reviews := 0
	l.onRun = func(_ int, env *testsuite.TestWorkflowEnvironment) {
		env.OnActivity(a.ReviewCall, mock.Anything, mock.Anything).Return(
			func(context.Context, guardian.Request) (guardian.Verdict, error) {
				mu.Lock()
				reviews++
				mu.Unlock()
				return guardian.Verdict{Decision: guardian.Approve, Reason: "fine"}, nil
			})
	}
	l.run(SessionInput{Prompt: "go", ContinueAsNewTurns: 3, Approval: ApproverGuardian})
	require.Equal(t, ResultCompleted, l.result.Status)
	require.GreaterOrEqual(t, l.runs, 2)
	require.Equal(t, 1, reviews, "the repeat in a later run used the carried cache")
	require.Contains(t, l.ran, "w1")
	require.Contains(t, l.ran, "w7")
	v, err := l.last.QueryWorkflow(QueryStatus)
	require.NoError(t, err)
	var st Status
	require.NoError(t, v.Get(&st))
	require.Len(t, st.Guardian, 2)
	require.True(t, st.Guardian[1].Cached)
}

// On a worker without a sandbox a shell command nobody approved cannot run,
// so a guardian approval could only fail: the call goes to a person.
func TestGuardianSkipsShellWithoutSandbox(t *testing.T) {
	t.Parallel()
	g := &guardianHarness{}
	g.harness = newHarnessWith(t, activities.WorkspaceConfig{NoSandbox: true}, []activities.ModelResponse{
		toolReply(call("s", "shell", `{"command":"make"}`), call("w", "write", argsA)),
		textReply("ok"),
	}, nil)
	g.env.OnActivity(a.ReviewCall, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req guardian.Request) (guardian.Verdict, error) {
			g.mu.Lock()
			g.reviews = append(g.reviews, req)
			g.mu.Unlock()
			return guardian.Verdict{Decision: guardian.Approve}, nil
		})
	g.env.RegisterDelayedCallback(func() {
		p := g.pending(t)
		require.Len(t, p, 1)
		require.Equal(t, "s", p[0].CallID)
		g.env.SignalWorkflow(SignalApproval, Approval{CallID: "s", Decision: "deny"})
	}, time.Minute)
	g.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Approval: ApproverGuardian})
	require.NoError(t, g.env.GetWorkflowError())
	require.Len(t, g.reviews, 1)
	require.Equal(t, "write", g.reviews[0].Tool, "the file tool is still reviewed")
	require.Equal(t, []string{"w"}, g.ran)
}
