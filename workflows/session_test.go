package workflows

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
)

// catalog is the builtin tool catalog, as ListTools would report it.
func catalog() activities.Catalog {
	return activities.Catalog{Tools: tools.NewRegistry(tools.Builtin(tools.DefaultConfig())...).Specs()}
}

// The test environment's two wall-clock guards, each well above what a
// workflow that is not stuck can take with -race on a busy machine. The
// SDK's defaults failed `go test -race -count=20` with nothing wrong: the
// idle timeout (3 s) while the workflow waited on a mocked CallModel, and
// the deadlock detector (1 s) while a signal handler decoded the 1 MiB
// payload of TestSignalsWithoutProvenanceOrShapeAreRefused. A workflow
// that really hangs or never yields still fails, later.
const (
	testIdleTimeout     = time.Minute
	testDeadlockTimeout = 10 * time.Second
)

// newSessionEnv is a test environment with sw's AgentSession registered
// under WorkflowType, as the worker does: each environment gets its own
// dependencies.
func newSessionEnv(sw *Sessions) *testsuite.TestWorkflowEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(testIdleTimeout)
	env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: testDeadlockTimeout})
	env.RegisterWorkflowWithOptions(sw.AgentSession, workflow.RegisterOptions{Name: WorkflowType})
	// A session not started in place asks for a checkout first; these
	// tests' workspaces are not repositories, so it runs in place, except
	// for the base testCheckoutBase (checkout_test.go).
	env.OnActivity(a.OpenCheckout, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.CheckoutRequest) (activities.CheckoutResult, error) {
			if r.Base == testCheckoutBase {
				in := testCheckout
				return activities.CheckoutResult{Checkout: &in, WorkerQueue: testCheckoutQueue}, nil
			}
			if r.Base == testSetupBase {
				in := testCheckout
				return activities.CheckoutResult{Checkout: &in, WorkerQueue: testCheckoutQueue, Setup: "go mod download"}, nil
			}
			return activities.CheckoutResult{Note: "not a git repository: runs in place"}, nil
		}).Maybe()
	return env
}

func toolReply(calls ...conversation.ToolCall) activities.ModelResponse {
	return activities.ModelResponse{
		Model:   "m",
		Message: conversation.Message{Role: conversation.RoleAssistant, ToolCalls: calls},
		Usage:   conversation.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15},
	}
}

func textReply(s string) activities.ModelResponse {
	return activities.ModelResponse{Model: "m", Message: conversation.Message{Role: conversation.RoleAssistant, Content: s}}
}

type harness struct {
	env      *testsuite.TestWorkflowEnvironment
	model    *testsuite.MockCallWrapper // the CallModel mock, for .After(d)
	requests []activities.ModelRequest
	mu       sync.Mutex
	ran      []string // tool call ids, in the order their activities ran
	// taskWorker is the queue the checkouts of the worker running the
	// session's workflow tasks are pinned to ("": testCheckoutQueue, the
	// worker that made the checkout). A local call for a checkout pinned
	// elsewhere is answered as activities.RunTool and Checkpoint answer
	// it there: not here.
	taskWorker string
}

// notHere is what the activities answer a local call for the checkout
// pinned to queue when h.taskWorker does not hold it; nil otherwise.
func (h *harness) notHere(ctx context.Context, queue string) error {
	w := h.taskWorker
	if w == "" {
		w = testCheckoutQueue
	}
	if !activity.GetInfo(ctx).IsLocalActivity || queue == "" || queue == w {
		return nil
	}
	return activities.NotHereError(queue, "the test's workflow tasks run on "+w)
}

// newHarness scripts the model with replies and runs tools with run.
func newHarness(t *testing.T, replies []activities.ModelResponse, run func(context.Context, activities.ToolRequest) (tools.Result, error)) *harness {
	t.Helper()
	return newHarnessWith(t, activities.WorkspaceConfig{}, replies, run)
}

