package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/follow"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// chatModelFor is a chat attached to s1 that talks to no server: what
// the tests below do needs none.
func chatModelFor(t *testing.T) *chatModel {
	t.Helper()
	m := newChatModel(context.Background(), &app{getenv: noEnv}, nil, "s1")
	m.send = func(tea.Msg) {}
	m.color = true
	m.width, m.height = 100, 60
	return m
}

func feed(m *chatModel, evs ...eventlog.Event) {
	for _, e := range evs {
		m.Update(eventMsg(follow.Event{Event: e}))
	}
}

// sgr is the only escape sequence the chat writes itself: its colours.
var sgr = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// Everything the model, a tool or a call controls reaches the screen
// rendered: no escape sequence but the chat's colours, no bidi control.
func TestChatRendersUntrustedText(t *testing.T) {
	t.Parallel()
	m := chatModelFor(t)
	feed(m,
		eventlog.Event{Seq: 1, Kind: eventlog.KindUserMessage, Text: "hi \x1b]0;title\x07"},
		eventlog.Event{Seq: 2, Kind: eventlog.KindTurnStarted, Turn: 1},
		eventlog.Event{Seq: 3, Kind: eventlog.KindReasoning, Text: "think \x1b[1A"},
		eventlog.Event{Seq: 4, Kind: eventlog.KindText, Text: "clear \x1b[2J and \u202eevil"},
		eventlog.Event{Seq: 5, Kind: eventlog.KindCallProposed, Call: &eventlog.Call{ID: "c1\x1b[K", Tool: "shell", Summary: "shell: rm \r-rf"}, Outcome: "ask", Text: "why \x1b[31m"},
		eventlog.Event{Kind: follow.KindPartial, Text: "writing \x1b]52;c;eA==\x07"},
	)
	m.Update(pendingMsg{{ID: "c1\x1b[K", Tool: "shell", Reason: "asks \x1b[2K", Arguments: `{"command":"rm \u001b[2J -rf"}`}})
	for _, expanded := range []bool{false, true} {
		m.expanded = expanded
		v := m.View().Content
		rest := sgr.ReplaceAllString(v, "")
		require.NotContains(t, rest, "\x1b", "a raw escape reached the screen:\n%s", v)
		require.NotContains(t, rest, "\u202e")
		require.NotContains(t, rest, "\x07")
		require.NotContains(t, rest, "\r")
		for _, shown := range []string{`hi \x1b]0;title\x07`, `clear \x1b[2J and ⟨U+202E⟩evil`, `[c1\x1b[K] shell`, `rm \r-rf`,
			`writing \x1b]52;c;eA==\x07`, `thinking: think \x1b[1A`, `rm \x1b[2J -rf`, "approval needed"} {
			require.Contains(t, rest, shown)
		}
	}
}

// A deny goes to the call d was pressed at: if that call stops waiting
// while the feedback is typed, nothing is denied, and the call waiting
// now is not denied in its place.
func TestChatDenyIsForTheCallItWasAskedAt(t *testing.T) {
	t.Parallel()
	m := chatModelFor(t)
	m.Update(pendingMsg{{ID: "c1", Tool: "shell", Arguments: `{"command":"make"}`}})
	m.Update(typeKey("d"))
	require.Equal(t, modeFeedback, m.mode)
	require.Contains(t, m.View().Content, "feedback for the model")
	m.Update(pendingMsg{{ID: "c2", Tool: "shell", Arguments: `{"command":"rm -rf /"}`}})
	for _, r := range "no" {
		m.Update(typeKey(string(r)))
	}
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	require.Nil(t, cmd, "nothing may be sent")
	require.Empty(t, m.inflight)
	require.Contains(t, m.View().Content, "c1 no longer waits; nothing was denied")
}

// A call cut on screen is approved only once v showed it whole.
func TestChatApproveNeedsTheWholeCallSeen(t *testing.T) {
	t.Parallel()
	m := chatModelFor(t)
	long := strings.Repeat("x", 3*chatArgLimit)
	m.Update(pendingMsg{{ID: "c1", Tool: "write", Arguments: `{"path":"a.txt","content":"` + long + `"}`}})
	_, cmd := m.Update(typeKey("a"))
	require.Nil(t, cmd)
	require.Contains(t, m.View().Content, "part of c1 is hidden: press v")
	m.Update(typeKey("v"))
	require.Contains(t, m.View().Content, "the whole of call c1")
	require.Contains(t, m.View().Content, long[:50])
	_, cmd = m.Update(typeKey("a"))
	require.NotNil(t, cmd, "approve is sent once the call was seen whole")
	require.True(t, m.inflight["c1"])
	require.Empty(t, string(m.input), "the keys answered the call, not the input line")
}

