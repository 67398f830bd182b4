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
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/tools"
)

// memTranscript plays the worker's transcript store: heads are made up,
// the messages kept in memory.
type memTranscript struct {
	mu    sync.Mutex
	heads map[string][]conversation.Message
}

func (m *memTranscript) append(head string, msgs []conversation.Message) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	all := append(append([]conversation.Message(nil), m.heads[head]...), msgs...)
	h := fmt.Sprintf("h%d", len(m.heads)+1)
	m.heads[h] = all
	return h
}

func (m *memTranscript) Load(_ context.Context, head string) ([]conversation.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	msgs, ok := m.heads[head]
	if !ok {
		return nil, fmt.Errorf("no head %s", head)
	}
	return append([]conversation.Message(nil), msgs...), nil
}

// Resolve has nothing to do: the harness's tools return results inline.
func (m *memTranscript) Resolve(_ context.Context, msgs []conversation.Message) ([]conversation.Message, error) {
	return msgs, nil
}

func (m *memTranscript) Expand(ctx context.Context, msgs []conversation.Message) ([]conversation.Message, error) {
	var out []conversation.Message
	for _, msg := range msgs {
		if msg.Compacted == "" {
			out = append(out, msg)
			continue
		}
		older, err := m.Load(ctx, msg.Compacted)
		if err != nil {
			return nil, err
		}
		out = append(out, older...)
	}
	return out, nil
}

// longHarness runs a session whose model answers from a function of the
// turn, with a transcript, across as many runs as it continues as new.
type longHarness struct {
	t      *testing.T
	store  *memTranscript
	reply  func(turn int, req activities.ModelRequest) activities.ModelResponse
	mu     sync.Mutex
	ran    []string
	full   [][]conversation.Message // what the model saw, per call
	onRun  func(run int, env *testsuite.TestWorkflowEnvironment)
	runs   int
	result SessionResult
	// sessions is what the worker registers; nil is a worker whose
	// conversation query reads store.
	sessions *Sessions
	last     *testsuite.TestWorkflowEnvironment // the last run's, to query
	wc       activities.WorkspaceConfig         // what LoadWorkspaceConfig answers
}

func (l *longHarness) env() *testsuite.TestWorkflowEnvironment {
	sw := l.sessions
	if sw == nil {
		sw = &Sessions{Transcript: l.store}
	}
	env := newSessionEnv(sw)
	env.OnActivity(a.ListTools, mock.Anything).Return(catalog(), nil)
	env.OnActivity(a.LoadWorkspaceConfig, mock.Anything, mock.Anything).Return(l.wc, nil)
	env.OnActivity(a.CallModel, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, req activities.ModelRequest) (activities.ModelResponse, error) {
			older, err := l.store.Load(ctx, req.Head)
			if req.Head == "" {
				older, err = nil, nil
			}
			if err != nil {
				return activities.ModelResponse{}, err
			}
			full := append(older, req.Messages...)
			l.mu.Lock()
			l.full = append(l.full, full)
			l.mu.Unlock()
			resp := l.reply(req.Turn, req)
			resp.Head = l.store.append(req.Head, req.Messages)
			return resp, nil
		})
	env.OnActivity(a.RunTool, mock.Anything, mock.Anything).Return(
		func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
			l.mu.Lock()
			l.ran = append(l.ran, r.CallID)
			l.mu.Unlock()
			return tools.Result{Content: "ok " + r.CallID}, nil
		})
	return env
}

// run executes the session, following continue-as-new into each next run.
func (l *longHarness) run(in SessionInput) {
	l.t.Helper()
	for {
		env := l.env()
		if l.onRun != nil {
			l.onRun(l.runs, env)
		}
		env.ExecuteWorkflow(WorkflowType, in)
		l.last = env
		require.True(l.t, env.IsWorkflowCompleted())
		err := env.GetWorkflowError()
		var cont *workflow.ContinueAsNewError
		if errors.As(err, &cont) {
			l.runs++
			var next SessionInput
			require.NoError(l.t, converter.GetDefaultDataConverter().FromPayloads(cont.Input, &next))
			require.NotNil(l.t, next.Resume)
			in = next
			continue
		}
		require.NoError(l.t, err)
		require.NoError(l.t, env.GetWorkflowResult(&l.result))
		return
	}
}