// newHarnessWith also scripts the workspace's permission rules.
func newHarnessWith(t *testing.T, wc activities.WorkspaceConfig, replies []activities.ModelResponse, run func(context.Context, activities.ToolRequest) (tools.Result, error)) *harness {
	t.Helper()
	h := &harness{env: newSessionEnv(&Sessions{})}
	h.env.OnActivity(a.ListTools, mock.Anything).Return(catalog(), nil)
	h.env.OnActivity(a.LoadWorkspaceConfig, mock.Anything, mock.Anything).Return(wc, nil)
	i := 0
	h.model = h.env.OnActivity(a.CallModel, mock.Anything, mock.Anything).Return(
		func(_ context.Context, req activities.ModelRequest) (activities.ModelResponse, error) {
			// Copy: the workflow keeps appending to its slice.
			req.Messages = append([]conversation.Message(nil), req.Messages...)
			h.requests = append(h.requests, req)
			if i >= len(replies) {
				return activities.ModelResponse{}, temporal.NewNonRetryableApplicationError("script exhausted", "Test", nil)
			}
			i++
			return replies[i-1], nil
		})
	if run == nil {
		run = func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
			return tools.Result{Content: "ok " + r.CallID}, nil
		}
	}
	h.env.OnActivity(a.RunTool, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, r activities.ToolRequest) (tools.Result, error) {
			if err := h.notHere(ctx, r.CheckoutQueue); err != nil {
				return tools.Result{}, err
			}
			// The batch plan runs calls of one reply at once.
			h.mu.Lock()
			h.ran = append(h.ran, r.CallID)
			h.mu.Unlock()
			return run(ctx, r)
		})
	return h
}

func (h *harness) conversation(t *testing.T) []conversation.Message {
	t.Helper()
	v, err := h.env.QueryWorkflow(QueryConversation)
	require.NoError(t, err)
	var msgs []conversation.Message
	require.NoError(t, v.Get(&msgs))
	require.NoError(t, conversation.CheckPairing(msgs))
	return msgs
}

func (h *harness) pending(t *testing.T) []PendingApproval {
	t.Helper()
	v, err := h.env.QueryWorkflow(QueryPendingApprovals)
	require.NoError(t, err)
	var p []PendingApproval
	require.NoError(t, v.Get(&p))
	return p
}

func call(id, name, args string) conversation.ToolCall {
	return conversation.ToolCall{ID: id, Name: name, Arguments: args}
}

func byID(msgs []conversation.Message, id string) *conversation.ToolResult {
	for _, m := range msgs {
		if m.Result != nil && m.Result.CallID == id {
			return m.Result
		}
	}
	return nil
}

func TestReadRunsWriteWaitsForApproval(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("r", "read", `{"path":"a"}`), call("w", "write", `{"path":"b","content":"x"}`), call("s", "shell", `{"command":"touch x"}`)),
		textReply("done"),
	}, nil)
	h.env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"r"}, h.ran, "only the read runs before approval")
		p := h.pending(t)
		require.Len(t, p, 2)
		require.Equal(t, "w", p[0].CallID)
		require.Equal(t, "s", p[1].CallID)
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: "approve"})
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "s", Decision: "approve"})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, SessionResult{Status: ResultCompleted, FinalText: "done", Turns: 2, Usage: conversation.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15}}, r)
	require.ElementsMatch(t, []string{"r", "w", "s"}, h.ran)
	msgs := h.conversation(t)
	// Results follow call order whatever the finishing order (after the
	// default system prompt, the user's message and the model's reply).
	require.Equal(t, "r", msgs[3].Result.CallID)
	require.Equal(t, "w", msgs[4].Result.CallID)
	require.Equal(t, "s", msgs[5].Result.CallID)
	// Only name, description and parameters reach the model.
	raw, err := json.Marshal(h.requests[0].Tools)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "read_only")
}

func TestDenyFeedbackReachesModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w", "write", `{"path":"b","content":"x"}`)),
		textReply("ok"),
	}, nil)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "nope", Decision: "approve"})
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: "maybe"})
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: "deny", Feedback: "not that file"})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Empty(t, h.ran)
	require.Equal(t, 2, len(h.requests), "model calls")
	last := h.requests[1].Messages[len(h.requests[1].Messages)-1]
	require.Equal(t, conversation.ReasonDenied, last.Result.Reason)
	require.Contains(t, last.Content, "not that file")

	v, err := h.env.QueryWorkflow(QueryStatus)
	require.NoError(t, err)
	var st Status
	require.NoError(t, v.Get(&st))
	require.Len(t, st.Rejected, 2)
	require.Contains(t, st.Rejected[0], `unknown call id "nope"`)
	require.Contains(t, st.Rejected[1], `decision "maybe"`)
	require.Equal(t, PhaseDone, st.Phase)
}

