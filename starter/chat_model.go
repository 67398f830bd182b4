package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"

	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/follow"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// chatRetry is how often a decision the server did not take is sent
// again while it does not answer (and at once when follow says it is
// back).
const chatRetry = 5 * time.Second

// Messages the chat's goroutines and commands hand to its loop.
type (
	// noteMsg is a line of the CLI's own words (not the model's).
	noteMsg string
	// eventMsg is one item of the session's event stream.
	eventMsg follow.Event
	// pendingMsg is the calls waiting for a person, as last queried.
	pendingMsg []workflows.PendingApproval
	// polledMsg is pendingMsg as the poll saw it, with the decision epoch
	// (chatModel.epoch) read when its query was sent.
	polledMsg struct {
		asked int64
		ps    []workflows.PendingApproval
	}
	// startedMsg: the session the first message started.
	startedMsg string
	// decisionMsg is what became of one decision sent.
	decisionMsg struct {
		p   workflows.PendingApproval
		ap  workflows.Approval
		out decisionOutcome
		err error
	}
	// retryMsg asks to send the decisions not taken again.
	retryMsg struct{}
)

// chatMode is what the keys do right now.
type chatMode int

const (
	modeInput    chatMode = iota // typing the next message; a/d/s/v answer a waiting call when the line is empty
	modeFeedback                 // typing the feedback of a deny
	modeConfirm                  // "cancel the session? y/n"
	modeTurn                     // typing "r N" or "f N": rewind to or fork at a turn (Ctrl-R)
)

// chatCall is one tool call as the chat shows it, built from the call_*
// events. Every string but state's words is the model's or a tool's.
type chatCall struct {
	id, tool, summary string
	// decision is who let it run or decided it, and how ("approved by
	// person", "denied by person: feedback"); state is where it is now
	// ("waits for you", "running", the result's reason). Both are our
	// words with the untrusted parts already rendered.
	decision, state string
	result          string // the start of the result, raw
	isError         bool
	args            string // the arguments, raw, once seen waiting
}

// chatEntry is one item of the transcript.
type chatEntry struct {
	kind string // user, text, reasoning, call, note, turn
	text string // raw for user/text/reasoning (rendered in View); ours for note/turn
	cut  int
	call *chatCall
}

// chatModel is the Bubble Tea model of `longrun chat`.
type chatModel struct {
	ctx     context.Context
	a       *app // the CLI with its output going to the chat's notes
	c       sessionClient
	session string
	send    func(tea.Msg)
	wg      sync.WaitGroup
	stop    context.CancelFunc // ends the follower and the pending poll

	// newSession makes the start options of a session from its first
	// message (chat with no SESSION).
	newSession func(prompt string) (startOptions, error)
	workdirSet bool
	starting   bool

	entries []chatEntry
	calls   map[string]*chatCall
	partial string
	phase   string
	turn    int
	lost    string // follow.KindLost or KindNoWorker while the stream cannot be read
	// lostServer says the server itself was lost since the stream last
	// read, whatever follows (its workers reconnect after it).
	lostServer bool
	closed     string // how the session closed, "" while it runs
	detached   bool

	pending  []workflows.PendingApproval
	inflight map[string]bool // a decision on this call is being sent
	// settled is, for each call decided from here, the epoch at which
	// the decision was answered; epoch counts those answers. A poll of
	// the waiting calls sent before an answer may still list the call
	// as waiting: without this the prompt came back for it, and the
	// next key typed (the a of "also…") went to a call already decided.
	settled  map[string]int64
	epoch    atomic.Int64
	unsent   []decisionMsg   // decisions the server did not take: sent again
	viewing  string          // the call whose whole arguments are shown (v)
	viewed   map[string]bool // calls shown whole: approve is allowed
	expanded bool            // tool calls unfolded (Ctrl-O)

	mode       chatMode
	denying    workflows.PendingApproval // the call whose feedback is being typed
	input      []rune
	saved      []rune // the line being typed when Ctrl-R opened its prompt
	scroll     int    // lines back from the conversation's end
	viewScroll int    // lines down from the top of the call viewed
	width      int
	height     int
	color      bool
}

