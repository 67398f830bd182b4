package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The root queue's name is a contract between starters and workers of
// different versions: it must not change.
func TestRootQueueIsStable(t *testing.T) {
	t.Parallel()
	require.Equal(t, "longrun-root-0df1f6fe00cfdb2d", RootQueue("longrun", "/home/me/src"))
	require.Equal(t, RootQueue("longrun", "/home/me/src"), RootQueue("longrun", "/home/me/src/"), "cleaned")
	require.NotEqual(t, RootQueue("longrun", "/home/me/src"), RootQueue("longrun", "/home/me"))
}