func TestInvalidArgumentsAnsweredWithoutRunning(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("a", "read", `{}`), call("b", "write", `{"path": 3, "content": "x"}`), call("c", "shell", `not json`), call("d", "nope", `{}`)),
		textReply("ok"),
	}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Empty(t, h.ran)
	require.Empty(t, h.pending(t))
	msgs := h.conversation(t)
	require.Contains(t, byID(msgs, "a").Content, "field `path`: required")
	require.Contains(t, byID(msgs, "b").Content, "field `path`")
	require.Contains(t, byID(msgs, "c").Content, "not valid JSON")
	require.Equal(t, conversation.ReasonUnknownTool, byID(msgs, "d").Reason)
}

func TestCancelPairsEveryCall(t *testing.T) {
	t.Parallel()
	var cancelEnv func()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("s", "shell", `{"command":"sleep 60"}`), call("w", "write", `{"path":"b","content":"x"}`)),
	}, func(ctx context.Context, r activities.ToolRequest) (tools.Result, error) {
		// The shell "runs" until its context is cancelled, as the real one does.
		go cancelEnv()
		<-ctx.Done()
		return tools.Result{Content: "[cancelled: process group killed]", IsError: true}, ctx.Err()
	})
	cancelEnv = h.env.CancelWorkflow
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "s", Decision: "approve"})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	err := h.env.GetWorkflowError()
	require.Error(t, err)
	require.True(t, temporal.IsCanceledError(err), "got %v", err)
	msgs := h.conversation(t)
	require.Equal(t, conversation.ReasonCancelledWhileRunning, byID(msgs, "s").Reason)
	require.Equal(t, conversation.ReasonCancelledBeforeRun, byID(msgs, "w").Reason)
}

func TestIdleSessionTakesMessagesThenCompletes(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{textReply("first"), textReply("second")}, nil)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(SignalUserMessage, UserMessage{Text: "more please"})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", IdleTimeout: Duration(5 * time.Minute)})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, "second", r.FinalText)
	require.Equal(t, 2, r.Turns)
	require.Equal(t, "more please", h.requests[1].Messages[3].Content)
}

func TestMaxTurns(t *testing.T) {
	t.Parallel()
	loop := toolReply(call("r1", "read", `{"path":"a"}`))
	loop2 := toolReply(call("r2", "read", `{"path":"a"}`))
	h := newHarness(t, []activities.ModelResponse{loop, loop2}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", MaxTurns: 2})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, ResultMaxTurns, r.Status)
	require.Equal(t, 2, r.Turns)
	h.conversation(t)
}

func TestModelFailureEndsBatchSessionAsFailed(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil, nil) // the script is empty: every call fails
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, ResultFailed, r.Status)
	require.Contains(t, r.Error, "script exhausted")
}

func TestDurationJSON(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]time.Duration{`"10m"`: 10 * time.Minute, `90`: 90 * time.Second, `"45"`: 45 * time.Second, `""`: 0, `"forever"`: -1, `" Forever "`: -1} {
		var d Duration
		require.NoError(t, json.Unmarshal([]byte(in), &d), in)
		require.Equal(t, want, time.Duration(d), in)
	}
	var d Duration
	require.Error(t, json.Unmarshal([]byte(`"soon"`), &d))
	raw, _ := json.Marshal(Duration(time.Minute))
	require.Equal(t, `"1m0s"`, string(raw))
	// "forever" survives the round trip continue-as-new makes.
	raw, _ = json.Marshal(SessionInput{IdleTimeout: Forever})
	var back SessionInput
	require.NoError(t, json.Unmarshal(raw, &back))
	require.Equal(t, Forever, back.IdleTimeout)
	require.Contains(t, string(raw), `"idle_timeout":"forever"`)
}

