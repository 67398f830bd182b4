package activities

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
)

// A local read or checkpoint names the queue the session's checkout is
// pinned to. Worker A, which made the checkout, runs them; worker B, with
// a state directory and a checkout queue of its own, answers not here,
// non-retryable, and touches nothing, as does A for a checkout its disk
// does not hold. An activity (no queue named) is unchanged.
func TestLocalCallsRunOnlyWhereTheCheckoutIs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, root := newActs(t, nil)
	b, _ := newActs(t, nil)
	gitT(t, root, "init", "-q", ".")
	gitT(t, root, "commit", "-q", "--allow-empty", "-m", "first")
	a = a.with(func(c *Config) { c.StateDir, c.CheckoutQueue = t.TempDir(), "q-checkouts-a" })
	b = b.with(func(c *Config) { c.StateDir, c.CheckoutQueue = t.TempDir(), "q-checkouts-b" })

	res, err := a.OpenCheckout(ctx, CheckoutRequest{})
	require.NoError(t, err)
	require.Equal(t, "q-checkouts-a", res.WorkerQueue)
	co := *res.Checkout
	writeNewTxt(t, a, co)
	args, _ := json.Marshal(map[string]string{"path": "new.txt"})
	read := ToolRequest{CallID: "r", Name: "read", Arguments: args, Checkout: co.Name, CheckoutQueue: res.WorkerQueue}

	r, err := a.RunTool(ctx, read)
	require.NoError(t, err)
	require.False(t, r.IsError, r.Content)
	require.Contains(t, r.Content, "x")
	cp, err := a.Checkpoint(ctx, CheckpointRequest{Checkout: co, CheckoutQueue: res.WorkerQueue})
	require.NoError(t, err)
	require.NotEmpty(t, cp.Commit)

	requireNotHere := func(err error) {
		t.Helper()
		var appErr *temporal.ApplicationError
		require.True(t, errors.As(err, &appErr), "%v", err)
		require.Equal(t, ErrTypeNotHere, appErr.Type())
		require.True(t, appErr.NonRetryable())
		require.Contains(t, appErr.Message(), "q-checkouts-a")
	}
	_, err = b.RunTool(ctx, read)
	requireNotHere(err)
	_, err = b.Checkpoint(ctx, CheckpointRequest{Checkout: co, Previous: cp.Commit, CheckoutQueue: res.WorkerQueue})
	requireNotHere(err)

	gone := read
	gone.Checkout = co.Name + "-gone"
	_, err = a.RunTool(ctx, gone)
	requireNotHere(err)

	read.CheckoutQueue = ""
	r, err = b.RunTool(ctx, read)
	require.NoError(t, err, "an activity reached B is answered as before")
	require.True(t, r.IsError)
	require.Contains(t, r.Content, "not on this worker")
}