func newChatModel(ctx context.Context, a *app, c sessionClient, session string) *chatModel {
	m := &chatModel{ctx: ctx, c: c, session: session, calls: map[string]*chatCall{},
		inflight: map[string]bool{}, settled: map[string]int64{}, viewed: map[string]bool{}, width: 80, height: 24}
	n := &notes{send: func(msg tea.Msg) { m.send(msg) }}
	ca := *a
	ca.stdout, ca.stderr = n, n
	ca.ui = watchUI{} // plain words: no colour, no spinner
	m.a = &ca
	return m
}

// Init attaches to the session, or waits for the first message.
func (m *chatModel) Init() tea.Cmd {
	if m.session == "" {
		m.note("type what the session should do; Enter starts it here (as " + progName + " start does)")
		return nil
	}
	m.attach()
	return nil
}

// attach follows the session's events from the first one kept and polls
// its waiting calls, each in a goroutine that hands what it reads to the
// loop.
func (m *chatModel) attach() {
	ctx, cancel := context.WithCancel(m.ctx)
	m.stop = cancel
	opts := follow.Options{Interval: m.a.interval(), DataConverter: m.a.dataConverter(), SubAgents: true}
	m.wg.Add(2)
	go func() {
		defer m.wg.Done()
		for e := range follow.FollowWith(ctx, m.c, m.session, 0, opts) {
			m.send(eventMsg(e))
		}
	}()
	go func() {
		defer m.wg.Done()
		for {
			asked := m.epoch.Load()
			qctx, qcancel := context.WithTimeout(ctx, watchPollTimeout)
			ps, err := m.a.queryPending(qctx, m.c, m.session)
			qcancel()
			if err == nil {
				m.send(polledMsg{asked: asked, ps: ps})
			} // else: follow says when the server is lost
			if !sleepCtx(ctx, m.a.interval()) {
				return
			}
		}
	}()
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (m *chatModel) note(s string) { m.entries = append(m.entries, chatEntry{kind: "note", text: s}) }

// Update handles one message.
func (m *chatModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case noteMsg:
		m.note(string(msg))
	case startedMsg:
		m.starting = false
		m.session = string(msg)
		m.attach()
	case eventMsg:
		return m, m.event(follow.Event(msg))
	case polledMsg:
		return m.Update(pendingMsg(m.fresh(msg)))
	case pendingMsg:
		m.pending = msg
		for _, p := range msg {
			if c := m.calls[p.ID]; c != nil {
				c.args = p.Arguments
			}
		}
	case turnDone:
		for _, l := range msg {
			m.note(l)
		}
	case decisionMsg:
		return m, m.decided(msg)
	case retryMsg:
		return m, m.retry()
	case argsMsg:
		for id, args := range msg {
			if c := m.calls[id]; c != nil && c.args == "" {
				c.args = args
			}
		}
	case startFailed:
		m.starting = false
		m.input = []rune(msg.text)
		m.note("✗ " + untrusted.Line(msg.err.Error()))
	case sendFailed:
		if len(m.input) == 0 {
			m.input = []rune(msg.text)
		}
		m.note("✗ " + untrusted.Line(msg.err.Error()) + " (the message is back on the line)")
	case tea.KeyPressMsg:
		return m, m.key(msg)
	case tea.PasteMsg:
		// A paste is text for the line, never an answer to a call.
		if m.mode != modeConfirm {
			m.input = append(m.input, []rune(msg.Content)...)
		}
	}
	return m, nil
}

