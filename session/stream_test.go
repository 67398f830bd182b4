package session

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/guardian"
)

// TestCallEvents: each transition of a call's life gives the stream the
// events a client shows, in order, with the outcome and who decided.
func TestCallEvents(t *testing.T) {
	t.Parallel()
	denied := AnswerDeniedByPolicy.Result(Facts{Detail: "rule"})
	type want struct{ kind, outcome, by, text string }
	cases := []struct {
		name  string
		state CallState
		ev    Event
		want  []want
	}{
		{"policy allows", Proposed{}, PolicyEvent{Decision: Decision{Verdict: Run}, Now: t0},
			[]want{{eventlog.KindCallProposed, "allow", "policy", ""}}},
		{"policy asks", Proposed{}, PolicyEvent{Decision: Decision{Verdict: Ask, Why: "writes a file"}, Now: t0},
			[]want{{eventlog.KindCallProposed, "ask", "", "writes a file"}}},
		{"policy asks the guardian", Proposed{}, PolicyEvent{Decision: Decision{Verdict: Ask, Why: "writes"}, Review: true, Now: t0},
			[]want{{eventlog.KindCallProposed, "review", "", "writes"}}},
		{"policy denies: proposed and finished", Proposed{}, PolicyEvent{Decision: Decision{Verdict: Denied, Result: &denied}, Now: t0},
			[]want{{eventlog.KindCallProposed, "denied_by_policy", "policy", ""}, {eventlog.KindCallFinished, "denied_by_policy", "", denied.Content}}},
		{"person approves", Waiting{Reason: "w", Since: t0}, DecideEvent{Approval: Approval{Decision: DecisionApprove, Feedback: "go"}},
			[]want{{eventlog.KindCallDecided, "approve", "person", "go"}}},
		{"person denies", Waiting{Reason: "w", Since: t0}, DecideEvent{Approval: Approval{Decision: DecisionDeny, Feedback: "not that"}},
			[]want{{eventlog.KindCallDecided, "deny", "person", "not that"}}},
		{"a remembered rule releases", Waiting{Reason: "w", Since: t0}, ReleaseEvent{},
			[]want{{eventlog.KindCallDecided, "approve", "rule", "released by a remembered rule"}}},
		{"guardian approves", Reviewing{Reason: "w"}, ReviewEvent{Verdict: guardian.Verdict{Decision: guardian.Approve, Reason: "fine"}, Now: t0},
			[]want{{eventlog.KindCallDecided, "approve", "guardian", "guardian: fine"}}},
		{"guardian asks a person", Reviewing{Reason: "w"}, ReviewEvent{Verdict: guardian.Verdict{Decision: guardian.AskPerson, Reason: "unsure"}, Now: t0},
			[]want{{eventlog.KindCallDecided, "ask", "guardian", "w; the guardian asks a person: unsure"}}},
		{"guardian denies: decided and finished", Reviewing{Reason: "w"}, ReviewEvent{Verdict: guardian.Verdict{Decision: guardian.Deny, Reason: "no"}, Now: t0},
			[]want{{eventlog.KindCallDecided, "deny", "guardian", "no"}, {eventlog.KindCallFinished, "denied", "", ""}}},
		{"timeout: decided and finished", Waiting{Reason: "w", Since: t0}, TimeoutEvent{After: time.Hour},
			[]want{{eventlog.KindCallDecided, "timeout", "timeout", ""}, {eventlog.KindCallFinished, "timeout", "", ""}}},
		{"denial taken in finishes", Decided{By: ByPerson, Decision: Approval{Decision: DecisionDeny, Feedback: "no"}}, TakeInEvent{},
			[]want{{eventlog.KindCallFinished, "denied", "", ""}}},
		{"approval taken in says nothing new", Decided{By: ByPerson, Decision: Approval{Decision: DecisionApprove}}, TakeInEvent{}, nil},
		{"start", Approved{By: ByPolicy}, StartEvent{}, []want{{eventlog.KindCallStarted, "", "", ""}}},
		{"result", Running{Approved: Approved{By: ByPolicy}}, RanEvent{Result: ranResult()},
			[]want{{eventlog.KindCallFinished, "ran", "", "ok"}}},
		{"interrupted while waiting", Waiting{Reason: "w", Since: t0}, StopEvent{Interrupted: true},
			[]want{{eventlog.KindCallFinished, "interrupted", "", ""}}},
		{"lost worker says nothing until the result", Running{Approved: Approved{By: ByPolicy}}, WorkerLostEvent{}, nil},
		{"prepared says nothing", Preparing{Then: Waiting{Reason: "w", Since: t0}}, PreparedEvent{Arguments: "{}"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := &Batch{Calls: []Call{{Call: conversation.ToolCall{ID: "m1", Ref: "c7", Name: "shell", Arguments: `{"command":"ls"}`}, State: tc.state}}}
			require.NoError(t, b.Tell(0, tc.ev))
			got := CallEvents(tc.state, b.Calls[0], tc.ev, "shell: ls")
			require.Len(t, got, len(tc.want))
			for i, w := range tc.want {
				e := got[i]
				require.Equal(t, w.kind, e.Kind, "event %d", i)
				require.Equal(t, w.outcome, e.Outcome, "event %d", i)
				require.Equal(t, w.by, e.Call.By, "event %d", i)
				if w.text != "" || e.Kind != eventlog.KindCallFinished {
					require.Equal(t, w.text, e.Text, "event %d", i)
				}
				require.Equal(t, "c7", e.Call.ID)
				require.Equal(t, "shell", e.Call.Tool)
				require.Equal(t, "shell: ls", e.Call.Summary)
			}
		})
	}
}

// TestCallEventsBoundsThePreview: a huge result and summary stay small
// in the event; the conversation keeps them whole.
func TestCallEventsBoundsThePreview(t *testing.T) {
	t.Parallel()
	b := &Batch{Calls: []Call{{Call: conversation.ToolCall{Ref: "c1", Name: "read"}, State: Running{}}}}
	require.NoError(t, b.Tell(0, RanEvent{Result: conversation.ToolResult{Content: strings.Repeat("y", 1<<20), Reason: conversation.ReasonRan}}))
	got := CallEvents(Running{}, b.Calls[0], RanEvent{}, strings.Repeat("s", 10000))
	require.Len(t, got, 1)
	require.LessOrEqual(t, len(got[0].Text), previewBytes)
	require.LessOrEqual(t, len(got[0].Call.Summary), 200)
}
