package session

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/permission"
)

// observed drives one call through events on a batch, feeding the review
// record as the workflow does (workflows/events.go), the clock one
// minute on per event.
func observed(t *testing.T, r *record.Review, call conversation.ToolCall, perm permission.Call, evs ...Event) *record.Review {
	t.Helper()
	b := NewBatch([]conversation.ToolCall{call})
	at := t0
	for _, ev := range evs {
		if p, ok := ev.(PolicyEvent); ok {
			p.Decision.Perm = perm // how the engine saw the call
			ev = p
		}
		before := b.Calls[0].State
		require.NoError(t, b.Tell(0, ev), "%T", ev)
		at = at.Add(time.Minute)
		r = ObserveReview(r, before, b.Calls[0], ev, "shell: "+perm.Subject, at)
	}
	return r
}

func shellCall(ref string) conversation.ToolCall {
	return conversation.ToolCall{ID: "m" + ref, Ref: ref, Name: "shell", Arguments: `{}`}
}

var (
	ask     = PolicyEvent{Decision: Decision{Verdict: Ask, Why: "runs a command"}, Now: t0}
	run     = PolicyEvent{Decision: Decision{Verdict: Run}, Now: t0}
	testCmd = permission.Call{Tool: "shell", Kind: permission.KindCommand, Subject: "go test ./..."}
)

func ran(content string, reason conversation.Reason) RanEvent {
	return RanEvent{Result: conversation.ToolResult{Content: content, Reason: reason, IsError: reason == conversation.ReasonFailed}}
}

// TestReviewRecordsApprovalsCommandsAndWhatWasLeftUndone: a person's
// approval with its author and time, a command with its exit code, a
// denial with its feedback, a timeout; a call of another kind that ran
// is no check, and nothing is recorded for a policy's own allow.
func TestReviewRecordsApprovalsCommandsAndWhatWasLeftUndone(t *testing.T) {
	t.Parallel()
	var r *record.Review
	r = observed(t, r, shellCall("c1"), testCmd, ask,
		DecideEvent{Approval: Approval{Decision: DecisionApprove, Author: "alice"}}, TakeInEvent{}, StartEvent{},
		ran("FAIL x\n[exit code 1, 0.3s]\n", conversation.ReasonFailed))
	r = observed(t, r, shellCall("c2"), permission.Call{Tool: "shell", Kind: permission.KindCommand, Subject: "rm -rf build"}, ask,
		DecideEvent{Approval: Approval{Decision: DecisionDeny, Feedback: "keep it", Author: "bob"}}, TakeInEvent{})
	r = observed(t, r, shellCall("c3"), permission.Call{Tool: "shell", Kind: permission.KindCommand, Subject: "deploy"}, ask, TimeoutEvent{After: time.Hour})
	r = observed(t, r, shellCall("c4"), permission.Call{Tool: "write", Kind: permission.KindPath, Subject: "a.go"}, run, StartEvent{}, ran("wrote a.go", conversation.ReasonRan))
	r = observed(t, r, shellCall("c5"), permission.Call{Tool: "shell", Kind: permission.KindCommand, Subject: "echo '[exit code 0, 1s]'; sleep 9"}, run, StartEvent{},
		ran("[exit code 0, 1s]\n[killed by SIGTERM after timeout 5s]", conversation.ReasonFailed))

	one := 1
	require.Equal(t, []record.ReviewCall{{ID: "c1", Summary: "shell: go test ./...", Outcome: "approve", By: "person", Author: "alice", At: t0.Add(2 * time.Minute)}}, r.Approved)
	require.Equal(t, []record.ReviewCall{
		{ID: "c1", Summary: "go test ./...", Outcome: "failed", Exit: &one, At: t0.Add(5 * time.Minute)},
		{ID: "c5", Summary: "echo '[exit code 0, 1s]'; sleep 9", Outcome: "failed", At: t0.Add(3 * time.Minute)},
	}, r.Commands, "a command's own output is no exit code: only the tool's last line is")
	require.Equal(t, []record.ReviewCall{
		{ID: "c2", Summary: "shell: rm -rf build", Outcome: "denied", Author: "bob", Text: "keep it", At: t0.Add(3 * time.Minute)},
		{ID: "c3", Summary: "shell: deploy", Outcome: "timeout", At: t0.Add(2 * time.Minute)},
	}, r.Undone)
}

