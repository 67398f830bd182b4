package activities

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/transcript"
)

// Checkpoints in a transcript store that is an S3 bucket (a real S3
// protocol server, gofakes3, over HTTP), restored by a worker on another
// "machine" whose workspace is a clone of the repository at another path
// and that cannot see the session's repository at its path: the bundle
// comes from the bucket, its base from the worker's own clone.
func TestCheckpointBundleThroughS3ToAClone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket("longrun"))
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	store, err := transcript.NewS3(ctx, transcript.S3Config{
		Endpoint: strings.TrimPrefix(srv.URL, "http://"), Bucket: "longrun", Prefix: "team/",
		Region: "us-east-1", Insecure: true, AccessKeyID: "test", SecretAccessKey: "test-secret",
	})
	require.NoError(t, err)

	a, root := newActs(t, nil)
	gitT(t, root, "init", "-q", ".")
	require.NoError(t, os.WriteFile(filepath.Join(root, "f.txt"), []byte("one\n"), 0o644))
	gitT(t, root, "add", "f.txt")
	gitT(t, root, "commit", "-q", "-m", "first")
	b, clone := newActs(t, nil)
	gitT(t, clone, "clone", "-q", root, ".")
	a, b = bundleWorker(t, store, a), bundleWorker(t, store, b)

	res, err := a.OpenCheckout(ctx, CheckoutRequest{})
	require.NoError(t, err)
	co := *res.Checkout
	require.NoError(t, os.WriteFile(filepath.Join(co.Dir, "f.txt"), []byte("two\n"), 0o644))
	cp, err := a.Checkpoint(ctx, CheckpointRequest{Checkout: co})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(cp.Bundle, "sha256:"), cp.Bundle)
	keys, err := backend.ListBucket("longrun", nil, gofakes3.ListBucketPage{})
	require.NoError(t, err)
	require.Len(t, keys.Contents, 1, "one object in the bucket: the bundle")
	require.True(t, strings.HasPrefix(keys.Contents[0].Key, "team/"), keys.Contents[0].Key)

	// Machine A is gone, and the session's repository path is not on B.
	require.NoError(t, os.RemoveAll(a.cfg.StateDir))
	req := RestoreRequest{Checkout: co, Checkpoint: cp.Commit, Bundle: cp.Bundle, Origin: filepath.Join(t.TempDir(), "not-here")}
	rr, err := b.RestoreCheckout(ctx, req)
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(rr.Checkout.Dir, "f.txt"))
	require.NoError(t, err)
	require.Equal(t, "two\n", string(got), "the checkpoint's change, restored from the bucket on the clone's base")

	// The session then undid its change: the branch stays at its base,
	// there is nothing to store, and the restored checkout goes.
	require.NoError(t, os.WriteFile(filepath.Join(rr.Checkout.Dir, "f.txt"), []byte("one\n"), 0o644))
	closed, err := b.CloseCheckout(ctx, CloseCheckoutRequest{Checkout: *rr.Checkout, Message: "nothing"})
	require.NoError(t, err)
	require.Empty(t, closed.Commit)
	require.Empty(t, closed.Bundle)
	require.NoDirExists(t, rr.Checkout.Dir, "not kept: its branch is the base")
}
