package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/workflows"
)

// Must show 2 of issue 33: a six-turn session changes story.txt at turns
// 2 and 5 (and adds five.txt at 5), continuing as new every two turns.
// Forked at turn 3, the fork's checkout has the turn-2 change and not the
// turn-5 one and its conversation ends at turn 3; rewound to turn 3, the
// session itself is back there, files included, and the model is told.
// The person's checkout is never touched, and the original is unchanged
// by the fork.
func TestForkAndRewindAtAnEarlierTurn(t *testing.T) {
	t.Parallel()
	script := map[string][]sm.Reply{
		"six turns": {
			sm.Tools(isoShell("c1", "ls")),
			sm.Tools(isoShell("c2", "printf 'two\\n' > story.txt")),
			sm.Tools(isoShell("c3", "cat story.txt")),
			sm.Tools(isoShell("c4", "ls")),
			sm.Tools(isoShell("c5", "printf 'five\\n' >> story.txt && printf 'new\\n' > five.txt")),
			sm.Text("six turns done"),
		},
	}
	e := isolationEnv(t, func(string) map[string][]sm.Reply { return script })
	person := personSnapshot(t, e.workspace)
	id := e.startIsolated(workflows.SessionInput{
		Prompt: "six turns", Profile: "auto", IdleTimeout: workflows.Forever, ContinueAsNewTurns: 2,
	})
	waitIdleAt(t, id, 6)
	desc, err := describeRun(context.Background(), tc, id, "")
	require.NoError(t, err)
	info := desc.GetWorkflowExecutionInfo()
	require.NotEqual(t, info.GetFirstRunId(), info.GetExecution().GetRunId(), "the session continued as new")

	orig := query[*session.Checkout](t, id, workflows.QueryCheckout)
	require.Equal(t, "two\nfive\n", readFile(t, filepath.Join(orig.Dir, "story.txt")))
	out, err := e.starter("turns", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "turn 3 ")
	require.Contains(t, out, "turn 6 ")

	// Fork at turn 3.
	forkID := id + "-fork"
	out, err = e.starter("fork", id, "--at", "3", "--id", forkID)
	require.NoError(t, err, out)
	require.Contains(t, out, forkID)
	waitIdleAt(t, forkID, 3)
	fork := query[*session.Checkout](t, forkID, workflows.QueryCheckout)
	require.Equal(t, checkout.Branch(forkID), fork.Branch)
	require.NotEqual(t, orig.Dir, fork.Dir)
	require.Equal(t, "two\n", readFile(t, filepath.Join(fork.Dir, "story.txt")), "the fork has turn 2's change, not turn 5's")
	require.NoFileExists(t, filepath.Join(fork.Dir, "five.txt"))
	fmsgs := query[[]conversation.Message](t, forkID, workflows.QueryConversation)
	require.Equal(t, 3, assistants(fmsgs), "the fork's conversation ends at turn 3")
	last := fmsgs[len(fmsgs)-1]
	require.NotNil(t, last.Result, "the last message is turn 3's result")
	require.Equal(t, "c3", last.Result.CallID)

	// The original is as it was, and so is the person's checkout.
	require.Equal(t, "two\nfive\n", readFile(t, filepath.Join(orig.Dir, "story.txt")))
	require.Equal(t, 6, assistants(query[[]conversation.Message](t, id, workflows.QueryConversation)))
	require.Equal(t, person, personSnapshot(t, e.workspace))

	// Refusals say why and change nothing.
	out, err = e.starter("rewind", id, "--to", "99")
	require.Error(t, err, out)
	require.Contains(t, out, "no such turn")
	out, err = e.starter("fork", id, "--at", "99")
	require.Error(t, err, out)
	require.Contains(t, out, "no such turn")

	// Rewind the original to turn 3.
	out, err = e.starter("rewind", id, "--to", "3")
	require.NoError(t, err, out)
	require.Contains(t, out, "from turn 6 to turn 3")
	require.Equal(t, "two\n", readFile(t, filepath.Join(orig.Dir, "story.txt")))
	require.NoFileExists(t, filepath.Join(orig.Dir, "five.txt"))
	msgs := query[[]conversation.Message](t, id, workflows.QueryConversation)
	require.Equal(t, 3, assistants(msgs), "the conversation is back at turn 3")
	told := msgs[len(msgs)-1]
	require.Equal(t, conversation.RoleUser, told.Role)
	require.Contains(t, told.Content, "rewound this session from turn 6 to turn 3")
	require.Equal(t, person, personSnapshot(t, e.workspace))
	require.Equal(t, "two\n", readFile(t, filepath.Join(fork.Dir, "story.txt")), "the fork is its own")
	out, err = e.starter("turns", id)
	require.NoError(t, err, out)
	require.NotContains(t, out, "turn 6 ", "the later turns are not this conversation's any more")
	recordHistory(t, id, "rewind_after_continue_as_new")
	recordHistory(t, forkID, "fork_at_turn_3")
}

