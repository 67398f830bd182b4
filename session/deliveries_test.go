package session

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestTakeDelivery: an id is taken once; the oldest fall off past the
// bound (and are then taken again); a bad id is refused, changing
// nothing.
func TestTakeDelivery(t *testing.T) {
	t.Parallel()
	seen, err := TakeDelivery(nil, "d1")
	require.NoError(t, err)
	again, err := TakeDelivery(seen, "d1")
	require.ErrorIs(t, err, ErrDeliveryTaken)
	require.Equal(t, []string{"d1"}, again)

	for i := 2; i <= MaxDeliveries+1; i++ {
		seen, err = TakeDelivery(seen, fmt.Sprintf("d%d", i))
		require.NoError(t, err)
	}
	require.Len(t, seen, MaxDeliveries)
	require.Equal(t, "d2", seen[0])
	_, err = TakeDelivery(seen, fmt.Sprintf("d%d", MaxDeliveries))
	require.ErrorIs(t, err, ErrDeliveryTaken)
	_, err = TakeDelivery(seen, "d1")
	require.NoError(t, err, "forgotten past the bound")

	for _, bad := range []string{strings.Repeat("x", MaxDeliveryID+1), "a\nb", "\xff"} {
		out, err := TakeDelivery(seen, bad)
		require.Error(t, err, "%q", bad)
		require.NotErrorIs(t, err, ErrDeliveryTaken)
		require.Equal(t, seen, out)
	}
}

// TestTakeDeliveryLeavesItsInputAlone: the slice given is not written
// through (the caller's state changes only by assignment).
func TestTakeDeliveryLeavesItsInputAlone(t *testing.T) {
	t.Parallel()
	base := make([]string, 1, 10)
	base[0] = "d0"
	a, err := TakeDelivery(base, "a")
	require.NoError(t, err)
	b, err := TakeDelivery(base, "b")
	require.NoError(t, err)
	require.Equal(t, []string{"d0", "a"}, a)
	require.Equal(t, []string{"d0", "b"}, b)
}
