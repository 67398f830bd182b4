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
		out = append(out, workflows.PendingApproval{CallID: id, Tool: "shell", Arguments: `{"command":"rm -rf build"}`, Reason: "runs a command"})
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
				ids = append(ids, p.CallID)
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
