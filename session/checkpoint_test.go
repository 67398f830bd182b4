package session

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/tools"
)

func TestMayChangeFilesFollowsWhatTheToolDeclares(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		spec                tools.Spec
		sandboxRO, timedOut bool
		want                bool
	}{
		"read-only tool":              {spec: tools.Spec{Name: "anything", ReadOnly: true}, want: false},
		"mutating tool":               {spec: tools.Spec{Name: "anything"}, want: true},
		"in the read-only sandbox":    {spec: tools.Spec{Name: "shell"}, sandboxRO: true, want: false},
		"a read whose worker is gone": {spec: tools.Spec{ReadOnly: true}, timedOut: true, want: true},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, c.want, MayChangeFiles(c.spec, c.sandboxRO, c.timedOut))
		})
	}
}

func TestWorkerLostTextNamesTheLostCallsAndTheCheckpoint(t *testing.T) {
	t.Parallel()
	s := WorkerLostText([]string{"shell c3"}, "0123456789abcdef", "/b/checkouts/s", "longrun/s", false)
	for _, want := range []string{"was lost", "shell c3", "worker_lost", "/b/checkouts/s", "longrun/s", "0123456789ab", "gone"} {
		require.Contains(t, s, want)
	}
	require.Contains(t, WorkerLostText(nil, "", "/a/checkouts/s", "longrun/s", true), "as the lost calls left them")
	require.Contains(t, WorkspaceLostText("q-own", "no remote"), "workspace_lost")
}

func TestMovedToKeepsTheCheckpointAndNamesTheOrigin(t *testing.T) {
	t.Parallel()
	c := &Checkout{Info: checkout.Info{Repo: "/repo", Dir: "/a/checkouts/s", Name: "s"}, Queue: "a-own", Checkpoint: "cp", Remote: "/remote", Due: true, Lost: []string{"shell c3"}}
	b := c.MovedTo(checkout.Info{Repo: "/b/checkouts/s", Dir: "/b/checkouts/s", Name: "s"}, "b-own")
	require.Equal(t, &Checkout{Info: checkout.Info{Repo: "/b/checkouts/s", Dir: "/b/checkouts/s", Name: "s"}, Queue: "b-own", Checkpoint: "cp", Remote: "/remote", Origin: "/repo"}, b)
	require.Equal(t, "/repo", b.MovedTo(checkout.Info{Repo: "/c/checkouts/s", Dir: "/c/checkouts/s"}, "c-own").Origin, "the origin stays the person's")
	require.Empty(t, c.MovedTo(checkout.Info{Repo: "/repo", Dir: "/a/checkouts/s"}, "a2-own").Origin, "taken up as it was: still a worktree of /repo")
}
