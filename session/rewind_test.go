package session

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/conversation"
)

func msg(role, text string) conversation.Message {
	return conversation.Message{Role: role, Content: text}
}

func isolatedState() *State {
	return &State{Checkout: &Checkout{Info: checkout.Info{Name: "s", Base: "base"}, Queue: "q"}}
}

func TestMarksNameEachTurnsConversationAndCheckpoint(t *testing.T) {
	t.Parallel()
	st := isolatedState()
	// Without a transcript every message is inline: a mark is a prefix.
	st.Messages = []conversation.Message{msg("user", "go"), msg("assistant", "one")}
	st.Turn = 1
	st.MarkTurn()
	st.Checkout.Checkpoint = "cp2"
	st.Messages = append(st.Messages, msg("assistant", "two"))
	st.Turn = 2
	st.MarkTurn()
	st.Checkout.Due = true // the checkpoint after turn 3 failed
	st.Messages = append(st.Messages, msg("assistant", "three"))
	st.Turn = 3
	st.MarkTurn()
	require.Equal(t, "1, 2", st.MarkedTurns())

	m, err := st.Mark(2, false)
	require.NoError(t, err)
	require.Equal(t, "cp2", m.Checkpoint)
	require.Equal(t, "two", st.TurnSummary(m))
	_, err = st.Mark(3, false)
	require.ErrorIs(t, err, ErrNoCheckpoint)
	_, err = st.Mark(9, false)
	require.ErrorIs(t, err, ErrNoTurn)
	require.ErrorContains(t, err, "turns to go back to: 1, 2")
	_, err = st.Mark(2, true)
	require.ErrorContains(t, err, "sub-agent")

	st.RewindTo(m)
	require.Len(t, st.Messages, 4)
	require.Equal(t, "two", st.Messages[2].Content)
	require.Contains(t, st.Messages[3].Content, "from turn 3 to turn 2")
	require.Equal(t, "cp2", st.Checkout.Checkpoint)
	require.False(t, st.Checkout.Due)
	require.Equal(t, []int{1, 2}, turnsOf(st.Marks))
	require.Equal(t, 3, st.Turn, "the turn counter goes on")
}

func TestMarkWithATranscriptCopiesWhatFollowsTheHead(t *testing.T) {
	t.Parallel()
	st := isolatedState()
	st.Head, st.Messages, st.Turn = "h1", []conversation.Message{msg("assistant", "one")}, 1
	st.MarkTurn()
	st.Head, st.Messages, st.Turn = "h2", []conversation.Message{msg("assistant", "two")}, 2
	st.Compactions++
	m, err := st.Mark(1, false)
	require.NoError(t, err, "a mark with a head survives a compaction")
	head, msgs := st.Conversation(m)
	require.Equal(t, "h1", head)
	require.Equal(t, []conversation.Message{msg("assistant", "one")}, msgs)
}

func TestInPlaceSessionsHaveNoTurnToGoBackTo(t *testing.T) {
	t.Parallel()
	st := &State{Turn: 1}
	st.MarkTurn()
	_, err := st.Mark(1, false)
	require.ErrorIs(t, err, ErrNoCheckpoint)
	require.ErrorContains(t, err, "in place")
}

func turnsOf(ms []TurnMark) []int {
	var out []int
	for _, m := range ms {
		out = append(out, m.Turn)
	}
	return out
}

// What a close keeps for forks: each saved checkpoint the marks name,
// oldest first and once; a turn whose checkpoint failed (Unsaved) or
// that changed nothing yet ("") adds none.
func TestMarkedCheckpoints(t *testing.T) {
	t.Parallel()
	marks := []TurnMark{{Turn: 1}, {Turn: 2, Checkpoint: "a"}, {Turn: 3, Checkpoint: "a"},
		{Turn: 4, Checkpoint: "b", Unsaved: true}, {Turn: 5, Checkpoint: "c"}, {Turn: 6, Checkpoint: "a"}}
	require.Equal(t, []string{"a", "c"}, MarkedCheckpoints(marks))
	require.Empty(t, MarkedCheckpoints(nil))
}
