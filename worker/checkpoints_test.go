package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities"
)

// --checkpoint-bundle-max / LONGRUN_CHECKPOINT_BUNDLE_MAX bound a
// checkpoint stored in the transcript store; the default is
// activities.DefaultMaxBundleBytes, 0 turns them off, and nonsense is
// refused.
func TestCheckpointBundleMaxFlag(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Equal(t, int64(activities.DefaultMaxBundleBytes), m.bundles.max)
	m, err = ParseFlags([]string{"--checkpoint-bundle-max", "1K"}, env(nil))
	require.NoError(t, err)
	require.Equal(t, int64(1024), m.bundles.max)
	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_CHECKPOINT_BUNDLE_MAX": "0"}))
	require.NoError(t, err)
	require.Zero(t, m.bundles.max)
	_, err = ParseFlags([]string{"--checkpoint-bundle-max", "lots"}, env(nil))
	require.ErrorContains(t, err, "--checkpoint-bundle-max")
}
