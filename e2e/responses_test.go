package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// A session against a model speaking the Responses API: parallel calls
// (one read that runs at once, one write that waits for a person), an
// approval, a shell command interrupted while it runs, a message that
// carries on, and a cancel while a call waits, with every call paired.
// The run continues as new after every turn, and each request the model
// receives, in later runs too, carries every reasoning item it returned
// before with its encrypted_content, stateless (store: false), with the
// session id as prompt_cache_key.
func TestResponsesSession(t *testing.T) {
	t.Parallel()
	marker := "longrun-responses-" + randHex(6)
	reply := map[int]sm.Reply{
		0: {Reasoning: "Read the notes and write a.", EncryptedReasoning: "ENC-1", ToolCalls: []sm.Call{
			{ID: "c_read", Name: "read", Arguments: `{"path": "notes.txt"}`},
			{ID: "c_write", Name: "write", Arguments: `{"path": "a.txt", "content": "a\n"}`},
		}},
		2: {Reasoning: "Now wait a while.", EncryptedReasoning: "ENC-2", ToolCalls: []sm.Call{
			{ID: "c_sleep", Name: "shell", Arguments: `{"command": "sleep 60; echo ` + marker + `"}`},
		}},
		3: {Reasoning: "Write b then.", EncryptedReasoning: "ENC-3", ToolCalls: []sm.Call{
			{ID: "c_write2", Name: "write", Arguments: `{"path": "b.txt", "content": "b\n"}`},
		}},
	}
	e := newEnvResponder(t, func(req sm.Request) (sm.Reply, bool) {
		r, ok := reply[len(req.ItemsOfType("function_call_output"))]
		return r, ok
	})
	e.workerEnv = []string{"LONGRUN_MODEL_API=responses", "LONGRUN_PROMPT_CACHE_KEY=on"}
	e.stopWorker()
	e.startWorker()
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "notes.txt"), []byte("notes\n"), 0o644))

	id := e.start(workflows.SessionInput{Prompt: "read the notes, then write", ContinueAsNewTurns: 1})
	firstRun := describe(t, id).GetWorkflowExecutionInfo().GetExecution().GetRunId()

	p := waitPending(t, id, 1)
	require.Equal(t, "c_write", p[0].CallID, "the read ran without asking")
	out, err := e.starter("approve", id, "c_write")
	require.NoError(t, err, out)

	p = waitPending(t, id, 1)
	require.Equal(t, "c_sleep", p[0].CallID)
	out, err = e.starter("approve", id, "c_sleep")
	require.NoError(t, err, out)
	var pids []int
	waitFor(t, "the shell process", 30*time.Second, func() bool {
		pids = processesWith(marker)
		return len(pids) > 0
	})
	pids = append(pids, childrenOf(pids)...)
	out, err = e.starter("interrupt", id)
	require.NoError(t, err, out)
	waitFor(t, "the shell's processes to be gone", 10*time.Second, func() bool { return !anyAlive(pids) })
	waitFor(t, "waiting-input", 30*time.Second, func() bool {
		return query[workflows.Status](t, id, workflows.QueryStatus).Phase == workflows.PhaseWaitingInput
	})
	msgs := query[[]conversation.Message](t, id, workflows.QueryConversation)
	require.NoError(t, conversation.CheckPairing(msgs))
	require.Equal(t, conversation.ReasonInterrupted, resultFor(msgs, "c_sleep").Reason)

	out, err = e.starter("send", id, "carry on")
	require.NoError(t, err, out)
	p = waitPending(t, id, 1)
	require.Equal(t, "c_write2", p[0].CallID)
	out, err = e.starter("cancel", id)
	require.NoError(t, err, out)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err = tc.GetWorkflow(ctx, id, "").Get(ctx, nil)
	var canceled *temporal.CanceledError
	require.True(t, errors.As(err, &canceled), "want Canceled, got %v", err)

	msgs = e.checkSession(id)
	require.Equal(t, conversation.ReasonRan, resultFor(msgs, "c_read").Reason)
	require.Equal(t, conversation.ReasonRan, resultFor(msgs, "c_write").Reason)
	require.Equal(t, conversation.ReasonInterrupted, resultFor(msgs, "c_sleep").Reason)
	require.Equal(t, conversation.ReasonCancelledBeforeRun, resultFor(msgs, "c_write2").Reason)
	require.FileExists(t, filepath.Join(e.workspace, "a.txt"))
	require.NoFileExists(t, filepath.Join(e.workspace, "b.txt"))
	var kept []string
	for _, m := range msgs {
		for _, r := range m.ReasoningItems {
			kept = append(kept, r.EncryptedContent)
		}
	}
	require.Equal(t, []string{"ENC-1", "ENC-2", "ENC-3"}, kept, "the transcript keeps every reasoning item")

	// What the model received.
	reqs := e.model.Requests()
	require.Len(t, reqs, 3)
	for i, r := range reqs {
		require.Equal(t, sm.APIResponses, r.API, "request %d", i)
		require.NotNil(t, r.Store, "request %d", i)
		require.False(t, *r.Store, "request %d is stateless", i)
		require.Contains(t, r.Include, "reasoning.encrypted_content", "request %d", i)
		require.Equal(t, id, r.PromptCacheKey, "request %d", i)
	}
	encrypted := func(r sm.Request) []string {
		var out []string
		for _, it := range r.ItemsOfType("reasoning") {
			out = append(out, it.EncryptedContent)
		}
		return out
	}
	require.Empty(t, encrypted(reqs[0]))
	require.Equal(t, []string{"ENC-1"}, encrypted(reqs[1]))
	require.Equal(t, []string{"ENC-1", "ENC-2"}, encrypted(reqs[2]))
	require.Len(t, reqs[1].ItemsOfType("function_call"), 2, "both parallel calls go back")
	for _, c := range []string{"c_read", "c_write"} {
		_, ok := reqs[1].LastToolResult(c)
		require.True(t, ok, "the output of %s goes back", c)
	}
	interrupted, ok := reqs[2].LastToolResult("c_sleep")
	require.True(t, ok)
	require.NotEmpty(t, interrupted)

	// The later requests were made after the first run had closed: the
	// reasoning crossed continue-as-new.
	d, err := describeRun(context.Background(), tc, id, firstRun)
	require.NoError(t, err)
	closed := d.GetWorkflowExecutionInfo().GetCloseTime()
	require.NotNil(t, closed, "the first run never closed: no continue-as-new")
	require.True(t, reqs[2].At.After(closed.AsTime()), "the third request came before the first run closed")
	last := describe(t, id).GetWorkflowExecutionInfo().GetExecution().GetRunId()
	require.NotEqual(t, firstRun, last)
	require.NotNil(t, runInput(t, id, last).Resume, "the last run started by continue-as-new")
}