// event takes one event of the stream into the transcript.
func (m *chatModel) event(e follow.Event) tea.Cmd {
	sub := e.SubAgent != "" // a sub-agent's event, not the session's
	call := func() *chatCall {
		if e.Call == nil {
			return &chatCall{}
		}
		id := e.Call.ID
		if sub {
			// Named as the parent's pending list names a sub-agent's
			// calls, shortened to the part under this session.
			id = m.subName(e.SubAgent) + "/" + id
		}
		c := m.calls[id]
		if c == nil {
			c = &chatCall{id: id, tool: e.Call.Tool, summary: e.Call.Summary}
			m.calls[id] = c
			m.entries = append(m.entries, chatEntry{kind: "call", call: c})
		}
		return c
	}
	if sub {
		switch e.Kind {
		case eventlog.KindCallProposed, eventlog.KindCallDecided, eventlog.KindCallStarted, eventlog.KindCallFinished:
			// A sub-agent's calls show as the parent's do, below.
		case eventlog.KindText:
			m.note(fmt.Sprintf("sub-agent %s: %s", showID(m.subName(e.SubAgent)), untrusted.Preview(e.Text, 300, "")))
			return nil
		case eventlog.KindTurnFinished:
			if e.Outcome != "ok" {
				m.note(fmt.Sprintf("sub-agent %s, turn %d: the model call %s%s", showID(m.subName(e.SubAgent)), e.Turn, untrusted.Token(e.Outcome), withText(e.Text)))
			}
			return nil
		case eventlog.KindEnded:
			m.note(fmt.Sprintf("sub-agent %s ended: %s%s", showID(m.subName(e.SubAgent)), untrusted.Token(e.Outcome), withText(e.Text)))
			return nil
		case eventlog.KindSubagentStarted:
			m.note(fmt.Sprintf("sub-agent %s started by %s%s", showID(m.subName(e.Session)), showID(m.subName(e.SubAgent)), withText(e.Text)))
			return nil
		case follow.KindError, follow.KindMissed:
			m.note(fmt.Sprintf("sub-agent %s: %s", showID(m.subName(e.SubAgent)), untrusted.Line(e.Text)))
			return nil
		default:
			// Its phases, turns, prompt and reasoning: the parent's
			// state is what the chat shows, and the sub-agent's whole
			// conversation is `longrun conversation` of it.
			return nil
		}
	}
	by := func() string {
		if e.Call != nil && e.Call.By != "" {
			return " by " + untrusted.Token(e.Call.By)
		}
		return ""
	}
	switch e.Kind {
	case eventlog.KindPhase:
		m.phase = e.Phase
	case eventlog.KindUserMessage:
		m.entries = append(m.entries, chatEntry{kind: "user", text: e.Text, cut: e.Cut})
	case eventlog.KindTurnStarted:
		m.turn, m.partial = e.Turn, ""
		m.entries = append(m.entries, chatEntry{kind: "turn", text: fmt.Sprintf("turn %d", e.Turn)})
	case eventlog.KindTurnFinished:
		m.partial = ""
		if e.Outcome != "ok" {
			m.note(fmt.Sprintf("turn %d: the model call %s%s", e.Turn, untrusted.Token(e.Outcome), withText(e.Text)))
		}
	case eventlog.KindReasoning:
		m.entries = append(m.entries, chatEntry{kind: "reasoning", text: e.Text, cut: e.Cut})
	case eventlog.KindText:
		m.partial = ""
		m.entries = append(m.entries, chatEntry{kind: "text", text: e.Text, cut: e.Cut})
	case eventlog.KindCallProposed:
		c := call()
		switch e.Outcome {
		case "allow":
			c.decision = "allowed" + by()
		case "ask":
			c.state = "waits for you" + withText(e.Text)
		case "review":
			c.state = "the guardian reviews it"
		default:
			c.state = untrusted.Token(e.Outcome) + withText(e.Text)
		}
	case eventlog.KindCallDecided:
		c := call()
		switch e.Outcome {
		case workflows.DecisionApprove:
			c.decision = "approved" + by()
		case workflows.DecisionDeny:
			c.decision = "denied" + by() + withText(e.Text)
		default:
			c.decision = untrusted.Token(e.Outcome) + by() + withText(e.Text)
		}
		c.state = ""
	case eventlog.KindCallStarted:
		call().state = "running"
	case eventlog.KindCallFinished:
		c := call()
		c.state, c.result = untrusted.Token(e.Outcome), e.Text
		c.isError = e.Call != nil && e.Call.IsError
	case eventlog.KindRewound:
		m.note(fmt.Sprintf("rewound to turn %d (%s)", e.Turn, untrusted.Token(e.Outcome)))
	case eventlog.KindSubagentStarted:
		id := ""
		if e.Call != nil {
			id = " for call " + showID(e.Call.ID)
		}
		m.note(fmt.Sprintf("sub-agent %s started%s%s", showID(m.subName(e.Session)), id, withText(e.Text)))
	case eventlog.KindEnded:
		m.note("session ended: " + untrusted.Token(e.Outcome) + withText(e.Text))
	case follow.KindPartial:
		m.partial = e.Text
	case follow.KindMissed:
		m.note(untrusted.Line(e.Text))
	case follow.KindLost:
		m.lost, m.lostServer = follow.KindLost, true
		m.note(fmt.Sprintf("lost the server at %s (%s); trying again until it is back. Decisions are kept and sent once it answers", m.a.cfg.Address, untrusted.Line(e.Text)))
	case follow.KindNoWorker:
		// Also said while the workers reconnect to a server that is back.
		m.lost = follow.KindNoWorker
		m.note(fmt.Sprintf("%s. If none is running, start one (%s worker): the session goes on where it stopped. Decisions are kept and sent once one answers", untrusted.Line(e.Text), progName))
	case follow.KindBack:
		if m.lostServer {
			m.note(fmt.Sprintf("the server at %s is back", m.a.cfg.Address))
		} else {
			m.note("a worker answers the session again")
		}
		m.lost, m.lostServer = "", false
		return m.retry()
	case follow.KindClosed:
		m.closed, m.partial, m.pending = e.Outcome, "", nil
		if m.stop != nil {
			m.stop()
		}
		m.note("session closed: " + untrusted.Token(e.Outcome) + "; Enter or Ctrl-D leaves")
	case follow.KindError:
		m.note("the event stream ended: " + untrusted.Line(e.Text))
	default:
		m.note(follow.Line(e, ""))
	}
	return nil
}

