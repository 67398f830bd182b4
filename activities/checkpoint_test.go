package activities

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/transcript"
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
	a = a.with(func(c *Config) { c.StateDir = t.TempDir() })
	b = b.with(func(c *Config) { c.StateDir = t.TempDir() })
	a = a.with(func(c *Config) { c.CheckpointRemote = remote })

	res, err := a.OpenCheckout(ctx, CheckoutRequest{})
	require.NoError(t, err)
	co := *res.Checkout
	writeNewTxt(t, a, co)
	cp, err := a.Checkpoint(ctx, CheckpointRequest{Checkout: co})
	require.NoError(t, err)
	require.NotEmpty(t, cp.Commit)
	require.Equal(t, remote, cp.Remote)
	again, err := a.Checkpoint(ctx, CheckpointRequest{Checkout: co, Previous: cp.Commit})
	require.NoError(t, err)
	require.Equal(t, CheckpointResult{Commit: cp.Commit, Changes: cp.Changes}, again, "unchanged: no new commit, no push, the same changes")

	restarted, _ := newActs(t, nil) // A again, same disk, no remote
	restarted = restarted.with(func(c *Config) { c.StateDir = a.cfg.StateDir })
	kept, err := restarted.RestoreCheckout(ctx, RestoreRequest{Checkout: co, Checkpoint: cp.Commit})
	require.NoError(t, err)
	require.True(t, kept.Kept, "the checkout on its disk is taken up as it is")
	require.Equal(t, co, *kept.Checkout)

	_, err = b.RestoreCheckout(ctx, RestoreRequest{Checkout: co, Checkpoint: cp.Commit})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, ErrTypeWorkspaceLost, appErr.Type(), "no remote on B")

	b = b.with(func(c *Config) { c.CheckpointRemote = remote })
	rr, err := b.RestoreCheckout(ctx, RestoreRequest{Checkout: co, Checkpoint: cp.Commit})
	require.NoError(t, err)
	require.Equal(t, b.pinQueue(), rr.WorkerQueue)
	require.Equal(t, filepath.Join(b.cfg.StateDir, "checkouts", co.Name), rr.Checkout.Dir)
	got, err := os.ReadFile(filepath.Join(rr.Checkout.Dir, "new.txt"))
	require.NoError(t, err)
	require.Equal(t, "x\n", string(got))

	commit, err := b.CloseCheckout(ctx, CloseCheckoutRequest{Checkout: *rr.Checkout, Message: "add new.txt"})
	require.NoError(t, err)
	require.Equal(t, commit.Commit+"\n", gitT(t, remote, "rev-parse", co.Branch), "the branch is in the remote")
	require.NoDirExists(t, rr.Checkout.Dir)
}