// Ctrl-C asks before cancelling; any answer but y cancels nothing.
func TestChatCtrlCAsksFirst(t *testing.T) {
	t.Parallel()
	m := chatModelFor(t)
	_, cmd := m.Update(ctrlKey('c'))
	require.Nil(t, cmd)
	require.Contains(t, m.View().Content, "cancel the session? y/n")
	_, cmd = m.Update(typeKey("n"))
	require.Nil(t, cmd, "n cancels nothing")
	require.Contains(t, m.View().Content, "not cancelled")
	m.Update(ctrlKey('c'))
	_, cmd = m.Update(typeKey("y"))
	require.NotNil(t, cmd, "y sends the cancel")
	require.Equal(t, modeInput, m.mode)
}

// Ctrl-O unfolds the calls with their arguments, read from the
// conversation for a call the chat never saw wait, rendered.
func TestChatUnfoldsCallsWithTheirArguments(t *testing.T) {
	t.Parallel()
	m := chatModelFor(t)
	feed(m,
		eventlog.Event{Seq: 1, Kind: eventlog.KindCallProposed, Call: &eventlog.Call{ID: "c1", Tool: "read", Summary: "read: a.txt"}, Outcome: "allow", Text: ""},
		eventlog.Event{Seq: 2, Kind: eventlog.KindCallFinished, Call: &eventlog.Call{ID: "c1", Tool: "read"}, Outcome: "ran", Text: "line one\nline two"},
	)
	require.NotContains(t, m.View().Content, "path:")
	m.Update(argsMsg{"c1": `{"path":"a.txt\u001b[2J"}`})
	m.Update(ctrlKey('o'))
	v := sgr.ReplaceAllString(m.View().Content, "")
	require.Contains(t, v, `path: a.txt\x1b[2J`)
	require.Contains(t, v, "⎿ line one")
	require.Contains(t, v, "  line two")
	m.Update(ctrlKey('o'))
	require.NotContains(t, m.View().Content, "path:", "folded again")
}

// The Ctrl-R prompt reads "r N" and "f N" (or rewind/fork, the number
// next to the letter or apart, words after it); anything else is a line
// saying what to type.
func TestParseTurnAction(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		line string
		want turnAction
	}{
		{"r 3", turnAction{turn: 3}},
		{"  R3 ", turnAction{turn: 3}},
		{"rewind 12 try the other file", turnAction{turn: 12, words: "try the other file"}},
		{"f 1", turnAction{fork: true, turn: 1}},
		{"F2", turnAction{fork: true, turn: 2}},
		{"fork 4   now do it in Go", turnAction{fork: true, turn: 4, words: "now do it in Go"}},
	} {
		got, err := parseTurnAction(c.line)
		require.NoError(t, err, c.line)
		require.Equal(t, c.want, got, c.line)
	}
	for line, says := range map[string]string{
		"":            "type r N to rewind to turn N or f N to fork at turn N",
		"   ":         "type r N to rewind to turn N or f N to fork at turn N",
		"x 3":         "start with r (rewind to a turn) or f (fork at a turn)",
		"3 r":         "start with r (rewind to a turn) or f (fork at a turn)",
		"rr 3":        "start with r (rewind to a turn) or f (fork at a turn)",
		"r":           "the turn is a number from 1",
		"f three":     "the turn is a number from 1",
		"r 0":         "the turn is a number from 1",
		"r -2":        "the turn is a number from 1",
		"f 2x":        "the turn is a number from 1",
		"r \x1b[2J 1": "the turn is a number from 1",
	} {
		_, err := parseTurnAction(line)
		require.ErrorContains(t, err, says, "%q", line)
		require.NotContains(t, err.Error(), "\x1b", "the line typed is shown rendered")
	}
}