func readCall(turn int) conversation.ToolCall {
	return conversation.ToolCall{ID: fmt.Sprintf("r%d", turn), Name: "read", Arguments: fmt.Sprintf(`{"path":"f%d"}`, turn)}
}

// A long session continues as new every few turns, keeps its turn count,
// usage and conversation, and a call waiting for approval at a switch is
// still pending in the next run and answered there by its id.
func TestContinueAsNewCarriesEverything(t *testing.T) {
	t.Parallel()
	const turns = 23
	l := &longHarness{t: t, store: &memTranscript{heads: map[string][]conversation.Message{}}}
	l.reply = func(turn int, _ activities.ModelRequest) activities.ModelResponse {
		switch {
		case turn == 10:
			return toolReply(readCall(turn), conversation.ToolCall{ID: "w10", Name: "write", Arguments: `{"path":"out","content":"x"}`})
		case turn < turns:
			return toolReply(readCall(turn))
		}
		return textReply("all done")
	}
	var pendingSeen []PendingApproval
	l.onRun = func(run int, env *testsuite.TestWorkflowEnvironment) {
		if run != 2 { // turn 10 is the last turn of the second run (runs of 5)
			return
		}
		env.RegisterDelayedCallback(func() {
			v, err := env.QueryWorkflow(QueryPendingApprovals)
			require.NoError(t, err)
			require.NoError(t, v.Get(&pendingSeen))
			env.SignalWorkflow(SignalApproval, Approval{CallID: "w10", Decision: DecisionApprove})
		}, time.Minute)
	}
	l.run(SessionInput{Prompt: "go", ContinueAsNewTurns: 5})

	require.Equal(t, ResultCompleted, l.result.Status)
	require.Equal(t, "all done", l.result.FinalText)
	require.Equal(t, turns, l.result.Turns)
	require.Equal(t, int64((turns-1)*15), l.result.Usage.TotalTokens, "usage is summed across runs")
	require.GreaterOrEqual(t, l.runs, 4)
	require.Len(t, pendingSeen, 1)
	require.Equal(t, "w10", pendingSeen[0].CallID, "the call waiting at the switch is pending in the next run")
	require.Contains(t, l.ran, "w10")
	// The model always saw the whole conversation, paired.
	last := l.full[len(l.full)-1]
	require.NoError(t, conversation.CheckPairing(last))
	require.Equal(t, conversation.RoleSystem, last[0].Role, "the default system prompt, carried across runs")
	require.Equal(t, "go", last[1].Content)
	require.Len(t, last, 2+2*(turns-1)+1, "system prompt, prompt, a reply and a result per tool turn, plus w10's result")
	// w10 ran exactly once, after its approval, in a later run than turn 10's read.
	n := 0
	for _, id := range l.ran {
		if id == "w10" {
			n++
		}
	}
	require.Equal(t, 1, n)
}

