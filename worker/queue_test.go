package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOwnQueueStableAcrossRestarts: a worker restarted on its state
// directory polls the queue its sessions pinned their checkout calls to; a
// second process on a held state directory gets a queue of its own; the
// queue of background jobs is new at every start.
func TestOwnQueueStableAcrossRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	q1, release1, note := checkoutQueue("longrun", dir)
	require.Empty(t, note)
	require.True(t, strings.HasPrefix(q1, "longrun-checkouts-"), q1)

	q2, release2, note := checkoutQueue("longrun", dir)
	require.NotEmpty(t, note, "a second process on a held state directory must be told")
	require.NotEqual(t, q1, q2)
	release2()

	release1() // the first worker dies
	q3, release3, note := checkoutQueue("longrun", dir)
	defer release3()
	require.Empty(t, note)
	require.Equal(t, q1, q3, "a restarted worker must poll the queue its checkouts' calls are pinned to")

	other, release4, _ := checkoutQueue("longrun", t.TempDir())
	defer release4()
	require.NotEqual(t, q1, other)

	require.NotEqual(t, ownQueue("longrun"), ownQueue("longrun"), "the jobs' queue is new at every start: jobs die with their process")
}
