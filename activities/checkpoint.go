package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/checkout"
)

// ErrTypeWorkspaceLost fails a restore no retry can make succeed: see
// package contract.
const ErrTypeWorkspaceLost = contract.ErrTypeWorkspaceLost

// CheckpointRequest and CheckpointResult are Checkpoint's input and
// output: see package contract.
type (
	CheckpointRequest = contract.CheckpointRequest
	CheckpointResult  = contract.CheckpointResult
)

// Checkpoint records the session's checkout as a commit on its private
// ref (checkout.Checkpoint) and pushes it to the checkpoint remote. It
// runs on the worker holding the checkout: as a local activity when that
// worker runs the session's workflow task, else as an activity on its
// queue. A push that fails is an error, so the activity retries; the
// commit is made once (same tree, same id).
func (a *Activities) Checkpoint(ctx context.Context, req CheckpointRequest) (CheckpointResult, error) {
	if err := a.here(req.Checkout.Name, req.CheckoutQueue); err != nil {
		return CheckpointResult{}, err
	}
	// The workflow's heartbeat timeout (checkoutHeartbeat) retries a
	// call whose worker died within seconds, not at start-to-close.
	defer heartbeatEvery(ctx, ctx, HeartbeatEvery)()
	dir, err := a.ownCheckout(req.Checkout.Name)
	if err != nil {
		return CheckpointResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "BadCheckout", nil)
	}
	in := req.Checkout
	in.Dir = dir
	commit, err := checkout.CheckpointPaths(ctx, in, req.Previous, req.Paths)
	if err != nil {
		return CheckpointResult{}, err
	}
	res := CheckpointResult{Commit: commit}
	if in.Base != "" {
		if st, err := checkout.BranchStats(ctx, dir, in.Base, commit); err == nil {
			res.Changes = &st
		} else if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("no checkout stats for this checkpoint", "commit", commit, "error", err)
		}
	}
	if commit == req.Previous {
		return res, nil
	}
	if a.bundles() {
		res.Bundle, res.Note, err = a.storeBundle(ctx, "checkpoint "+commit, func(file string) (bool, error) {
			return true, checkout.BundleCheckpoint(ctx, in, commit, file)
		})
		if err != nil {
			return CheckpointResult{}, err
		}
		return res, nil
	}
	if a.cfg.CheckpointRemote == "" {
		return res, nil
	}
	if err := checkout.PushCheckpoint(ctx, dir, a.cfg.CheckpointRemote, in.Name, commit); err != nil {
		return CheckpointResult{}, err
	}
	res.Remote = a.cfg.CheckpointRemote
	return res, nil
}

// RestoreRequest is RestoreCheckout's input: see package contract.
type RestoreRequest = contract.RestoreRequest

// RestoreCheckout makes the session's checkout again on this worker, from
// its last checkpoint's bundle in the transcript store when the session
// has one (checkout.RestoreBundle), else from the checkpoint remote
// (checkout.Restore), and
// names this worker's own queue, where the session's calls go from then
// on. It runs on the session's general queue: any worker may take it. A
// worker whose state directory still holds the checkout (the lost worker
// restarted: same disk, new queue) takes it up as it is (Kept), remote or
// not.
func (a *Activities) RestoreCheckout(ctx context.Context, req RestoreRequest) (CheckoutResult, error) {
	// The workflow's heartbeat timeout (checkoutHeartbeat) retries a
	// call whose worker died within seconds, not at start-to-close.
	defer heartbeatEvery(ctx, ctx, HeartbeatEvery)()
	if in, ok := checkout.Adopt(ctx, req.Checkout, a.cfg.StateDir); ok {
		return CheckoutResult{Checkout: &in, WorkerQueue: a.pinQueue(), Kept: true}, nil
	}
	var in checkout.Info
	var err error
	switch {
	case req.Bundle != "" && a.cfg.Transcript != nil:
		in, err = a.restoreFromBundle(ctx, req)
	case a.cfg.CheckpointRemote == "" && req.Bundle != "":
		return CheckoutResult{}, temporal.NewNonRetryableApplicationError(
			"the worker that took the restore has neither the checkout on its disk nor a transcript store to read the checkpoint's bundle from (started with --transcript off)", ErrTypeWorkspaceLost, nil)
	case a.cfg.CheckpointRemote == "":
		return CheckoutResult{}, temporal.NewNonRetryableApplicationError(
			"the worker that took the restore has neither the checkout on its disk nor a --checkpoint-remote to restore it from, and the session's last checkpoint is in no transcript store", ErrTypeWorkspaceLost, nil)
	default:
		in, err = checkout.Restore(ctx, req.Checkout, a.cfg.StateDir, a.cfg.CheckpointRemote, req.Checkpoint)
		if errors.Is(err, checkout.ErrNoCheckpoint) {
			return CheckoutResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeWorkspaceLost, err)
		}
	}
	if err != nil {
		return CheckoutResult{}, fmt.Errorf("restore checkout: %w", err)
	}
	if activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Warn("restored a lost worker's checkout", "dir", in.Dir, "checkpoint", req.Checkpoint, "bundle", req.Bundle)
	}
	return CheckoutResult{Checkout: &in, WorkerQueue: a.pinQueue()}, nil
}
