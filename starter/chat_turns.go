package main

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"

	"github.com/longrun/longrun/untrusted"
)

// Rewind and fork from inside the chat (issue 33): Ctrl-R opens a prompt
// where the person types "r 3" (rewind to turn 3) or "f 3" (fork at turn
// 3), optionally followed by a message; Enter runs the same code as
// longrun rewind and longrun fork, Esc goes back to the line being typed.

// turnPromptText is the prompt of modeTurn.
const turnPromptText = "r N rewinds to turn N, f N forks at turn N (words after N: a message); Enter runs it, Esc goes back"

// turnAction is what the Ctrl-R prompt asks for.
type turnAction struct {
	fork  bool   // fork at turn; false: rewind to it
	turn  int    // the turn, > 0
	words string // the message: rewind's to the model, the fork's first
}

// parseTurnAction reads the Ctrl-R prompt's line: "r N" or "rewind N",
// "f N" or "fork N", the number written next to the letter or apart
// ("r3"), then optional words. The error is a line for the person.
func parseTurnAction(line string) (turnAction, error) {
	s := strings.TrimSpace(line)
	if s == "" {
		return turnAction{}, fmt.Errorf("type r N to rewind to turn N or f N to fork at turn N (Esc goes back)")
	}
	verb := strings.ToLower(strings.TrimRightFunc(strings.Fields(s)[0], unicode.IsDigit))
	var a turnAction
	switch verb {
	case "r", "rewind":
	case "f", "fork":
		a.fork = true
	default:
		return turnAction{}, fmt.Errorf("'%s': start with r (rewind to a turn) or f (fork at a turn), then the turn's number", untrusted.Preview(s, 40, ""))
	}
	rest := strings.TrimSpace(s[len(verb):])
	num := rest
	if i := strings.IndexFunc(rest, unicode.IsSpace); i >= 0 {
		num, a.words = rest[:i], strings.TrimSpace(rest[i:])
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 {
		return turnAction{}, fmt.Errorf("'%s': the turn is a number from 1, as the chat's \"── turn N ──\" lines show it", untrusted.Preview(s, 40, ""))
	}
	a.turn = n
	return a, nil
}

// turnDone is what became of a rewind or fork: the lines to show.
type turnDone []string

// openTurnPrompt is Ctrl-R: the line being typed is kept for later.
func (m *chatModel) openTurnPrompt() tea.Cmd {
	if m.session == "" {
		m.note("there is no session yet: Ctrl-R rewinds or forks one once it has turns")
		return nil
	}
	m.mode, m.saved, m.input = modeTurn, m.input, nil
	return nil
}

// closeTurnPrompt goes back to the line that was being typed.
func (m *chatModel) closeTurnPrompt() {
	m.mode, m.input, m.saved = modeInput, m.saved, nil
}

// turnKey edits the Ctrl-R prompt: Enter runs it, Esc goes back. A line
// that does not parse stays, with a line saying why.
func (m *chatModel) turnKey(k tea.KeyPressMsg) tea.Cmd {
	switch k.Keystroke() {
	case "esc":
		m.closeTurnPrompt()
	case "enter":
		act, err := parseTurnAction(string(m.input))
		if err != nil {
			m.note("✗ " + err.Error())
			return nil
		}
		if m.turn > 0 && act.turn > m.turn {
			m.note(fmt.Sprintf("✗ turn %d: %s has reached turn %d; nothing changed", act.turn, untrusted.Token(m.session), m.turn))
			return nil
		}
		m.closeTurnPrompt()
		return m.runTurnAction(act)
	case "ctrl+u":
		m.input = nil
	case "ctrl+d":
		m.detached = true
		return tea.Quit
	default:
		m.edit(k)
	}
	return nil
}

// runTurnAction rewinds or forks with the code of longrun rewind and
// longrun fork, and hands back what they print. A fork does not switch
// the chat to it: the lines say how to attach.
func (m *chatModel) runTurnAction(act turnAction) tea.Cmd {
	a, c, ctx, session := m.a, m.c, m.ctx, m.session
	if act.fork {
		m.note(fmt.Sprintf("forking %s at turn %d…", untrusted.Token(session), act.turn))
		return func() tea.Msg {
			run, err := a.fork(ctx, c, session, act.turn, "", act.words)
			if err != nil {
				return turnDone{"✗ " + untrusted.Line(err.Error())}
			}
			id := run.GetID()
			return turnDone{
				untrusted.Line(forkedLine(session, act.turn, id, act.words)),
				untrusted.Line(fmt.Sprintf("this chat stays with %s; attach to the fork with: %s chat %s", session, progName, shellQuote(id))),
			}
		}
	}
	m.note(fmt.Sprintf("rewinding %s to turn %d (waits for the files to be back)…", untrusted.Token(session), act.turn))
	return func() tea.Msg {
		out, err := a.rewind(ctx, c, session, act.turn, act.words)
		if err != nil {
			return turnDone{"✗ " + untrusted.Line(err.Error())}
		}
		return turnDone{untrusted.Line(rewoundLine(session, out))}
	}
}
