package main

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/workflows"
)

func pendingCalls(ids ...string) []workflows.PendingApproval {
	var out []workflows.PendingApproval
	for _, id := range ids {
		out = append(out, workflows.PendingApproval{ID: id, CallID: "m_" + id, Tool: "shell", Arguments: `{"command":"rm -rf build"}`, Reason: "runs a command"})
	}
	return out
}

func TestSelectCallIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		pending   []workflows.PendingApproval
		requested []string
		all       bool
		want      []string
		wantErr   string
	}{
		{name: "one pending, none named", pending: pendingCalls("c1"), want: []string{"c1"}},
		{name: "several pending, none named", pending: pendingCalls("c1", "c2"), wantErr: "2 tool calls are waiting; name the call ids or pass --all:\n  c1  shell"},
		{name: "all", pending: pendingCalls("c1", "c2"), all: true, want: []string{"c1", "c2"}},
		{name: "named", pending: pendingCalls("c1", "c2", "c3"), requested: []string{"c3", "c1"}, want: []string{"c3", "c1"}},
		{name: "named twice", pending: pendingCalls("c1", "c2"), requested: []string{"c2", "c2"}, want: []string{"c2"}},
		{name: "unknown", pending: pendingCalls("c1", "c2"), requested: []string{"c1", "cX"}, wantErr: "unknown call id \"cX\"; waiting for approval:\n  c1  shell {\"command\":\"rm -rf build\"}\n  c2  shell"},
		{name: "several unknown", pending: pendingCalls("c1"), requested: []string{"a", "b"}, wantErr: `unknown call ids "a", "b"`},
		{name: "nothing pending", requested: []string{"c1"}, wantErr: errNoPending.Error()},
		{name: "nothing pending, all", all: true, wantErr: errNoPending.Error()},
		{name: "ids and all", pending: pendingCalls("c1"), requested: []string{"c1"}, all: true, wantErr: "not both"},
		{name: "by the model's id", pending: pendingCalls("c1", "c2"), requested: []string{"m_c2"}, want: []string{"c2 by m_c2"}},
		{name: "the session's id wins", pending: append(pendingCalls("c1"), workflows.PendingApproval{ID: "c2", CallID: "c1"}), requested: []string{"c1"}, want: []string{"c1"}},
		{name: "a model id used twice", pending: append(pendingCalls("c1", "c2"), workflows.PendingApproval{ID: "c3", CallID: "m_c2"}), requested: []string{"m_c2"},
			wantErr: `the model used the call id "m_c2" for 2 waiting calls (c2, c3): nothing sent; name the call by its id`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := selectCallIDs(tc.pending, tc.requested, tc.all)
			if tc.wantErr != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			var ids []string
			for _, p := range got {
				if p.byModelID != "" {
					ids = append(ids, p.ID+" by "+p.byModelID)
					continue
				}
				ids = append(ids, p.ID)
			}
			require.Equal(t, tc.want, ids)
		})
	}
}

func TestSelectCallIDsNoPendingIsSentinel(t *testing.T) {
	t.Parallel()
	_, err := selectCallIDs(nil, nil, false)
	require.True(t, errors.Is(err, errNoPending))
}

// A decision names the call by the session's id and carries the digest
// the listing showed; by the model's id only when that is what was typed.
func TestPickedCallApproval(t *testing.T) {
	t.Parallel()
	p := pickedCall{PendingApproval: workflows.PendingApproval{ID: "c4", CallID: "dup", Digest: "d"}}
	proto := workflows.Approval{Decision: workflows.DecisionDeny, Feedback: "no"}
	require.Equal(t, workflows.Approval{ID: "c4", Digest: "d", Decision: "deny", Feedback: "no"}, p.approval(proto))
	p.byModelID = "dup"
	require.Equal(t, workflows.Approval{CallID: "dup", Digest: "d", Decision: "deny", Feedback: "no"}, p.approval(proto))
	require.Equal(t, "deny:c4:call_id", decisionUpdateID("c4", p.approval(proto)), "another update than the one by the session's id")
	require.Equal(t, "deny:c4", decisionUpdateID("c4", workflows.Approval{ID: "c4", Decision: "deny"}))
}