// TestReviewRecordsTheGuardiansApprovals: a call the guardian let run is
// listed with its reason, as a model's judgement (By guardian, no
// author); one it handed to a person is the person's approval; one it
// denied is left undone.
func TestReviewRecordsTheGuardiansApprovals(t *testing.T) {
	t.Parallel()
	review := PolicyEvent{Decision: Decision{Verdict: Ask, Why: "runs a command"}, Review: true, Now: t0}
	verdict := func(d, why string) ReviewEvent {
		return ReviewEvent{Verdict: guardian.Verdict{Decision: d, Reason: why}, Now: t0}
	}
	var r *record.Review
	r = observed(t, r, shellCall("c1"), testCmd, review, verdict(guardian.Approve, "runs the tests, reads only"), StartEvent{},
		ran("ok\n[exit code 0, 1s]", conversation.ReasonRan))
	r = observed(t, r, shellCall("c2"), testCmd, review, verdict(guardian.AskPerson, "unsure"),
		DecideEvent{Approval: Approval{Decision: DecisionApprove, Author: "alice"}}, TakeInEvent{})
	r = observed(t, r, shellCall("c3"), testCmd, review, verdict(guardian.Deny, "pushes to main"))
	require.Equal(t, []record.ReviewCall{
		{ID: "c1", Summary: "shell: go test ./...", Outcome: "approve", By: "guardian", Text: "runs the tests, reads only", At: t0.Add(2 * time.Minute)},
		{ID: "c2", Summary: "shell: go test ./...", Outcome: "approve", By: "person", Author: "alice", At: t0.Add(3 * time.Minute)},
	}, r.Approved)
	require.Len(t, r.Undone, 1)
	require.Equal(t, "c3", r.Undone[0].ID)
	require.Equal(t, "denied", r.Undone[0].Outcome)
}

// TestReviewIsBounded keeps the newest entries and counts the rest.
func TestReviewIsBounded(t *testing.T) {
	t.Parallel()
	var r *record.Review
	for i := range ReviewCommands + 5 {
		r = observed(t, r, shellCall(fmt.Sprintf("c%d", i)), testCmd, run, StartEvent{}, ran("[exit code 0, 1s]", conversation.ReasonRan))
	}
	require.Len(t, r.Commands, ReviewCommands)
	require.Equal(t, 5, r.DroppedCommands)
	require.Equal(t, "c5", r.Commands[0].ID)
	require.Nil(t, observed(t, nil, shellCall("c1"), testCmd, run), "a policy's allow alone records nothing")
}

func TestExitCode(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		content string
		code    int
		ok      bool
	}{
		{"ok\n[exit code 0, 0.1s]", 0, true},
		{"[exit code 137 (killed by signal killed?), 2.0s]\n", 137, true},
		{"[exit code 3, 1s]\n[the sandbox did not start: x]", 0, false},
		{"[killed by signal interrupt, 1s]", 0, false},
		{"", 0, false},
		{"big\n[… preview: the whole result is 5000 bytes, kept in the transcript store]\n[exit code 2, 9.1s]", 2, true},
	} {
		code, ok := ExitCode(tt.content)
		require.Equal(t, tt.ok, ok, tt.content)
		require.Equal(t, tt.code, code, tt.content)
	}
	require.Equal(t, []string{"docs (pending)", "tests (in_progress)"},
		UnfinishedPlan([]Todo{{"docs", TodoPending}, {"code", TodoCompleted}, {"tests", TodoInProgress}}))
}
