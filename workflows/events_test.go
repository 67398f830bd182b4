package workflows

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
)

func (h *harness) events(t *testing.T, after int64) EventsPage {
	t.Helper()
	v, err := h.env.QueryWorkflow(QueryEvents, EventsRequest{After: after})
	require.NoError(t, err)
	var p EventsPage
	require.NoError(t, v.Get(&p))
	return p
}

// summary is an event as a line the test compares: kind, call, outcome.
func summary(e eventlog.Event) string {
	s := e.Kind
	if e.Phase != "" {
		s += " " + e.Phase
	}
	if e.Call != nil {
		s += " " + e.Call.ID + " " + e.Call.Tool
		if e.Call.By != "" {
			s += " by " + e.Call.By
		}
	}
	if e.Outcome != "" {
		s += " " + e.Outcome
	}
	return s
}

// TestEventsOfASessionWithAnApproval: the stream says, in order, what a
// session with a read, an approved write and a denied one did, and the
// events query refuses a negative or future "after" with a clear error.
func TestEventsOfASessionWithAnApproval(t *testing.T) {
	t.Parallel()
	reply := textReply("done\x1b]0;pwned\x07")
	reply.Message.Reasoning = "think"
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("r", "read", `{"path":"a"}`), call("w1", "write", `{"path":"b","content":"x"}`), call("w2", "write", `{"path":"c","content":"y"}`)),
		reply,
	}, nil)
	h.env.RegisterDelayedCallback(func() {
		h.env.SignalWorkflow(SignalApproval, Approval{ID: "c2", Decision: "approve"})
		h.env.SignalWorkflow(SignalApproval, Approval{ID: "c3", Decision: "deny", Feedback: "not c"})
	}, time.Minute)
	var got []string
	var last int64
	h.env.RegisterDelayedCallback(func() {
		// Read in two pages: nothing is lost or repeated between them.
		p := h.events(t, 0)
		for _, e := range p.Events {
			got = append(got, summary(e))
			last = e.Seq
		}
		_, err := h.env.QueryWorkflow(QueryEvents, EventsRequest{After: -1})
		require.ErrorContains(t, err, "after, limit and tail must be 0 or more")
		_, err = h.env.QueryWorkflow(QueryEvents, EventsRequest{After: 1 << 40})
		require.ErrorContains(t, err, "after is past the last event")
	}, 30*time.Second)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	p := h.events(t, last)
	for _, e := range p.Events {
		got = append(got, summary(e))
	}
	require.Equal(t, []string{
		"phase running",
		"user_message",
		"turn_started",
		"turn_finished ok",
		"call_proposed c1 read by policy allow",
		"call_proposed c2 write ask",
		"call_proposed c3 write ask",
		"phase waiting-approval",
		"call_started c1 read",
		"call_finished c1 read ran",
		// 30 s: the first page ends here; the decisions come at 1 min.
		"call_decided c2 write by person approve",
		"call_started c2 write",
		"call_decided c3 write by person deny",
		"call_finished c3 write denied",
		"phase running",
		"call_finished c2 write ran",
		"turn_started",
		"turn_finished ok",
		"reasoning",
		"text",
		"phase done",
		"session_ended completed",
	}, got, strings.Join(got, "\n"))
	var text eventlog.Event
	for _, e := range p.Events {
		if e.Kind == eventlog.KindText {
			text = e
		}
	}
	require.Equal(t, "done\x1b]0;pwned\x07", text.Text, "the event carries the model's text as data; clients render it")
	require.Equal(t, 2, text.Turn)
	for i := 1; i < len(p.Events); i++ {
		require.Equal(t, p.Events[i-1].Seq+1, p.Events[i].Seq)
	}
}

