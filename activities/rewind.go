package activities

import (
	"context"
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/checkout"
)

// ErrTypeCheckpointGone, CheckoutFrom and RewindRequest: see package
// contract.
const ErrTypeCheckpointGone = contract.ErrTypeCheckpointGone

type (
	CheckoutFrom  = contract.CheckoutFrom
	RewindRequest = contract.RewindRequest
)

// forkFiles puts a fork's new checkout at the original's checkpoint.
// It runs on the worker holding the original's checkout (the workflow
// sends it there), whose disk has the checkpoint's objects.
func (a *Activities) forkFiles(ctx context.Context, in checkout.Info, from *CheckoutFrom) error {
	if from == nil || from.Commit == "" {
		return nil
	}
	err := checkout.FetchCommit(ctx, in.Dir, from.Commit, from.Dir, in.Repo)
	if err == nil {
		err = checkout.ResetTo(ctx, in.Dir, from.Commit)
	}
	return checkpointErr("fork checkout", err)
}

// RewindCheckout puts the files of the session's checkout back to a
// checkpoint (checkout.ResetTo: git plumbing through the checkouts' one
// door, no hook or filter of the repository runs), on the worker holding
// it. The branch is left as it is.
func (a *Activities) RewindCheckout(ctx context.Context, req RewindRequest) error {
	dir, err := a.ownCheckout(req.Checkout.Name)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), "BadCheckout", nil)
	}
	return checkpointErr("rewind checkout", checkout.ResetTo(ctx, dir, req.Commit))
}

// checkpointErr makes a checkpoint that is nowhere a non-retryable
// error the person reads.
func checkpointErr(what string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, checkout.ErrCheckpointGone):
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v", what, err), ErrTypeCheckpointGone, err)
	}
	return fmt.Errorf("%s: %w", what, err)
}
