package session

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/longrun/longrun/conversation"
)

// Rewind and fork (issue 33). Every finished turn leaves a mark: where
// the conversation stood when the turn ended and which checkpoint held
// the checkout's files then. Going back to a turn (rewind, in place) or
// starting a new session from it (fork) reads only the mark: nothing of
// the conversation has to be re-read from a store, and the checkpoint
// commit is already in the session's own repository.

// maxMarks bounds the marks a session keeps (and carries across
// continue-as-new): the oldest go first.
const maxMarks = 200

// TurnMark is where a finished turn left the session.
type TurnMark struct {
	Turn int `json:"turn"`
	// Head is the transcript reference of the conversation before
	// Messages (as State.Head); with Head set, Messages is a copy of what
	// followed it at the end of the turn (the turn's reply and results:
	// a few messages, since each model call moves Head on).
	Head     string                 `json:"head,omitempty"`
	Messages []conversation.Message `json:"messages,omitempty"`
	// Upto is, for a session without a transcript (Head ""), how many of
	// State.Messages the conversation had: they are all inline, so the
	// mark names a prefix instead of copying it. Valid while Compactions
	// is the state's.
	Upto        int `json:"upto,omitempty"`
	Compactions int `json:"compactions,omitempty"`
	// Checkpoint is the checkout's last checkpoint at the end of the turn
	// ("" none yet: the files were the base's). Unsaved: files may have
	// changed since it (its checkpoint failed), so the turn's files are
	// not known.
	Checkpoint string `json:"checkpoint,omitempty"`
	Unsaved    bool   `json:"unsaved,omitempty"`
}

// MarkTurn records the end of the current turn: a mark for the same turn
// (a batch resumed after continue-as-new) is replaced.
func (st *State) MarkTurn() {
	m := TurnMark{Turn: st.Turn, Head: st.Head}
	if st.Head != "" {
		m.Messages = slices.Clone(st.Messages)
	} else {
		m.Upto, m.Compactions = len(st.Messages), st.Compactions
	}
	if st.Checkout.Isolated() {
		m.Checkpoint, m.Unsaved = st.Checkout.Checkpoint, st.Checkout.Due
	}
	st.Marks = slices.DeleteFunc(st.Marks, func(o TurnMark) bool { return o.Turn >= m.Turn })
	st.Marks = append(st.Marks, m)
	if len(st.Marks) > maxMarks {
		st.Marks = slices.Delete(st.Marks, 0, len(st.Marks)-maxMarks)
	}
}

// ErrNoTurn and ErrNoCheckpoint say why a session cannot go back to a
// turn; the text around them names the turns it can go back to.
var (
	ErrNoTurn       = errors.New("no such turn")
	ErrNoCheckpoint = errors.New("no checkpoint of the turn's files")
)

// Mark is the mark of turn, or why the session cannot go back there: a
// turn it never finished (or forgot), a session with no checkout of its
// own (its files have no checkpoints), a sub-agent (its files are its
// parent's), a turn whose checkpoint failed, or a transcript-less
// conversation compacted since.
func (st *State) Mark(turn int, subagent bool) (TurnMark, error) {
	switch {
	case subagent:
		return TurnMark{}, fmt.Errorf("%w: a sub-agent works in its parent's checkout; rewind or fork the parent", ErrNoCheckpoint)
	case !st.Checkout.Isolated():
		return TurnMark{}, fmt.Errorf("%w: the session runs in place, without a checkout of its own, so its files have no checkpoints to go back to", ErrNoCheckpoint)
	}
	i := slices.IndexFunc(st.Marks, func(m TurnMark) bool { return m.Turn == turn })
	if i < 0 {
		return TurnMark{}, fmt.Errorf("turn %d: %w (turns to go back to: %s)", turn, ErrNoTurn, st.MarkedTurns())
	}
	m := st.Marks[i]
	switch {
	case m.Unsaved:
		return TurnMark{}, fmt.Errorf("turn %d: %w: the checkpoint after it failed, so its files are not known; pick another turn (%s)", turn, ErrNoCheckpoint, st.MarkedTurns())
	case m.Head == "" && (m.Compactions != st.Compactions || m.Upto > len(st.Messages)):
		return TurnMark{}, fmt.Errorf("turn %d: %w: the conversation was compacted since, and without a transcript store its messages before that are gone", turn, ErrNoTurn)
	}
	return m, nil
}

// MarkedTurns lists the turns a session can go back to, for messages
// ("1-4, 7" style is not worth it: a plain list, or "none").
func (st *State) MarkedTurns() string {
	var ns []string
	for _, m := range st.Marks {
		if !m.Unsaved {
			ns = append(ns, strconv.Itoa(m.Turn))
		}
	}
	if len(ns) == 0 {
		return "none"
	}
	return strings.Join(ns, ", ")
}

// Conversation is the conversation the mark names: Head, and the
// messages after it.
func (st *State) Conversation(m TurnMark) (string, []conversation.Message) {
	if m.Head != "" {
		return m.Head, slices.Clone(m.Messages)
	}
	return "", slices.Clone(st.Messages[:m.Upto])
}

// RewindTo puts the conversation back to the mark's, forgets the marks of
// the later turns (they are no longer this conversation's), and tells the
// model what happened. The turn counter goes on: the later turns stay in
// the history, and the next turn is a new number.
func (st *State) RewindTo(m TurnMark) {
	st.Head, st.Messages = st.Conversation(m)
	st.Marks = slices.DeleteFunc(st.Marks, func(o TurnMark) bool { return o.Turn > m.Turn })
	st.Seen = nil // the files changed under the model: it has read none of them as they are now
	st.Messages = append(st.Messages, conversation.Message{Role: conversation.RoleUser, Content: RewoundText(st.Turn, m)})
	if st.Checkout.Isolated() {
		c := st.Checkout
		c.Checkpoint, c.Due, c.ByPath, c.Paths = m.Checkpoint, false, false, nil
	}
}

// RewoundText is the message the model gets after a rewind.
func RewoundText(from int, m TurnMark) string {
	files := "the files are as they were at its end"
	if m.Checkpoint != "" {
		files += " (checkpoint " + short(m.Checkpoint) + ")"
	} else {
		files += " (the session's base: no checkpoint had changed them yet)"
	}
	return fmt.Sprintf("[longrun] The person rewound this session from turn %d to turn %d: the conversation after turn %d is gone from here (it stays in the session's history) and %s. Anything you did after turn %d did not happen; re-read the files you rely on before you go on.", from, m.Turn, m.Turn, files, m.Turn)
}

// TurnSummary is the turn's reply in a line, for a person picking a turn:
// the first line of its text, else the tools it called.
func (st *State) TurnSummary(m TurnMark) string {
	msgs := m.Messages
	if m.Head == "" && m.Upto <= len(st.Messages) {
		msgs = st.Messages[:m.Upto]
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		r := msgs[i]
		if r.Role != conversation.RoleAssistant {
			continue
		}
		if line, _, _ := strings.Cut(strings.TrimSpace(r.Content), "\n"); line != "" {
			return line
		}
		var names []string
		for _, c := range r.ToolCalls {
			names = append(names, c.Name)
		}
		return "called " + strings.Join(names, ", ")
	}
	return ""
}

// MarkedCheckpoints are the checkpoints marks name, oldest first, each
// once: what a closing checkout keeps for a fork after the close.
func MarkedCheckpoints(marks []TurnMark) []string {
	var out []string
	for _, m := range marks {
		if m.Checkpoint != "" && !m.Unsaved && !slices.Contains(out, m.Checkpoint) {
			out = append(out, m.Checkpoint)
		}
	}
	return out
}