// Ctrl-R opens the prompt over the line being typed and Esc brings that
// line back; a line that does not parse, or a turn the session has not
// reached, is a line in the chat and changes nothing; one that parses
// runs (fork or rewind) and closes the prompt.
func TestChatTurnPrompt(t *testing.T) {
	t.Parallel()
	m := chatModelFor(t)
	feed(m,
		eventlog.Event{Seq: 1, Kind: eventlog.KindTurnStarted, Turn: 1},
		eventlog.Event{Seq: 2, Kind: eventlog.KindTurnFinished, Turn: 1, Outcome: "ok"},
		eventlog.Event{Seq: 3, Kind: eventlog.KindTurnStarted, Turn: 2},
	)
	typeIn := func(s string) {
		for _, r := range s {
			if r == ' ' {
				m.Update(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
			} else {
				m.Update(typeKey(string(r)))
			}
		}
	}
	typeIn("half a message")
	m.Update(ctrlKey('r'))
	require.Equal(t, modeTurn, m.mode)
	v := sgr.ReplaceAllString(m.View().Content, "")
	require.Contains(t, v, "r N rewinds to turn N, f N forks at turn N")
	require.Contains(t, v, "rewind or fork> █")

	typeIn("r 9")
	_, cmd := m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	require.Nil(t, cmd, "nothing is sent for a turn not reached")
	require.Equal(t, modeTurn, m.mode, "the prompt stays to be corrected")
	require.Contains(t, m.View().Content, "✗ turn 9: s1 has reached turn 2; nothing changed")

	m.Update(ctrlKey('u'))
	typeIn("z 1")
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	require.Nil(t, cmd)
	require.Contains(t, m.View().Content, "✗ 'z 1': start with r (rewind to a turn) or f (fork at a turn)")

	m.Update(tea.KeyPressMsg{Code: tea.KeyEscape})
	require.Equal(t, modeInput, m.mode)
	require.Equal(t, "half a message", string(m.input), "Esc brings the line back")
	require.Empty(t, m.inflight, "Esc interrupted nothing and decided nothing")

	m.Update(ctrlKey('r'))
	typeIn("f 1")
	_, cmd = m.Update(tea.KeyPressMsg{Code: tea.KeyEnter})
	require.NotNil(t, cmd, "the fork runs")
	require.Equal(t, modeInput, m.mode)
	require.Equal(t, "half a message", string(m.input))
	require.Contains(t, m.View().Content, "forking s1 at turn 1…")

	// What the fork or rewind said comes back as lines, rendered.
	m.Update(turnDone{"✗ rewind s1 to turn 1 refused, nothing changed: " + untrusted.Line("busy \x1b[2J")})
	v = sgr.ReplaceAllString(m.View().Content, "")
	require.Contains(t, v, `refused, nothing changed: busy \x1b[2J`)
	require.NotContains(t, v, "\x1b")
}

// With no session yet there is nothing to rewind or fork.
func TestChatTurnPromptNeedsASession(t *testing.T) {
	t.Parallel()
	m := chatModelFor(t)
	m.session = ""
	_, cmd := m.Update(ctrlKey('r'))
	require.Nil(t, cmd)
	require.Equal(t, modeInput, m.mode)
	require.Contains(t, m.View().Content, "there is no session yet")
}

// typeKey is a key press that types s, as a terminal sends it.
func typeKey(s string) tea.KeyPressMsg {
	return tea.KeyPressMsg{Code: []rune(s)[0], Text: s}
}

// ctrlKey is Ctrl and the letter c.
func ctrlKey(c rune) tea.KeyPressMsg {
	return tea.KeyPressMsg{Code: c, Mod: tea.ModCtrl}
}

// A poll sent before a decision was answered may still list the call as
// waiting: it must not bring the prompt back for it, or the next key
// typed (the "a" of a message) would decide a call already decided. A
// poll sent after the answer is believed.
func TestChatAStalePollDoesNotBringADecidedCallBack(t *testing.T) {
	t.Parallel()
	m := chatModelFor(t)
	c3 := workflows.PendingApproval{ID: "c3", Tool: "shell", Arguments: `{"command":"rm -rf build"}`}
	m.Update(pendingMsg{c3})
	require.NotNil(t, m.waiting())
	asked := m.epoch.Load() // a poll goes out before the decision is answered
	m.Update(decisionMsg{p: c3, ap: workflows.Approval{ID: "c3", Decision: workflows.DecisionDeny}})
	require.Nil(t, m.waiting(), "the decided call leaves the prompt at once")
	m.Update(polledMsg{asked: asked, ps: []workflows.PendingApproval{c3}})
	require.Nil(t, m.waiting(), "the stale poll does not bring it back")
	for _, r := range "also" {
		m.Update(typeKey(string(r)))
	}
	require.Equal(t, "also", string(m.input), "every key went to the message line")
	m.Update(polledMsg{asked: m.epoch.Load(), ps: []workflows.PendingApproval{c3}})
	require.NotNil(t, m.waiting(), "a poll sent after the answer is believed")
}

// A sub-agent's events, merged into its parent's stream, show its calls
// under its name and say when it started and ended, and leave the
// parent's own state (phase, turn, the text being written) alone; a
// sub-agent's call of the same id as the parent's is a call of its own.
func TestChatShowsSubAgents(t *testing.T) {
	t.Parallel()
	m := chatModelFor(t)
	child := "s1/task-1"
	feed(m,
		eventlog.Event{Seq: 1, Kind: eventlog.KindPhase, Phase: "running"},
		eventlog.Event{Seq: 2, Kind: eventlog.KindTurnStarted, Turn: 1},
		eventlog.Event{Seq: 3, Kind: eventlog.KindCallStarted, Call: &eventlog.Call{ID: "c1", Tool: "task"}},
		eventlog.Event{Seq: 4, Kind: eventlog.KindSubagentStarted, Session: child, Text: "look \x1b[2Jaround", Call: &eventlog.Call{ID: "c1", Tool: "task"}},
	)
	for _, e := range []eventlog.Event{
		{Seq: 1, Kind: eventlog.KindPhase, Phase: "waiting-approval"},
		{Seq: 2, Kind: eventlog.KindTurnStarted, Turn: 7},
		{Seq: 3, Kind: eventlog.KindCallProposed, Outcome: "ask", Call: &eventlog.Call{ID: "c1", Tool: "write", Summary: "write: notes.md"}},
		{Seq: 4, Kind: eventlog.KindCallFinished, Outcome: "ran", Text: "wrote it", Call: &eventlog.Call{ID: "c1", Tool: "write"}},
		{Seq: 5, Kind: eventlog.KindText, Text: "child \x1b]0;t\x07done"},
		{Seq: 6, Kind: eventlog.KindSubagentStarted, Session: child + "/task-1", Text: "deeper"},
		{Seq: 7, Kind: eventlog.KindEnded, Outcome: "completed"},
	} {
		m.Update(eventMsg(follow.Event{Event: e, SubAgent: child}))
	}
	require.Equal(t, "running", m.phase, "a sub-agent's phase is not the parent's")
	require.Equal(t, 1, m.turn, "a sub-agent's turn is not the parent's")
	require.Equal(t, "running", m.calls["c1"].state, "the parent's call c1 is its own")
	require.Equal(t, "ran", m.calls["task-1/c1"].state)
	rest := sgr.ReplaceAllString(m.View().Content, "")
	require.NotContains(t, rest, "\x1b")
	for _, shown := range []string{`sub-agent task-1 started for call c1: look \x1b[2Jaround`, "[task-1/c1] write", "write: notes.md",
		`sub-agent task-1: child \x1b]0;t\x07done`, "sub-agent task-1/task-1 started by task-1: deeper", "sub-agent task-1 ended: completed"} {
		require.Contains(t, rest, shown)
	}
}

// watch shows a sub-agent's start, calls and end as lines, rendered, and
// leaves the session's own events and a sub-agent's turns to the rest.
func TestWatchSubAgentLines(t *testing.T) {
	t.Parallel()
	child := "s1/task-1\x1b[2J"
	for _, c := range []struct {
		e    follow.Event
		want string
	}{
		{follow.Event{Event: eventlog.Event{Kind: eventlog.KindSubagentStarted, Session: child, Text: "look", Call: &eventlog.Call{ID: "c1", Tool: "task"}}}, `call c1 task: sub-agent s1/task-1\x1b[2J started: look`},
		{follow.Event{Event: eventlog.Event{Kind: eventlog.KindCallProposed, Outcome: "ask", Call: &eventlog.Call{ID: "c1", Tool: "write"}}, SubAgent: child}, `[s1/task-1\x1b[2J] call c1 write proposed: ask`},
		{follow.Event{Event: eventlog.Event{Kind: eventlog.KindEnded, Outcome: "completed"}, SubAgent: child}, "session ended: completed"},
		{follow.Event{Event: eventlog.Event{Kind: follow.KindError, Text: "gone"}, SubAgent: child}, "error: gone"},
	} {
		line, ok := subAgentLine(c.e)
		require.True(t, ok, c.want)
		require.Contains(t, line, c.want)
		require.NotContains(t, line, "\x1b")
	}
	for _, e := range []follow.Event{
		{Event: eventlog.Event{Kind: eventlog.KindCallProposed, Outcome: "ask", Call: &eventlog.Call{ID: "c1", Tool: "write"}}},
		{Event: eventlog.Event{Kind: eventlog.KindTurnStarted}, SubAgent: child},
		{Event: eventlog.Event{Kind: eventlog.KindText, Text: "hi"}, SubAgent: child},
	} {
		_, ok := subAgentLine(e)
		require.False(t, ok, "%+v", e)
	}
}