// A session with idle_timeout "forever" is still waiting after 30 days
// with no timer running, and takes the message that finally comes.
func TestIdleForeverWaitsForDays(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{textReply("first"), textReply("second")}, nil)
	h.env.RegisterDelayedCallback(func() {
		v, err := h.env.QueryWorkflow(QueryStatus)
		require.NoError(t, err)
		var st Status
		require.NoError(t, v.Get(&st))
		require.Equal(t, PhaseWaitingInput, st.Phase)
		h.env.SignalWorkflow(SignalUserMessage, UserMessage{Text: "back from holiday"})
	}, 30*24*time.Hour)
	h.env.RegisterDelayedCallback(func() {
		// After the second answer the session waits again, forever: only a
		// cancel ends it.
		h.env.CancelWorkflow()
	}, 60*24*time.Hour)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", IdleTimeout: Forever})
	require.True(t, h.env.IsWorkflowCompleted())
	require.Equal(t, 2, len(h.requests), "model calls")
	require.Equal(t, "back from holiday", h.requests[1].Messages[3].Content)
	require.True(t, temporal.IsCanceledError(h.env.GetWorkflowError()), "%v", h.env.GetWorkflowError())
}

// token_budget stops the session before the call that would go past it,
// with the tool calls of the last turn paired.
func TestTokenBudgetStopsBeforeTheNextCall(t *testing.T) {
	t.Parallel()
	// Each reply reports 15 tokens: after two turns 30 >= 25.
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("r1", "read", `{"path":"a"}`)),
		toolReply(call("r2", "read", `{"path":"b"}`)),
		toolReply(call("r3", "read", `{"path":"c"}`)),
	}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", TokenBudget: 25})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, ResultBudget, r.Status)
	require.Equal(t, 2, r.Turns)
	require.Equal(t, "stopped after 2 model turns: 30 tokens used, token_budget is 25", r.Error)
	require.Equal(t, 2, len(h.requests), "model calls")
	require.NotNil(t, byID(h.conversation(t), "r2"))
}

func TestCostBudget(t *testing.T) {
	t.Parallel()
	priced := func(id string) activities.ModelResponse {
		r := toolReply(call(id, "read", `{"path":"`+id+`"}`))
		r.Usage.CostUSD = 0.25
		return r
	}
	h := newHarness(t, []activities.ModelResponse{priced("r1"), priced("r2"), priced("r3"), priced("r4")}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", CostBudgetUSD: 0.5})
	require.NoError(t, h.env.GetWorkflowError())
	var r SessionResult
	require.NoError(t, h.env.GetWorkflowResult(&r))
	require.Equal(t, ResultBudget, r.Status)
	require.Equal(t, 2, r.Turns)
	require.Contains(t, r.Error, "$0.5000 spent, cost_budget_usd is $0.5000")
}

// upserts records what a session upserts: the LongrunTurns value of each
// upsert that carries one.
func upserts(h *harness) *[]int64 {
	var turns []int64
	h.env.OnUpsertTypedSearchAttributes(mock.Anything).Return(nil).Run(func(args mock.Arguments) {
		if n, ok := args.Get(0).(temporal.SearchAttributes).GetInt64(TurnsKey); ok {
			turns = append(turns, n)
		}
	})
	return &turns
}

// readTurns scripts n turns of one read each, then a final text.
func readTurns(n int) []activities.ModelResponse {
	var replies []activities.ModelResponse
	for i := range n {
		id := fmt.Sprintf("r%d", i)
		replies = append(replies, toolReply(call(id, "read", fmt.Sprintf(`{"path":"f%d"}`, i))))
	}
	return append(replies, textReply("done"))
}

// TestCountersUpsertAtMostEveryInterval: a fast loop does not upsert its
// turn count every turn (each upsert is a history event and a visibility
// write), yet the published count is exact once the phase changes.
func TestCountersUpsertAtMostEveryInterval(t *testing.T) {
	t.Parallel()
	h := newHarness(t, readTurns(30), nil)
	turns := upserts(h)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	// Start (0), the first reply naming the model (1: not a counter) and
	// done (31, the final text's turn included): the turns between took no
	// workflow time.
	require.Equal(t, []int64{0, 1, 31}, *turns)
}

// TestCountersUpsertEveryTurnOfASlowModel: with model calls slower than
// the interval every turn's count is published.
func TestCountersUpsertEveryTurnOfASlowModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, readTurns(4), nil)
	h.model.After(counterInterval + time.Second)
	turns := upserts(h)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, []int64{0, 1, 2, 3, 4, 5}, *turns)
}
