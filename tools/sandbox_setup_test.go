package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// setupModCacheFor finds the layer a checkout is linked to, and nothing
// for a root outside the checkouts, a missing link or layer, or a link
// whose key is not a plain name.
func TestSetupModCacheFor(t *testing.T) {
	t.Parallel()
	state := realDir(t.TempDir())
	co := filepath.Join(state, checkoutsDir, "s1")
	require.NoError(t, os.MkdirAll(filepath.Join(co, "sub"), 0o755))
	require.Empty(t, setupModCacheFor(state, co), "no link")

	require.NoError(t, os.MkdirAll(filepath.Dir(SetupLinkPath(state, "s1")), 0o700))
	require.NoError(t, os.WriteFile(SetupLinkPath(state, "s1"), []byte("k1\n"), 0o600))
	require.Empty(t, setupModCacheFor(state, co), "no layer")

	mod := filepath.Join(SetupLayerDir(state, "k1"), SetupModCache)
	require.NoError(t, os.MkdirAll(mod, 0o700))
	require.Equal(t, mod, setupModCacheFor(state, co))
	require.Equal(t, mod, setupModCacheFor(state, filepath.Join(co, "sub")), "a root below the checkout's top")
	require.Empty(t, setupModCacheFor(state, t.TempDir()), "not a checkout")
	require.Empty(t, setupModCacheFor("", co))

	for _, bad := range []string{"../k1", ".k1", "a/b", ""} {
		require.NoError(t, os.WriteFile(SetupLinkPath(state, "s1"), []byte(bad), 0o600))
		require.Empty(t, setupModCacheFor(state, co), "key %q", bad)
	}
}