// subName is a sub-agent's session id as the chat shows it: the part
// under this session ("task-1", "task-1/task-2"), or the whole id.
func (m *chatModel) subName(id string) string {
	if rest, ok := strings.CutPrefix(id, m.session+"/"); ok && rest != "" {
		return rest
	}
	return id
}

// withText is ": text" on one line, rendered, or "".
func withText(s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return ": " + untrusted.Preview(s, 300, "")
}

// fresh is what a poll saw waiting, less the calls whose decision was
// answered after the poll was sent: the poll may have read the session
// before the decision.
func (m *chatModel) fresh(msg polledMsg) []workflows.PendingApproval {
	out := make([]workflows.PendingApproval, 0, len(msg.ps))
	for _, p := range msg.ps {
		if at, ok := m.settled[p.ID]; ok && at > msg.asked {
			continue
		}
		out = append(out, p)
	}
	return out
}

// waiting is the first call that waits for a person and has no decision
// on its way, or nil.
func (m *chatModel) waiting() *workflows.PendingApproval {
	if m.closed != "" {
		return nil
	}
	for i := range m.pending {
		if !m.inflight[m.pending[i].ID] {
			return &m.pending[i]
		}
	}
	return nil
}

// key handles one key press.
func (m *chatModel) key(k tea.KeyPressMsg) tea.Cmd {
	switch m.mode {
	case modeConfirm:
		m.mode = modeInput
		if t, ok := typed(k); ok && strings.EqualFold(t, "y") {
			return m.cancelSession()
		}
		m.note("not cancelled")
		return nil
	case modeFeedback:
		return m.feedbackKey(k)
	case modeTurn:
		return m.turnKey(k)
	}
	switch k.Keystroke() {
	case "ctrl+d":
		m.detached = true
		return tea.Quit
	case "ctrl+c":
		if m.session == "" || m.closed != "" {
			return tea.Quit
		}
		m.mode = modeConfirm
		return nil
	case "esc":
		if m.viewing != "" {
			m.viewing = ""
			return nil
		}
		return m.interrupt()
	case "ctrl+r":
		return m.openTurnPrompt()
	case "ctrl+o":
		m.expanded = !m.expanded
		if m.expanded {
			return m.readArguments()
		}
		return nil
	case "pgup":
		if m.viewing != "" {
			m.viewScroll = max(0, m.viewScroll-max(1, m.height/2))
		} else {
			m.scroll += max(1, m.height/2)
		}
		return nil
	case "pgdown":
		if m.viewing != "" {
			m.viewScroll += max(1, m.height/2)
		} else {
			m.scroll = max(0, m.scroll-max(1, m.height/2))
		}
		return nil
	case "enter":
		if m.closed != "" {
			return tea.Quit
		}
		return m.submit()
	case "backspace":
		if len(m.input) > 0 {
			m.input = m.input[:len(m.input)-1]
		}
		return nil
	case "ctrl+u":
		m.input = nil
		return nil
	case "space":
		m.input = append(m.input, ' ')
		return nil
	default:
		t, ok := typed(k)
		if !ok {
			return nil
		}
		if p := m.waiting(); p != nil && len(m.input) == 0 && utf8.RuneCountInString(t) == 1 {
			if cmd, ok := m.answer(*p, []rune(t)[0]); ok {
				return cmd
			}
		}
		m.input = append(m.input, []rune(t)...)
	}
	return nil
}