// The conversation query of a session whose older messages are held by
// reference reads them through the transcript reader of the Sessions value
// the worker registered, and a worker registered without one says so. The
// two run side by side, each with its own value: with the reader in a
// package variable they could not, and -race caught the tests that tried.
func TestConversationQueryReadsTheRegisteredTranscript(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		reader  bool
		wantErr string
	}{
		{name: "worker with a transcript store", reader: true},
		{name: "worker without one", wantErr: "this worker cannot read the session's transcript"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := &longHarness{t: t, store: &memTranscript{heads: map[string][]conversation.Message{}}}
			if !tc.reader {
				l.sessions = &Sessions{}
			}
			l.reply = func(turn int, _ activities.ModelRequest) activities.ModelResponse {
				if turn < 3 {
					return toolReply(readCall(turn))
				}
				return textReply("all done")
			}
			l.run(SessionInput{Prompt: "go"})
			require.Equal(t, ResultCompleted, l.result.Status)
			require.Zero(t, l.runs, "one run: the query reads this run's head")

			v, err := l.last.QueryWorkflow(QueryConversation)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			var msgs []conversation.Message
			require.NoError(t, v.Get(&msgs))
			require.NoError(t, conversation.CheckPairing(msgs))
			require.Len(t, msgs, 2+2*2+1, "the system prompt, the prompt, a reply and a result per tool turn, the final text")
			require.Equal(t, "go", msgs[1].Content, "the prompt comes from the store, not the run's input")
			require.Equal(t, "all done", msgs[len(msgs)-1].Content)
		})
	}
}

// A session whose next request would not fit the context window compacts
// first; the request after it is small and paired.
func TestCompactionBeforeTheWindowIsFull(t *testing.T) {
	t.Parallel()
	l := &longHarness{t: t, store: &memTranscript{heads: map[string][]conversation.Message{}}}
	l.reply = func(turn int, _ activities.ModelRequest) activities.ModelResponse {
		if turn < 12 {
			r := toolReply(readCall(turn))
			r.Usage = conversation.Usage{TotalTokens: int64(300 * turn)} // grows with the conversation
			return r
		}
		return textReply("done")
	}
	var compactions []activities.CompactRequest
	l.onRun = func(_ int, env *testsuite.TestWorkflowEnvironment) {
		env.OnActivity(a.Compact, mock.Anything, mock.Anything).Return(
			func(ctx context.Context, req activities.CompactRequest) (activities.CompactResult, error) {
				compactions = append(compactions, req)
				full, _ := l.store.Load(ctx, req.Head)
				full = append(full, req.Messages...)
				prefix := l.store.append("", full[:len(full)-2])
				kept := append([]conversation.Message{{Role: conversation.RoleUser, Content: "summary", Compacted: prefix}}, full[len(full)-2:]...)
				return activities.CompactResult{Head: l.store.append("", kept), Summary: "summary", Replaced: len(full) - 2, Kept: 2, EstimatedTokens: 100}, nil
			})
	}
	l.run(SessionInput{Prompt: "go", ContextWindow: 2000, CompactKeepTurns: 1})
	require.Equal(t, ResultCompleted, l.result.Status)
	require.NotEmpty(t, compactions)
	require.Equal(t, 1, compactions[0].KeepTurns)
	// Every request fits: none after a compaction carries the old turns.
	for _, full := range l.full {
		require.NoError(t, conversation.CheckPairing(full))
	}
	after := l.full[len(l.full)-1]
	require.Equal(t, "summary", after[0].Content)
	require.Less(t, len(after), 12)
}

// Without a transcript the next run's input carries the whole
// conversation; when the server keeps suggesting a switch (that input alone
// passes its threshold), a run still takes session.MinRunTurnsCarryingAll turns
// instead of switching before every model call.
func TestSuggestionWithoutTranscriptTakesTurnsFirst(t *testing.T) {
	t.Parallel()
	var replies []activities.ModelResponse
	for i := 1; i <= 30; i++ {
		replies = append(replies, toolReply(readCall(i)))
	}
	h := newHarness(t, replies, nil) // the model returns no head: no transcript
	h.env.SetContinueAsNewSuggested(true)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto"})
	var cont *workflow.ContinueAsNewError
	require.ErrorAs(t, h.env.GetWorkflowError(), &cont)
	require.Equal(t, session.MinRunTurnsCarryingAll, len(h.requests), "model calls before the switch")
	var next SessionInput
	require.NoError(t, converter.GetDefaultDataConverter().FromPayloads(cont.Input, &next))
	require.Equal(t, session.MinRunTurnsCarryingAll, next.Resume.Turn)
}
