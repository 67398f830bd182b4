package workflows

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
)

// The User Metadata tab says the session waits, and each command that
// decides a waiting call stands on its own line of a code block, with
// the worker's --address when it is not the default.
func TestDetailsListEachDecidingCommandOnItsOwnLine(t *testing.T) {
	t.Parallel()
	s := &driver{phase: PhaseWaitingApproval, workflowID: "s1", address: "10.0.0.5:7233", limits: SessionInput{MaxTurns: 10}.limits(),
		batch: []*callState{{call: conversation.ToolCall{ID: "c_sh", Name: "shell", Arguments: `{"command":"go test ./..."}`}, state: stateWaiting, why: "runs a command"}}}
	d := s.details()
	require.Contains(t, d, "### waiting for approval: 1 call(s)")
	require.Contains(t, d, "**shell** `c_sh` — `{\"command\":\"go test ./...\"}` — runs a command")
	lines := strings.Split(d, "\n")
	for _, want := range []string{
		"longrun --address 10.0.0.5:7233 approve s1 c_sh",
		`longrun --address 10.0.0.5:7233 deny s1 c_sh --feedback "why"`,
		`temporal workflow signal --address 10.0.0.5:7233 --workflow-id s1 --name approval --input '{"call_id":"c_sh","decision":"approve"}'`,
		`temporal workflow signal --address 10.0.0.5:7233 --workflow-id s1 --name approval --input '{"call_id":"c_sh","decision":"deny","feedback":"why"}'`,
	} {
		require.Contains(t, lines, want, d)
	}
	require.Contains(t, d, "```sh\n")

	s.address = "localhost:7233"
	require.NotContains(t, s.details(), "--address", "the default address is not spelled out")
}
