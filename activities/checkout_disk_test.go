package activities

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/checkout"
)

// TestOpenCheckoutRefusesPastTheDiskBound: with another session's
// checkout taking the worker's disk, a new checkout that would go past
// --max-checkout-bytes fails, not retried, naming the setting; within the
// bound it is made.
func TestOpenCheckoutRefusesPastTheDiskBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, root := newActs(t, nil)
	state := t.TempDir()
	a = a.with(func(c *Config) { c.StateDir = state })
	require.NoError(t, os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("x\n", 100_000)), 0o644))
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "big.txt"}, {"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "-m", "first"}} {
		out, err := exec.Command("git", append([]string{"-C", root}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	_, err := checkout.Create(ctx, root, state, "other-session", "")
	require.NoError(t, err)
	_, used, err := checkout.DiskUse(state)
	require.NoError(t, err)
	require.Greater(t, used, int64(200_000), "the other checkout's files count")

	a = a.with(func(c *Config) { c.MaxCheckoutBytes = used + 1000 }) // room for the other one, not for a second
	_, err = a.OpenCheckout(ctx, CheckoutRequest{})
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, ErrTypeCheckoutDiskFull, appErr.Type())
	require.True(t, appErr.NonRetryable())
	require.Contains(t, err.Error(), "--max-checkout-bytes (LONGRUN_MAX_CHECKOUT_BYTES)")
	require.Contains(t, err.Error(), "1 checkouts use")

	a = a.with(func(c *Config) { c.MaxCheckoutBytes = 3 * used })
	res, err := a.OpenCheckout(ctx, CheckoutRequest{})
	require.NoError(t, err)
	require.NotNil(t, res.Checkout)
	uses, _, err := checkout.DiskUse(state)
	require.NoError(t, err)
	require.Len(t, uses, 2)
}
