package checkout

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// racyEdit rewrites f.txt in the copy with content of the same size and
// leaves it with the stat the index caches, as an edit made in the same
// clock tick as the copy's commit does (it made CI miss an applied
// file). Only the index's own time can tell git to look at the content:
// it is set to the file's time, and ctime is not trusted, so the test does
// not depend on how fast the machine is.
func racyEdit(t *testing.T, ctx context.Context, dir string) {
	t.Helper()
	f := filepath.Join(dir, "f.txt")
	before, err := os.Stat(f)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f, []byte("two\n"), 0o644))
	require.NoError(t, os.Chtimes(f, before.ModTime(), before.ModTime()))
	_, err = git(ctx, dir, nil, "config", "core.trustctime", "false")
	require.NoError(t, err)
	idx, err := git(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	require.NoError(t, err)
	require.NoError(t, os.Chtimes(strings.TrimSpace(idx), before.ModTime(), before.ModTime()))
}

// TestApplyCopySeesAnEditInTheCommitsTick: an edit whose stat matches the
// index's still reaches the person's directory, and the stat counts it.
func TestApplyCopySeesAnEditInTheCommitsTick(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "f.txt"), []byte("one\n"), 0o644))
	in, err := CreateCopy(ctx, src, t.TempDir(), "s", DefaultCopyLimit)
	require.NoError(t, err)
	racyEdit(t, ctx, in.Dir)

	s, err := Stats(ctx, in.Dir, in.Base)
	require.NoError(t, err)
	require.Equal(t, 1, s.Files, "the stat sees the edit")

	applied, err := ApplyCopy(ctx, in, "")
	require.NoError(t, err)
	require.Equal(t, []string{"f.txt"}, applied)
	b, err := os.ReadFile(filepath.Join(src, "f.txt"))
	require.NoError(t, err)
	require.Equal(t, "two\n", string(b))
}
