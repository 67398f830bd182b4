package main

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/workflows"
)

func TestWatchShowsGuardianDecisions(t *testing.T) {
	t.Parallel()
	for _, live := range []bool{false, true} {
		f := spinFake()
		inner := f.query
		f.query = func(name string, n int) (any, error) {
			if name == workflows.QueryStatus {
				return workflows.Status{Phase: workflows.PhaseRunning, Guardian: []workflows.GuardianDecision{
					{CallID: "call_1", ID: "call_1", Tool: "shell", Turn: 1, Verdict: guardian.Verdict{Decision: guardian.Approve, Reason: "runs the build"}},
				}}, nil
			}
			return inner(name, n)
		}
		_, out, _ := runUI(t, context.Background(), f, strings.NewReader(""), live, "watch", "s1")
		require.Equal(t, 1, strings.Count(out, "guardian approved [call_1] shell: runs the build"), "live=%v, shown once:\n%s", live, out)
	}
}

func TestGuardianLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		d    workflows.GuardianDecision
		want string
	}{
		{"deny", workflows.GuardianDecision{CallID: "c", ID: "c", Tool: "write", Verdict: guardian.Verdict{Decision: guardian.Deny, Reason: "not the task"}}, "🛡 guardian denied [c] write: not the task"},
		{"cached", workflows.GuardianDecision{CallID: "c", ID: "c", Tool: "write", Verdict: guardian.Verdict{Decision: guardian.Approve, Cached: true}}, "🛡 guardian approved [c] write (cached decision): no reason given"},
		{"timeout", workflows.GuardianDecision{CallID: "c", ID: "c", Tool: "shell", Verdict: guardian.Verdict{Decision: guardian.AskPerson, Failure: guardian.FailTimeout, Reason: "no answer within 90s"}}, "🛡 guardian asks a person about [c] shell (timeout): no answer within 90s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, c.want, guardianLine(c.d))
		})
	}
}
