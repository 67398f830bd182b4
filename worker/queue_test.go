package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOwnQueueStableAcrossRestarts: a worker restarted on its state
// directory polls the queue its sessions pinned their calls to; a second
// process on a held state directory gets a queue of its own.
func TestOwnQueueStableAcrossRestarts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	q1, release1, note := ownQueue("longrun", dir)
	require.Empty(t, note)
	require.True(t, strings.HasPrefix(q1, "longrun-worker-"), q1)

	q2, release2, note := ownQueue("longrun", dir)
	require.NotEmpty(t, note, "a second process on a held state directory must be told")
	require.NotEqual(t, q1, q2)
	release2()

	release1() // the first worker dies
	q3, release3, note := ownQueue("longrun", dir)
	defer release3()
	require.Empty(t, note)
	require.Equal(t, q1, q3, "a restarted worker must poll the queue its checkouts' calls are pinned to")

	other, release4, _ := ownQueue("longrun", t.TempDir())
	defer release4()
	require.NotEqual(t, q1, other)
}