// With no remote but a transcript store both workers share, worker A
// stores each checkpoint there as a bundle (the history holds its
// reference); worker B restores the checkout from that one blob (a worker
// without the store cannot, and says workspace lost), and B's
// CloseCheckout stores the branch there too and removes the checkout. A
// bundle past the bound is not stored, and the result says so.
func TestCheckpointBundlesInTheTranscriptStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store, err := transcript.NewDir(t.TempDir())
	require.NoError(t, err)
	a, root := newActs(t, nil)
	b, _ := newActs(t, nil)
	gitT(t, root, "init", "-q", ".")
	gitT(t, root, "commit", "-q", "--allow-empty", "-m", "first")
	a, b = bundleWorker(t, store, a), bundleWorker(t, store, b)

	res, err := a.OpenCheckout(ctx, CheckoutRequest{})
	require.NoError(t, err)
	co := *res.Checkout
	writeNewTxt(t, a, co)
	cp, err := a.Checkpoint(ctx, CheckpointRequest{Checkout: co})
	require.NoError(t, err)
	require.NotEmpty(t, cp.Commit)
	require.Empty(t, cp.Remote)
	require.True(t, strings.HasPrefix(cp.Bundle, "sha256:"), cp.Bundle)
	blob, err := store.Get(ctx, cp.Bundle)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(blob), "# v2 git bundle\n"), "one blob, a git bundle")
	again, err := a.Checkpoint(ctx, CheckpointRequest{Checkout: co, Previous: cp.Commit})
	require.NoError(t, err)
	require.Empty(t, again.Bundle, "unchanged: nothing stored again")

	noStore, _ := newActs(t, nil)
	noStore = noStore.with(func(c *Config) { c.StateDir = t.TempDir() })
	req := RestoreRequest{Checkout: co, Checkpoint: cp.Commit, Bundle: cp.Bundle}
	_, err = noStore.RestoreCheckout(ctx, req)
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, ErrTypeWorkspaceLost, appErr.Type(), "no transcript store on this worker")

	other, _ := newActs(t, nil)
	other = other.with(func(c *Config) { c.StateDir = t.TempDir() })
	otherStore, err := transcript.NewDir(t.TempDir())
	require.NoError(t, err)
	other = other.with(func(c *Config) { c.Transcript = otherStore })
	_, err = other.RestoreCheckout(ctx, req)
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, ErrTypeWorkspaceLost, appErr.Type())
	require.Contains(t, appErr.Error(), "not in this worker's transcript store")

	lost := req
	lost.Origin = filepath.Join(t.TempDir(), "elsewhere")
	_, err = b.RestoreCheckout(ctx, lost)
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, ErrTypeWorkspaceLost, appErr.Type())
	require.Contains(t, appErr.Error(), "needs that commit from the session's repository", "the base is not on this machine")

	rr, err := b.RestoreCheckout(ctx, req)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(b.cfg.StateDir, "checkouts", co.Name), rr.Checkout.Dir)
	got, err := os.ReadFile(filepath.Join(rr.Checkout.Dir, "new.txt"))
	require.NoError(t, err)
	require.Equal(t, "x\n", string(got))

	closed, err := b.CloseCheckout(ctx, CloseCheckoutRequest{Checkout: *rr.Checkout, Message: "add new.txt"})
	require.NoError(t, err)
	require.NotEmpty(t, closed.Commit)
	require.True(t, strings.HasPrefix(closed.Bundle, "sha256:"), "the branch is in the store")
	require.NoDirExists(t, rr.Checkout.Dir, "removed once its branch is stored")
	branch, err := store.Get(ctx, closed.Bundle)
	require.NoError(t, err)
	file := filepath.Join(t.TempDir(), "branch.bundle")
	require.NoError(t, os.WriteFile(file, branch, 0o600))
	require.NoError(t, os.RemoveAll(a.cfg.StateDir)) // A's worktree, gone with its machine
	require.NoError(t, checkout.FetchBranch(ctx, root, file, co.Branch))
	require.Equal(t, closed.Commit+"\n", gitT(t, root, "rev-parse", co.Branch), "the person's repository has the branch")

	// A bound smaller than the bundle: not stored, and said.
	small, _ := newActs(t, nil)
	small = small.with(func(c *Config) { c.StateDir = b.cfg.StateDir; c.Transcript = store; c.MaxBundleBytes = 10 })
	rr, err = small.RestoreCheckout(ctx, req)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(rr.Checkout.Dir, "more.txt"), []byte("more\n"), 0o644))
	big, err := small.Checkpoint(ctx, CheckpointRequest{Checkout: *rr.Checkout, Previous: cp.Commit})
	require.NoError(t, err)
	require.NotEqual(t, cp.Commit, big.Commit)
	require.Empty(t, big.Bundle)
	require.Contains(t, big.Note, "past the bound of 10 B")

	// The checkpoint remote wins when both are set.
	small = small.with(func(c *Config) { c.CheckpointRemote = t.TempDir() })
	gitT(t, small.cfg.CheckpointRemote, "init", "-q", "--bare")
	require.NoError(t, os.WriteFile(filepath.Join(rr.Checkout.Dir, "more.txt"), []byte("again\n"), 0o644))
	pushed, err := small.Checkpoint(ctx, CheckpointRequest{Checkout: *rr.Checkout, Previous: big.Commit})
	require.NoError(t, err)
	require.Equal(t, small.cfg.CheckpointRemote, pushed.Remote)
	require.Empty(t, pushed.Bundle)
}

// writeNewTxt has a write new.txt ("x\n") in the checkout co, as a
// session's write call would.
func writeNewTxt(t *testing.T, a *Activities, co checkout.Info) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"path": "new.txt", "content": "x\n"})
	r, err := a.RunTool(context.Background(), ToolRequest{CallID: "w", Name: "write", Arguments: args, Checkout: co.Name, GuardWrites: true, Seen: map[string]string{}})
	require.NoError(t, err)
	require.False(t, r.IsError, r.Content)
}

// bundleWorker returns w with a state directory of its own and the
// shared store, keeping bundles up to the default bound.
func bundleWorker(t *testing.T, store transcript.Store, w *Activities) *Activities {
	t.Helper()
	return w.with(func(c *Config) {
		c.StateDir = t.TempDir()
		c.Transcript = store
		c.MaxBundleBytes = DefaultMaxBundleBytes
	})
}