// typed is the text a key press types: a printable key, with no Ctrl or
// Alt held (those are commands, or nothing).
func typed(k tea.KeyPressMsg) (string, bool) {
	if k.Text == "" || k.Mod.Contains(tea.ModCtrl) || k.Mod.Contains(tea.ModAlt) {
		return "", false
	}
	return k.Text, true
}

// answer acts on a key pressed at a waiting call with the input line
// empty: a approves, d asks for feedback and denies, s approves and
// remembers for the session, v shows the whole call. ok is false for any
// other key, which is typed into the line.
func (m *chatModel) answer(p workflows.PendingApproval, r rune) (tea.Cmd, bool) {
	ap := workflows.Approval{ID: p.ID, Digest: p.Digest}
	switch r {
	case 'a', 's':
		if _, whole := m.approvalFields(p); !whole && !m.viewed[p.ID] {
			m.note(fmt.Sprintf("part of %s is hidden: press v to see all of it before approving", showID(p.ID)))
			return nil, true
		}
		ap.Decision = workflows.DecisionApprove
		if r == 's' {
			ap.Remember = workflows.RememberSession
		}
		m.viewing = ""
		return m.decide(p, ap), true
	case 'd':
		m.mode, m.denying = modeFeedback, p
		return nil, true
	case 'v':
		if m.viewing == p.ID {
			m.viewing = ""
		} else {
			m.viewing, m.viewed[p.ID], m.viewScroll = p.ID, true, 0
		}
		return nil, true
	}
	return nil, false
}

// feedbackKey edits the feedback of a deny: Enter denies with it (empty:
// without), Esc goes back without deciding.
func (m *chatModel) feedbackKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.Keystroke() {
	case "esc":
		m.mode, m.input = modeInput, nil
	case "enter":
		m.mode = modeInput
		feedback := strings.TrimSpace(string(m.input))
		m.input = nil
		// The call d was pressed at, not whichever waits first now.
		p := m.denying
		for _, q := range m.pending {
			if q.ID == p.ID && !m.inflight[p.ID] && m.closed == "" {
				m.viewing = ""
				return m.decide(p, workflows.Approval{ID: p.ID, Digest: p.Digest, Decision: workflows.DecisionDeny, Feedback: feedback})
			}
		}
		m.note(fmt.Sprintf("%s no longer waits; nothing was denied", showID(p.ID)))
	case "ctrl+d":
		m.detached = true
		return tea.Quit
	default:
		m.edit(k)
	}
	return nil
}

