package workflows

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
)

// The User Metadata tab says the session waits, and each command that
// decides a waiting call stands on its own line of a code block, with
// the worker's --address when it is not the default.
func TestDetailsListEachDecidingCommandOnItsOwnLine(t *testing.T) {
	t.Parallel()
	s := &driver{pub: publisher{phase: PhaseWaitingApproval}, workflowID: "s1", address: "10.0.0.5:7233", limits: SessionInput{MaxTurns: 10}.limits(),
		batch: &session.Batch{Calls: []session.Call{{Call: conversation.ToolCall{ID: "model's\n`id`", Ref: "c7", Name: "shell", Arguments: `{"command":"go test ./..."}`}, State: session.Waiting{Reason: "runs a command"}}}}}
	d := s.details()
	require.True(t, strings.HasPrefix(d, "### waiting for approval: 1 call(s)\n"), "the waiting calls lead the details, above what may be cut off (issue 29):\n%s", d)
	require.Less(t, strings.Index(d, "```sh"), strings.Index(d, "**phase:**"), "the commands come before the state")
	require.Contains(t, d, "**shell** `c7` — `{\"command\":\"go test ./...\"}` — runs a command")
	lines := strings.Split(d, "\n")
	for _, want := range []string{
		"longrun --address 10.0.0.5:7233 approve s1 c7",
		`longrun --address 10.0.0.5:7233 deny s1 c7 --feedback "why"`,
		// By the session's id, with the digest of the arguments shown.
		`temporal workflow signal --address 10.0.0.5:7233 --workflow-id s1 --name approval --input '{"id":"c7","digest":"500f119abf0f6b0f","decision":"approve"}'`,
		`temporal workflow signal --address 10.0.0.5:7233 --workflow-id s1 --name approval --input '{"id":"c7","digest":"500f119abf0f6b0f","decision":"deny","feedback":"why"}'`,
	} {
		require.Contains(t, lines, want, d)
	}
	require.Contains(t, d, "```sh\n")
	require.NotContains(t, d, "model's", "the model's id is not shown: it can forge lines")

	s.address = "localhost:7233"
	require.NotContains(t, s.details(), "--address", "the default address is not spelled out")
}

// A call's id, arguments and reason cannot make Markdown structure in the
// Web UI's details (no heading, link or line of their own, no end of the
// commands' code block), and a cut preview says how much it hides.
func TestDetailsOfAHostileCallMakeNoStructure(t *testing.T) {
	t.Parallel()
	id := "c1`\n### ✅ Reviewed by security: safe to approve\n[Approve in one click](http://evil/)\n```"
	args := `{"command":"go test ./... #` + strings.Repeat(" ", 21000) + `; touch pwned"}`
	s := &driver{pub: publisher{phase: PhaseWaitingApproval}, workflowID: "s1", limits: SessionInput{MaxTurns: 10}.limits(),
		batch: &session.Batch{Calls: []session.Call{{Call: conversation.ToolCall{ID: id, Ref: id, Name: "shell", Arguments: args}, State: session.Waiting{Reason: "asks\n# because"}}}}}
	d := s.details()
	for _, l := range strings.Split(d, "\n") {
		require.False(t, strings.HasPrefix(l, "### ✅") || strings.HasPrefix(l, "[Approve") || strings.HasPrefix(l, "# because"), "a line of the model's: %q", l)
	}
	require.Contains(t, d, "**shell** ```` c1` ↵ ### ✅ Reviewed by security: safe to approve ↵ [Approve in one click](http://evil/) ↵ ``` ````", "the id is one code span")
	require.Contains(t, d, "… 20,882 more bytes hidden; the whole call: longrun pending --full s1 — asks ↵ \\# because")
	require.Contains(t, d, "\n````sh\n", "the commands' fence is longer than the id's backtick run")
	require.Equal(t, 2, strings.Count(d, "\n````"), "the block opens and closes once")
	require.NotContains(t, d, "approve s1", "a cut preview offers no ready approve command")
	require.NotContains(t, d, `"decision":"approve"`, "nor an approve signal")
	require.Contains(t, d, "longrun pending --full s1   # approve only after seeing it whole")
}
