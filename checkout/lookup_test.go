package checkout

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lookObjects resolves what git rev-parse --verify and cat-file -t did,
// one git for all: refs, peeled and not, rev:path (with spaces), names
// that are no object, one that looks like an object id; a name with a
// line break is refused, not sent.
func TestLookObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := newRepo(t)
	writeFile(t, dir, "a dir/with space.txt", "x\n")
	_, err := Commit(ctx, dir, "second")
	require.NoError(t, err)
	head := plainGit(t, dir, "rev-parse", "HEAD")
	tree := plainGit(t, dir, "rev-parse", "HEAD:a dir")
	blob := plainGit(t, dir, "rev-parse", "HEAD:a dir/with space.txt")
	objs, err := lookObjects(ctx, dir, "HEAD", "refs/heads/main^{commit}", "refs/heads/none^{commit}",
		head+":a dir", head+":a dir/with space.txt", head+":nothing", strings.Repeat("ab", 20), "HEAD^{tree}^{commit}")
	require.NoError(t, err)
	require.Equal(t, []object{
		{head, "commit"}, {head, "commit"}, {},
		{tree, "tree"}, {blob, "blob"}, {},
		{}, {},
	}, objs)
	_, err = lookObjects(ctx, dir, "HEAD", "main\nHEAD")
	require.ErrorIs(t, err, errLookupName)
}
