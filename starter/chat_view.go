package main

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/longrun/longrun/follow"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// chatArgLimit is how much of one argument the approval prompt shows
// before v shows it whole: approve waits until v showed a cut call.
const chatArgLimit = 1500

// chatReasoningLines is how many lines of reasoning the transcript shows.
const chatReasoningLines = 12

// View draws the screen: a header, the transcript (or the whole call
// being viewed), the reply being written, the call waiting for a
// decision, the input line and the keys. Every string the model, a tool
// or a person controls is rendered by package untrusted before it is
// laid out; the only escape sequences are the chat's own colours. The
// chat has the terminal's alternate screen to itself.
func (m *chatModel) View() tea.View {
	v := tea.NewView(m.screen())
	v.AltScreen = true
	return v
}

// screen is the text of the screen.
func (m *chatModel) screen() string {
	st := style{color: m.color}
	var bottom []string
	if t := strings.TrimSpace(m.partial); t != "" {
		lines := m.wrap(st.paint("✎ writing: ", sgrDim) + untrusted.Visible(t))
		if len(lines) > 4 {
			lines = append([]string{st.paint("✎ …", sgrDim)}, lines[len(lines)-4:]...)
		}
		bottom = append(bottom, lines...)
	}
	if p := m.waiting(); p != nil && m.viewing == "" {
		bottom = append(bottom, m.approvalLines(st, *p, chatArgLimit)...)
	}
	for _, d := range m.unsent {
		bottom = append(bottom, m.wrap(st.paint(fmt.Sprintf("✗ not recorded yet: the %s of %s (sent again once the server answers)", d.ap.Decision, showID(d.p.ID)), sgrBold, sgrRed))...)
	}
	bottom = append(bottom, m.inputLines(st)...)
	bottom = append(bottom, m.wrap(st.paint(m.keysHelp(), sgrDim))...)

	header := m.header(st)
	var body []string
	if p := m.viewed1(); p != nil {
		body = append(m.wrap(st.paint("the whole of call "+showID(p.ID)+" (v or Esc goes back to the conversation):", sgrBold)), m.approvalLines(st, *p, 0)...)
	} else {
		for _, e := range m.entries {
			for _, l := range m.entryLines(st, e) {
				body = append(body, m.wrap(l)...)
			}
		}
	}
	room := max(1, m.height-1-len(bottom))
	var shown []string
	if m.viewed1() != nil {
		// A call is read from its top: PgDn goes down.
		from := min(m.viewScroll, max(0, len(body)-room))
		shown = body[from:min(len(body), from+room)]
		for len(shown) < room {
			shown = append(shown, "")
		}
	} else {
		// The conversation is read from its end: PgUp goes back.
		end := len(body) - min(m.scroll, max(0, len(body)-room))
		shown = body[max(0, end-room):end]
		for len(shown) < room {
			shown = append([]string{""}, shown...)
		}
	}
	return strings.Join(append(append([]string{header}, shown...), bottom...), "\n")
}

// viewed1 is the call shown whole (v), while it still waits.
func (m *chatModel) viewed1() *workflows.PendingApproval {
	if m.viewing == "" {
		return nil
	}
	if p := m.waiting(); p != nil && p.ID == m.viewing {
		return p
	}
	return nil
}

func (m *chatModel) header(st style) string {
	s := progName + " chat"
	if m.session != "" {
		s += " · " + untrusted.Token(m.session)
	} else {
		s += " · a new session"
	}
	if m.phase != "" {
		s += " · " + untrusted.Token(m.phase)
	}
	if m.turn > 0 {
		s += fmt.Sprintf(" · turn %d", m.turn)
	}
	h := st.paint(ansi.Truncate(s, m.width, "…"), sgrBold)
	switch m.lost {
	case follow.KindLost:
		h += " " + st.paint("LOST THE SERVER", sgrBold, sgrRed)
	case follow.KindNoWorker:
		h += " " + st.paint("NO WORKER", sgrBold, sgrRed)
	}
	return h
}

// wrap cuts a line into lines of the screen's width.
func (m *chatModel) wrap(l string) []string {
	return strings.Split(ansi.Wrap(l, max(10, m.width), ""), "\n")
}

// entryLines renders one transcript entry.
func (m *chatModel) entryLines(st style, e chatEntry) []string {
	text := func(s string, cut int) string {
		v := strings.TrimRight(untrusted.Visible(strings.ReplaceAll(s, "\r\n", "\n")), "\n")
		if cut > 0 {
			v += " " + untrusted.Cut{Bytes: cut}.Note(fullHint("conversation", m.session))
		}
		return v
	}
	switch e.kind {
	case "user":
		return prefixed(st.paint("you: ", sgrBold, sgrGreen), text(e.text, e.cut))
	case "text":
		return prefixed(st.paint("● ", sgrBold, sgrBlue), text(e.text, e.cut))
	case "reasoning":
		lines := strings.Split(text(e.text, e.cut), "\n")
		if len(lines) > chatReasoningLines {
			lines = append(lines[:chatReasoningLines], fmt.Sprintf("… %d more lines", len(lines)-chatReasoningLines))
		}
		for i, l := range lines {
			lines[i] = st.paint("  thinking: "+l, sgrDim)
		}
		return lines
	case "turn":
		return []string{st.paint("── "+e.text+" ──", sgrDim)}
	case "call":
		return m.callLines(st, e.call)
	}
	return []string{st.paint("· "+untrusted.Visible(e.text), sgrYellow)}
}

