package activities

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/checkout"
)

// Checkpoints in the transcript store. A worker with no checkpoint remote
// but a transcript store every worker shares (a directory they all mount,
// an S3 bucket) stores each checkpoint there as one git bundle, content-
// addressed like any other blob; the history holds its reference beside
// the commit id, and a worker that restores the checkout fetches that one
// blob (checkout.BundleCheckpoint, checkout.RestoreBundle).

// DefaultMaxBundleBytes bounds one checkpoint's bundle in the transcript
// store, which holds conversations, not large binaries: past it the
// checkpoint is not stored there (a note says so) and a lost worker's
// checkout cannot be restored from it. A session with that much changed
// belongs with a --checkpoint-remote.
const DefaultMaxBundleBytes = 64 << 20

// bundles reports whether checkpoints go to the transcript store: the
// checkpoint remote, when there is one, wins.
func (a *Activities) bundles() bool {
	return a.cfg.CheckpointRemote == "" && a.cfg.MaxBundleBytes > 0 && a.cfg.Transcript != nil
}

// storeBundle stores the bundle write makes in the transcript store and
// returns its reference, or, when it is past the bound, no reference and
// a note saying so (logged too). An empty bundle (write reports false)
// is neither.
func (a *Activities) storeBundle(ctx context.Context, what string, write func(file string) (bool, error)) (ref, note string, err error) {
	dir, err := os.MkdirTemp("", "longrun-bundle-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "bundle")
	ok, err := write(file)
	if err != nil || !ok {
		return "", "", err
	}
	fi, err := os.Stat(file)
	if err != nil {
		return "", "", err
	}
	if fi.Size() > a.cfg.MaxBundleBytes {
		note = fmt.Sprintf("%s was not stored in the transcript store: its bundle is %s, past the bound of %s (--checkpoint-bundle-max); a lost worker's checkout cannot be restored from it: give the workers a --checkpoint-remote",
			what, checkout.Size(fi.Size()), checkout.Size(a.cfg.MaxBundleBytes))
		if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn(note)
		}
		return "", note, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return "", "", err
	}
	ref, err = a.cfg.Transcript.Put(ctx, data)
	if err != nil {
		return "", "", storeError("store "+what, err)
	}
	return ref, "", nil
}

// restoreFromBundle is RestoreCheckout from the checkpoint's bundle in
// the transcript store.
func (a *Activities) restoreFromBundle(ctx context.Context, req RestoreRequest) (checkout.Info, error) {
	data, err := a.cfg.Transcript.Get(ctx, req.Bundle)
	if errors.Is(err, fs.ErrNotExist) {
		return checkout.Info{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf(
			"the checkpoint's bundle %s is not in this worker's transcript store (%v): the workers must share one (--transcript DIR or s3://...)", req.Bundle, err), ErrTypeWorkspaceLost, err)
	}
	if err != nil {
		return checkout.Info{}, storeError("read the checkpoint's bundle", err)
	}
	dir, err := os.MkdirTemp("", "longrun-bundle-")
	if err != nil {
		return checkout.Info{}, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "checkpoint.bundle")
	if err := os.WriteFile(file, data, 0o600); err != nil {
		return checkout.Info{}, err
	}
	origin := req.Origin
	if origin == "" {
		origin = req.Checkout.Repo
	}
	// The base comes from the session's repository when this machine has
	// it at the same path, else from this worker's own workspace: on a
	// fleet, each machine's clone of the repository, wherever it is.
	origins := []string{origin}
	if a.cfg.Workspace != nil {
		origins = append(origins, a.cfg.Workspace.Root())
	}
	in, err := checkout.RestoreBundle(ctx, req.Checkout, a.cfg.StateDir, origins, file, req.Checkpoint)
	if errors.Is(err, checkout.ErrNoBase) || errors.Is(err, checkout.ErrNoCheckpoint) {
		return checkout.Info{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeWorkspaceLost, err)
	}
	return in, err
}

// storeBranch stores the branch of a checkout restored on this worker in
// the transcript store at the session's end, and then removes the
// checkout: the branch is nowhere else but this worker's disk.
func (a *Activities) storeBranch(ctx context.Context, in checkout.Info, c *checkout.Closed) error {
	if !a.bundles() || in.Repo != in.Dir {
		return nil
	}
	if _, err := os.Stat(in.Dir); errors.Is(err, os.ErrNotExist) {
		return nil // removed by an earlier attempt
	}
	ref, note, err := a.storeBundle(ctx, "the branch "+in.Branch, func(file string) (bool, error) {
		return checkout.BundleBranch(ctx, in, file)
	})
	if err != nil {
		return err
	}
	if note != "" {
		if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("the restored checkout is kept: its branch is only there", "dir", in.Dir)
		}
		return nil
	}
	// ref is "" when the branch is still its base, which the person's
	// repository has: nothing to store, and nothing to keep either.
	c.Bundle = ref
	return checkout.RemoveRestored(in)
}