// edit applies a typing key to the input line (the message's, or the
// turn prompt's): backspace, space, or printable text without Ctrl/Alt.
func (m *chatModel) edit(k tea.KeyPressMsg) {
	switch k.Keystroke() {
	case "backspace":
		if len(m.input) > 0 {
			m.input = m.input[:len(m.input)-1]
		}
	case "space":
		m.input = append(m.input, ' ')
	default:
		if t, ok := typed(k); ok {
			m.input = append(m.input, []rune(t)...)
		}
	}
}

// decide sends a decision with the approve update, as approve and deny
// do; the call leaves the prompt until the outcome is known.
func (m *chatModel) decide(p workflows.PendingApproval, ap workflows.Approval) tea.Cmd {
	m.inflight[p.ID] = true
	if ap.Author == "" {
		ap.Author = localAuthor() // who decided, for the pull request's body
	}
	a, c, session, ctx := m.a, m.c, m.session, m.ctx
	return func() tea.Msg {
		out, err := a.sendDecision(ctx, c, session, p.ID, ap)
		if err == nil && out == notTaken {
			a.fallbackNote(session, fmt.Sprintf("no worker took the update within %s", decisionWait))
			err = a.signalDecision(ctx, c, session, ap)
		}
		return decisionMsg{p: p, ap: ap, out: out, err: err}
	}
}

// decided reports what became of a decision. One the server did not
// answer is kept and sent again: a decision is never dropped unsaid.
func (m *chatModel) decided(d decisionMsg) tea.Cmd {
	id := showID(d.p.ID)
	switch {
	case d.err == nil:
		delete(m.inflight, d.p.ID)
		m.settled[d.p.ID] = m.epoch.Add(1)
		m.pending = slices.DeleteFunc(m.pending, func(p workflows.PendingApproval) bool { return p.ID == d.p.ID })
		verb := "approved"
		if d.ap.Decision == workflows.DecisionDeny {
			verb = "denied"
		}
		if d.ap.Remember != "" {
			verb += " (and remembered for the session)"
		}
		s := fmt.Sprintf("%s %s (%s)", verb, id, untrusted.Token(d.p.Tool))
		if d.out == decidedUnanswered {
			s += " — the reply was lost; the session's history shows it took the decision"
		}
		m.note(s)
	case m.ctx.Err() != nil:
	case unreachable(d.err):
		m.unsent = append(m.unsent, d)
		m.note(fmt.Sprintf("✗ the %s of %s was NOT recorded: the server at %s does not answer (%s); chat sends it again until it does",
			d.ap.Decision, id, m.a.cfg.Address, untrusted.Line(shortErr(d.err))))
		if len(m.unsent) == 1 {
			return tea.Tick(chatRetry, func(time.Time) tea.Msg { return retryMsg{} })
		}
	default:
		delete(m.inflight, d.p.ID)
		m.note("✗ " + untrusted.Line(d.err.Error()))
	}
	return nil
}

// retry sends every decision not taken again.
func (m *chatModel) retry() tea.Cmd {
	if len(m.unsent) == 0 {
		return nil
	}
	var cmds []tea.Cmd
	for _, d := range m.unsent {
		m.note(fmt.Sprintf("sending the %s of %s again", d.ap.Decision, showID(d.p.ID)))
		cmds = append(cmds, m.decide(d.p, d.ap))
	}
	m.unsent = nil
	return tea.Batch(cmds...)
}

