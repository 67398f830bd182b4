package activities

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
)

// OpenCheckout outside git makes a copy; on a repository it
// makes the checkout under the state directory, RunTool with the
// checkout's name writes there (not in the workspace), and CloseCheckout
// commits it on the branch and removes it.
func TestCheckoutActivities(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, root := newActs(t, nil)
	state := t.TempDir()

	res, err := a.OpenCheckout(ctx, CheckoutRequest{})
	require.NoError(t, err)
	require.Nil(t, res.Checkout)
	require.Contains(t, res.Note, "no state directory")

	a = a.with(func(c *Config) { c.StateDir = state })
	_, err = a.OpenCheckout(ctx, CheckoutRequest{Base: "HEAD~1"})
	require.ErrorContains(t, err, "not in a git repository, so it has no commits")
	res, err = a.OpenCheckout(ctx, CheckoutRequest{})
	require.NoError(t, err)
	require.NotNil(t, res.Checkout, "a directory outside git gets a copy")
	require.True(t, res.Checkout.Copy)
	require.Equal(t, root, res.Checkout.Repo)
	require.NoError(t, checkout.Discard(ctx, *res.Checkout))

	for _, args := range [][]string{
		{"init", "-q", "."},
		{"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "first"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	_, err = a.OpenCheckout(ctx, CheckoutRequest{Base: "nope"})
	require.ErrorContains(t, err, `base "nope" is not a commit`)

	res, err = a.OpenCheckout(ctx, CheckoutRequest{})
	require.NoError(t, err)
	require.NotNil(t, res.Checkout)
	co := *res.Checkout
	require.Equal(t, filepath.Join(state, checkout.Dir, co.Name), co.Dir)

	writeNewTxt(t, a, co)
	cp, err := a.Checkpoint(ctx, CheckpointRequest{Checkout: co})
	require.NoError(t, err)
	require.Equal(t, &checkout.Stat{Files: 1, Insertions: 1, Paths: []string{"new.txt"}}, cp.Changes, "the checkpoint after a write measures the checkout against its base")
	r, err := a.RunTool(ctx, ToolRequest{CallID: "r", Name: "read", Arguments: json.RawMessage(`{"path":"new.txt"}`), Checkout: co.Name})
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(co.Dir, "new.txt"))
	require.NoFileExists(t, filepath.Join(root, "new.txt"), "the workspace is untouched")

	r, err = a.RunTool(ctx, ToolRequest{CallID: "x", Name: "read", Arguments: json.RawMessage(`{"path":"a"}`), Checkout: "../../etc"})
	require.NoError(t, err)
	require.True(t, r.IsError, "a checkout name that is not one is refused")

	closed, err := a.CloseCheckout(ctx, CloseCheckoutRequest{Checkout: co, Message: "add new.txt"})
	require.NoError(t, err)
	require.NotEmpty(t, closed.Commit)
	require.Equal(t, 1, closed.Changes.Files)
	_, err = os.Stat(co.Dir)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// TestCloseCheckoutResultReadsTheOldString: histories recorded when
// CloseCheckout returned only the commit id still decode (and replay).
func TestCloseCheckoutResultReadsTheOldString(t *testing.T) {
	t.Parallel()
	var r CloseCheckoutResult
	require.NoError(t, json.Unmarshal([]byte(`"c0ffee"`), &r))
	require.Equal(t, CloseCheckoutResult{Commit: "c0ffee"}, r)
	require.NoError(t, json.Unmarshal([]byte(`{"commit":"abc","left_out":["AGENTS.md"]}`), &r))
	require.Equal(t, CloseCheckoutResult{Commit: "abc", LeftOut: []string{"AGENTS.md"}}, r)
}