// TestEventsCarriedAcrossContinueAsNew: a session of several runs
// numbers its events on across them, and the last run still answers a
// reader from the first event on, with nothing missed or repeated.
func TestEventsCarriedAcrossContinueAsNew(t *testing.T) {
	t.Parallel()
	const turns = 12
	l := &longHarness{t: t, store: &memTranscript{heads: map[string][]conversation.Message{}}}
	l.reply = func(turn int, _ activities.ModelRequest) activities.ModelResponse {
		if turn < turns {
			return toolReply(readCall(turn))
		}
		return textReply("all done")
	}
	l.run(SessionInput{Prompt: "go", ContinueAsNewTurns: 5})
	require.GreaterOrEqual(t, l.runs, 2)
	v, err := l.last.QueryWorkflow(QueryEvents, EventsRequest{})
	require.NoError(t, err)
	var p EventsPage
	require.NoError(t, v.Get(&p))
	require.Zero(t, p.Missed)
	require.Equal(t, int64(1), p.Events[0].Seq)
	runs := map[int]bool{}
	finished := 0
	for i, e := range p.Events {
		require.Equal(t, int64(i+1), e.Seq, "numbered on across runs")
		runs[e.Run] = true
		if e.Kind == eventlog.KindCallFinished {
			finished++
		}
	}
	require.Len(t, runs, l.runs+1, "events of every run")
	require.Equal(t, turns-1, finished, "each call finished once")
	require.Equal(t, eventlog.KindEnded, p.Events[len(p.Events)-1].Kind)
	require.Equal(t, p.Next, p.Events[len(p.Events)-1].Seq+1)
}

// TestEventsNoPhaseFlickerAtASwitch: a run that continues as new while a
// call waits for a person starts its next run still waiting, as far as
// the stream says: no "running" between "waiting-approval" and the
// decision.
func TestEventsNoPhaseFlickerAtASwitch(t *testing.T) {
	t.Parallel()
	l := &longHarness{t: t, store: &memTranscript{heads: map[string][]conversation.Message{}}}
	l.reply = func(turn int, _ activities.ModelRequest) activities.ModelResponse {
		switch turn {
		case 1:
			return toolReply(readCall(turn))
		case 2:
			return toolReply(call("w", "write", `{"path":"b","content":"x"}`))
		}
		return textReply("all done")
	}
	l.onRun = func(run int, env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(SignalApproval, Approval{CallID: "w", Decision: DecisionApprove})
		}, time.Hour)
	}
	l.run(SessionInput{Prompt: "go", ContinueAsNewTurns: 1})
	require.GreaterOrEqual(t, l.runs, 2)
	v, err := l.last.QueryWorkflow(QueryEvents, EventsRequest{})
	require.NoError(t, err)
	var p EventsPage
	require.NoError(t, v.Get(&p))
	var got []string
	for _, e := range p.Events {
		got = append(got, summary(e))
	}
	i := slices.Index(got, "phase waiting-approval")
	j := slices.Index(got, "call_decided c2 write by person approve")
	require.True(t, i >= 0 && j > i, strings.Join(got, "\n"))
	require.NotContains(t, got[i:j], "phase running", strings.Join(got, "\n"))
	require.NotEqual(t, p.Events[i].Run, p.Events[j].Run, "the switch came while the call waited")
	for k := 1; k < len(p.Events); k++ {
		require.Equal(t, p.Events[k-1].Seq+1, p.Events[k].Seq)
	}
}

// TestForkPromptIsAUserMessage: a fork given a prompt streams it as a
// person's message at the turn it forked at, as a new session streams
// its prompt, so chat and watch attached to the fork show it.
func TestForkPromptIsAUserMessage(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{textReply("done")}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{
		Prompt: "now try it the other way",
		Fork: &ForkFrom{Session: "orig", Turn: 2, Messages: []conversation.Message{
			{Role: conversation.RoleUser, Content: "first"},
			{Role: conversation.RoleAssistant, Content: "one"},
		}},
	})
	require.NoError(t, h.env.GetWorkflowError())
	var msgs []eventlog.Event
	for _, e := range h.events(t, 0).Events {
		if e.Kind == eventlog.KindUserMessage {
			msgs = append(msgs, e)
		}
	}
	require.Len(t, msgs, 1, "the fork's prompt, once; the original's messages are not streamed again")
	require.Equal(t, "now try it the other way", msgs[0].Text)
	require.Equal(t, 2, msgs[0].Turn)
	last := h.requests[0].Messages
	require.Equal(t, "now try it the other way", last[len(last)-1].Content, "and the model gets it")
}