// waitIdleAt waits until the session waits for a message at turn.
func waitIdleAt(t *testing.T, id string, turn int) {
	t.Helper()
	waitFor(t, "the session waiting at its turn", 2*time.Minute, func() bool {
		v, err := tc.QueryWorkflow(context.Background(), id, "", workflows.QueryStatus)
		if err != nil {
			return false
		}
		var st workflows.Status
		return v.Get(&st) == nil && st.Phase == workflows.PhaseWaitingInput && st.Turn == turn
	})
}

func assistants(msgs []conversation.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == conversation.RoleAssistant {
			n++
		}
	}
	return n
}

// personSnapshot is what the person's checkout shows: its head, branch
// list, status and files.
func personSnapshot(t *testing.T, ws string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(gitOut(t, ws, "rev-parse", "HEAD"))
	b.WriteString(gitOut(t, ws, "status", "--porcelain", "--untracked-files=all"))
	b.WriteString(gitOut(t, ws, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads"))
	entries, err := os.ReadDir(ws)
	require.NoError(t, err)
	for _, en := range entries {
		b.WriteString(en.Name() + "\n")
	}
	return b.String()
}

// A closed session's earlier turns can be forked: the close keeps every
// turn's checkpoint in the person's repository (refs/longrun/turns/),
// so the fork of turn 1 has turn 1's files though the session's own
// checkout is gone; a discard drops them with the branch.
func TestForkAnEarlierTurnOfAClosedSession(t *testing.T) {
	t.Parallel()
	script := map[string][]sm.Reply{
		"three turns": {
			sm.Tools(isoShell("c1", "printf 'one\\n' > story.txt")),
			sm.Tools(isoShell("c2", "printf 'two\\n' >> story.txt")),
			sm.Text("three turns done"),
		},
	}
	e := isolationEnv(t, func(string) map[string][]sm.Reply { return script })
	id := e.startIsolated(workflows.SessionInput{Prompt: "three turns", Profile: "auto"})
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	require.Contains(t, gitOut(t, e.workspace, "for-each-ref", "--format=%(refname)", checkout.TurnsPrefix), checkout.TurnsRef(checkout.Sanitize(id)))
	gitOut(t, e.workspace, "gc", "--quiet", "--prune=now")

	forkID := id + "-fork"
	out, err := e.starter("fork", id, "--at", "1", "--id", forkID)
	require.NoError(t, err, out)
	// The original completed when its model stopped calling tools, and
	// so does the fork, with nothing to do: its branch holds its files.
	require.Equal(t, workflows.ResultCompleted, result(t, forkID).Status)
	require.Equal(t, "one\n", gitOut(t, e.workspace, "show", checkout.Branch(forkID)+":story.txt"), "the fork has turn 1's files, not the closed session's last")
	require.Equal(t, "one\ntwo\n", gitOut(t, e.workspace, "show", checkout.Branch(id)+":story.txt"))

	out, err = e.starter("discard", id)
	require.NoError(t, err, out)
	require.Empty(t, gitOut(t, e.workspace, "for-each-ref", "--format=%(refname)", checkout.TurnsRef(checkout.Sanitize(id))), "discard drops the turns' checkpoints")
}