// submit sends the line: the first message starts the session; later
// ones go with the user-message signal (the session queues one that
// comes while the model works). A line that could not be sent stays.
func (m *chatModel) submit() tea.Cmd {
	text := strings.TrimSpace(string(m.input))
	if text == "" {
		return nil
	}
	if m.session == "" {
		if m.starting {
			return nil
		}
		o, err := m.newSession(text)
		if err != nil {
			m.note(untrusted.Line(err.Error()))
			return nil
		}
		m.starting, m.input = true, nil
		a, c, ctx, workdirSet := m.a, m.c, m.ctx, m.workdirSet
		return func() tea.Msg {
			run, p, err := a.launch(ctx, c, &o, workdirSet)
			if err != nil {
				return startFailed{err, text}
			}
			a.describeStart(ctx, run.GetID(), o, p)
			return startedMsg(run.GetID())
		}
	}
	if m.closed != "" {
		m.note("the session has closed; nothing was sent")
		return nil
	}
	m.input = nil
	a, c, ctx, session, busy := m.a, m.c, m.ctx, m.session, m.phase == workflows.PhaseRunning
	return func() tea.Msg {
		err := c.SignalWorkflow(ctx, session, "", workflows.SignalUserMessage, workflows.UserMessage{Text: text})
		if err != nil {
			err = a.signalError(ctx, c, err, workflows.SignalUserMessage, session, "nothing was sent")
			return sendFailed{err, text}
		}
		if busy {
			return noteMsg("sent; the session takes it once the model's turn ends")
		}
		return noteMsg("sent")
	}
}

type (
	// startFailed: the session did not start; the message is kept.
	startFailed struct {
		err  error
		text string
	}
	// sendFailed: the message was not sent; it is put back on the line.
	sendFailed struct {
		err  error
		text string
	}
)

// argsMsg is the arguments of the conversation's calls, by the
// session's id of each call.
type argsMsg map[string]string

// readArguments reads the arguments of the calls the chat has not seen
// wait (a call the policy allowed shows only its summary in the event
// stream) from the conversation query, for the unfolded view.
func (m *chatModel) readArguments() tea.Cmd {
	if m.session == "" {
		return nil
	}
	a, c, ctx, session := m.a, m.c, m.ctx, m.session
	return func() tea.Msg {
		qctx, cancel := context.WithTimeout(ctx, watchPollTimeout)
		defer cancel()
		msgs, err := a.queryConversation(qctx, c, session)
		if err != nil {
			return noteMsg("the calls' arguments could not be read: " + untrusted.Line(shortErr(err)))
		}
		args := argsMsg{}
		for _, msg := range msgs {
			for _, tc := range msg.ToolCalls {
				if tc.Ref != "" {
					args[tc.Ref] = tc.Arguments
				}
			}
		}
		return args
	}
}

// interrupt stops the current turn with the interrupt signal.
func (m *chatModel) interrupt() tea.Cmd {
	if m.session == "" || m.closed != "" {
		return nil
	}
	a, c, ctx, session := m.a, m.c, m.ctx, m.session
	return func() tea.Msg {
		if err := c.SignalWorkflow(ctx, session, "", workflows.SignalInterrupt, struct{}{}); err != nil {
			return noteMsg("✗ " + untrusted.Line(a.signalError(ctx, c, err, workflows.SignalInterrupt, session, "nothing to interrupt").Error()))
		}
		return noteMsg("interrupt sent: the current turn stops and the session waits for your next message")
	}
}

// cancelSession cancels the session, once the person said y.
func (m *chatModel) cancelSession() tea.Cmd {
	a, c, ctx, session := m.a, m.c, m.ctx, m.session
	return func() tea.Msg {
		if err := c.CancelWorkflow(ctx, session, ""); err != nil {
			return noteMsg("✗ " + untrusted.Line(sessionError(err, "cancel", session, a.cfg.Namespace).Error()))
		}
		return noteMsg("cancel requested: waiting calls get cancelled results and the session closes")
	}
}
