package activities

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
)

func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return string(out)
}

// Worker A checkpoints the session's checkout and pushes it to the
// remote; worker B, with a state directory of its own, restores it from
// there (a worker without the remote cannot, and says workspace lost), and
// B's CloseCheckout pushes the branch.
func TestCheckpointAndRestoreActivities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, root := newActs(t, nil)
	b, _ := newActs(t, nil)
	remote := t.TempDir()
	gitT(t, remote, "init", "-q", "--bare")
	gitT(t, root, "init", "-q", ".")
	gitT(t, root, "commit", "-q", "--allow-empty", "-m", "first")
	SetCheckouts(a, t.TempDir())
	SetCheckouts(b, t.TempDir())
	SetCheckpointRemote(a, remote)

	res, err := a.OpenCheckout(ctx, CheckoutRequest{})
	require.NoError(t, err)
	co := *res.Checkout
	args, _ := json.Marshal(map[string]string{"path": "new.txt", "content": "x\n"})
	r, err := a.RunTool(ctx, ToolRequest{CallID: "w", Name: "write", Arguments: args, Checkout: co.Name, GuardWrites: true, Seen: map[string]string{}})
	require.NoError(t, err)
	require.False(t, r.IsError, r.Content)
	cp, err := a.Checkpoint(ctx, CheckpointRequest{Checkout: co})
	require.NoError(t, err)
	require.NotEmpty(t, cp.Commit)
	require.Equal(t, remote, cp.Remote)
	again, err := a.Checkpoint(ctx, CheckpointRequest{Checkout: co, Previous: cp.Commit})
	require.NoError(t, err)
	require.Equal(t, CheckpointResult{Commit: cp.Commit, Changes: cp.Changes}, again, "unchanged: no new commit, no push, the same changes")

	restarted, _ := newActs(t, nil) // A again, same disk, no remote
	SetCheckouts(restarted, a.stateDir)
	kept, err := restarted.RestoreCheckout(ctx, RestoreRequest{Checkout: co, Checkpoint: cp.Commit})
	require.NoError(t, err)
	require.True(t, kept.Kept, "the checkout on its disk is taken up as it is")
	require.Equal(t, co, *kept.Checkout)

	_, err = b.RestoreCheckout(ctx, RestoreRequest{Checkout: co, Checkpoint: cp.Commit})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, ErrTypeWorkspaceLost, appErr.Type(), "no remote on B")

	SetCheckpointRemote(b, remote)
	rr, err := b.RestoreCheckout(ctx, RestoreRequest{Checkout: co, Checkpoint: cp.Commit})
	require.NoError(t, err)
	require.Equal(t, b.pinQueue(), rr.WorkerQueue)
	require.Equal(t, filepath.Join(b.stateDir, "checkouts", co.Name), rr.Checkout.Dir)
	got, err := os.ReadFile(filepath.Join(rr.Checkout.Dir, "new.txt"))
	require.NoError(t, err)
	require.Equal(t, "x\n", string(got))

	commit, err := b.CloseCheckout(ctx, CloseCheckoutRequest{Checkout: *rr.Checkout, Message: "add new.txt"})
	require.NoError(t, err)
	require.Equal(t, commit.Commit+"\n", gitT(t, remote, "rev-parse", co.Branch), "the branch is in the remote")
	require.NoDirExists(t, rr.Checkout.Dir)
}
