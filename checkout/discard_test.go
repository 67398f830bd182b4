package checkout

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// Discard takes the session's checkpoints with its branch: the ref
// refs/longrun/checkpoints/<name> is gone from the person's repository,
// and DiscardRemote removes it and the branch from the checkpoint remote.
// Both may run twice.
func TestDiscardRemovesCheckpointRefs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state, remote := newRepo(t), t.TempDir(), newRemote(t)
	in, err := Create(ctx, repo, state, "s/discard", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "leak.txt"), []byte("secret\n"), 0o644))
	c, err := Checkpoint(ctx, in, "")
	require.NoError(t, err)
	require.NoError(t, PushCheckpoint(ctx, in.Dir, remote, in.Name, c))
	_, err = Finish(ctx, in, "done")
	require.NoError(t, err)
	require.NoError(t, PushBranch(ctx, repo, remote, in.Branch))
	refs := []string{CheckpointRef(in.Name), "refs/heads/" + in.Branch}
	for _, r := range refs {
		_, err := git(ctx, repo, nil, "rev-parse", "--verify", "--quiet", r)
		require.NoError(t, err, "before: %s in the repository", r)
		_, err = git(ctx, remote, nil, "rev-parse", "--verify", "--quiet", r)
		require.NoError(t, err, "before: %s in the remote", r)
	}

	require.NoError(t, DiscardRemote(ctx, repo, remote, in))
	require.NoError(t, Discard(ctx, in))
	for _, r := range refs {
		_, err := git(ctx, repo, nil, "rev-parse", "--verify", "--quiet", r)
		require.Error(t, err, "%s is gone from the repository", r)
		_, err = git(ctx, remote, nil, "rev-parse", "--verify", "--quiet", r)
		require.Error(t, err, "%s is gone from the remote", r)
	}
	require.NoError(t, DiscardRemote(ctx, repo, remote, in), "twice is fine")
	require.NoError(t, Discard(ctx, in), "twice is fine")
}