// prefixed puts p before the first line and indents the others.
func prefixed(p, s string) []string {
	lines := strings.Split(s, "\n")
	for i := range lines {
		if i == 0 {
			lines[i] = p + lines[i]
		} else {
			lines[i] = continuationSpace + lines[i]
		}
	}
	return lines
}

// callLines is a tool call: one line folded; unfolded (Ctrl-O), its
// arguments when the chat saw it wait, and the start of its result.
func (m *chatModel) callLines(st style, c *chatCall) []string {
	head := st.paint("⚙ ", sgrCyan) + st.paint("["+showID(c.id)+"] "+showID(c.tool), sgrBold)
	if c.summary != "" {
		head += " " + untrusted.Preview(c.summary, 160, "")
	}
	var status []string
	for _, s := range []string{c.decision, c.state} {
		if s != "" {
			status = append(status, s)
		}
	}
	if len(status) > 0 {
		code := sgrDim
		if c.isError || strings.HasPrefix(c.decision, "denied") {
			code = sgrRed
		}
		head += " — " + st.paint(strings.Join(status, " · "), code)
	}
	lines := []string{head}
	if !m.expanded {
		if r := strings.TrimSpace(c.result); r != "" {
			lines = append(lines, continuationSpace+st.paint("⎿ "+untrusted.Preview(r, 120, "Ctrl-O unfolds"), sgrDim))
		}
		return lines
	}
	if c.args != "" {
		for _, l := range fieldLines(st, argumentFields(c.tool, c.args, chatArgLimit)) {
			lines = append(lines, continuationSpace+l)
		}
	}
	if r := strings.TrimRight(c.result, "\n"); r != "" {
		for i, l := range strings.Split(untrusted.Visible(strings.ReplaceAll(r, "\r\n", "\n")), "\n") {
			p := "  "
			if i == 0 {
				p = "⎿ "
			}
			lines = append(lines, continuationSpace+p+st.diffLine(l))
		}
	}
	return lines
}

// approveKeys are the keys of a waiting call.
const approveKeys = "a approve · d deny (with feedback) · s approve and remember for the session · v view the whole call and its diff"

// approvalFields is a waiting call's arguments as the prompt shows
// them, and whether they are whole.
func (m *chatModel) approvalFields(p workflows.PendingApproval) ([]fieldView, bool) {
	fields := argumentFields(p.Tool, p.Arguments, chatArgLimit)
	for _, f := range fields {
		if f.Hidden != "" {
			return fields, false
		}
	}
	return fields, true
}

// approvalLines shows a waiting call to be decided: its tool, why it
// asks, each argument (an edit as a diff, as the console shows it), cut
// to limit bytes each (0: whole), and the keys.
func (m *chatModel) approvalLines(st style, p workflows.PendingApproval, limit int) []string {
	head := st.paint("⏸ approval needed", sgrBold, sgrYellow) + " " + st.paint("["+showID(p.ID)+"]", sgrDim) + " " + st.paint(oneLine(p.Tool), sgrBold)
	if p.Reason != "" {
		head += " (" + oneLine(p.Reason) + ")"
	}
	out := m.wrap(head)
	for _, l := range fieldLines(st, argumentFields(p.Tool, p.Arguments, limit)) {
		out = append(out, m.wrap(continuationSpace+l)...)
	}
	return append(out, m.wrap(st.paint(approveKeys, sgrBold))...)
}

// fieldLines lays out a call's arguments: a diff line by line, coloured
// as git does; text as it is (already made visible).
func fieldLines(st style, fields []fieldView) []string {
	var out []string
	for _, f := range fields {
		key := st.paint(untrusted.Line(f.Key)+":", sgrDim)
		switch {
		case f.Diff != nil:
			out = append(out, key)
			for _, l := range f.Diff {
				out = append(out, "  "+st.diffLine(l.Text))
			}
		case f.Block:
			out = append(out, key)
			for _, l := range strings.Split(f.Text, "\n") {
				out = append(out, "  "+l)
			}
		default:
			out = append(out, key+" "+f.Text)
		}
		if f.Hidden != "" {
			out = append(out, "  "+st.paint(f.Hidden, sgrBold, sgrYellow))
		}
	}
	return out
}

// inputLines is the line being typed, with what it is for.
func (m *chatModel) inputLines(st style) []string {
	var p string
	switch {
	case m.mode == modeConfirm:
		return m.wrap(st.paint("cancel the session? y/n ", sgrBold, sgrRed))
	case m.mode == modeFeedback:
		p = "feedback for the model (Enter denies, Esc goes back): "
	case m.mode == modeTurn:
		out := m.wrap(st.paint(turnPromptText, sgrDim))
		return append(out, m.wrap(st.paint("rewind or fork> ", sgrBold)+untrusted.Visible(string(m.input))+"█")...)
	case m.session == "" && m.starting:
		return m.wrap(st.paint("starting the session…", sgrDim))
	case m.session == "":
		p = "task> "
	case m.closed != "":
		return m.wrap(st.paint("the session has closed; Enter or Ctrl-D leaves", sgrBold))
	default:
		p = "> "
	}
	// What is typed is the person's own, but it is shown through the
	// renderer too: a pasted escape sequence shows as text.
	return m.wrap(st.paint(p, sgrBold) + untrusted.Visible(string(m.input)) + "█")
}

func (m *chatModel) keysHelp() string {
	if m.session == "" {
		return "Enter start · Ctrl-C or Ctrl-D leave"
	}
	return "Enter send · Esc interrupt · Ctrl-R rewind/fork · Ctrl-O fold/unfold calls · PgUp/PgDn scroll · Ctrl-C cancel · Ctrl-D detach"
}
