package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/tools"
)

// ErrTypeBadBase fails a session whose --base is not a commit: see
// package contract.
const ErrTypeBadBase = contract.ErrTypeBadBase

// ErrTypeNoCommit and ErrTypeNotInBase fail a session at its start, once,
// when its checkout could not hold its working directory: the repository
// has no commit yet (checkout.ErrNoCommit), or its base does not hold the
// directory, which git ignores or which is not committed
// (checkout.ErrNotInBase). Retrying cannot help, and a session let run
// there would find every call failing on a directory that does not exist.
const (
	ErrTypeNoCommit  = "NoFirstCommit"
	ErrTypeNotInBase = "WorkDirNotInBase"
)

// CheckoutRequest and CheckoutResult are OpenCheckout's input and
// output (and CheckoutResult RestoreCheckout's): see package contract.
type (
	CheckoutRequest = contract.CheckoutRequest
	CheckoutResult  = contract.CheckoutResult
)

// OpenCheckout makes the session's own checkout on this worker: a
// repository of its own on the branch longrun/<session> under the state
// directory, borrowing the person's objects (checkout.Create). A working
// directory outside git gets a copy there instead (checkout.CreateCopy), up to checkout.DefaultCopyLimit; a
// larger one fails the session's start with ErrTypeCopyTooLarge, naming
// --in-place and git init as the ways on.
func (a *Activities) OpenCheckout(ctx context.Context, req CheckoutRequest) (CheckoutResult, error) {
	// The workflow's heartbeat timeout (checkoutHeartbeat) retries a
	// call whose worker died within seconds, not at start-to-close.
	defer heartbeatEvery(ctx, ctx, HeartbeatEvery)()
	if a.cfg.StateDir == "" || a.cfg.Workspace == nil {
		return CheckoutResult{Note: "this worker keeps no state directory, so the session runs in place, in the worker's workspace"}, nil
	}
	if a.cfg.InPlace {
		return CheckoutResult{Note: "this worker runs every session in place, in its workspace (longrun-worker --in-place)"}, nil
	}
	ws, err := a.cfg.Workspace.Sub(req.WorkDir)
	if err != nil {
		return CheckoutResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("working directory %q: %v", req.WorkDir, err), ErrTypeBadBase, nil)
	}
	if err := a.checkDiskBound(ctx, ws.Root(), req.Base); err != nil {
		return CheckoutResult{}, err
	}
	in, err := checkout.Create(ctx, ws.Root(), a.cfg.StateDir, sessionID(ctx), req.Base)
	switch {
	case errors.Is(err, checkout.ErrNoCommit):
		return CheckoutResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%v, and a session's own checkout starts from a commit: make a first commit (git add, git commit) or start the session --in-place to work in the directory itself", err),
			ErrTypeNoCommit, nil)
	case errors.Is(err, checkout.ErrNotInBase):
		return CheckoutResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%v: the session's checkout would have none of its files. Commit the directory (git add, git commit; an ignored one out of .gitignore first), make it a repository of its own (git init, then a first commit), or start the session --in-place to work in the directory itself", err),
			ErrTypeNotInBase, nil)
	case errors.Is(err, checkout.ErrNotGit) && req.Base != "":
		return CheckoutResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("--base %s: %s is not in a git repository, so it has no commits to start from (without --base the session gets a copy of it)", req.Base, ws.Root()), ErrTypeBadBase, nil)
	case errors.Is(err, checkout.ErrNotGit):
		return a.openCopy(ctx, ws.Root())
	case err != nil && req.Base != "":
		return CheckoutResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadBase, err)
	case err != nil:
		return CheckoutResult{}, fmt.Errorf("open checkout: %w", err)
	}
	if err := a.forkFiles(ctx, in, req.From); err != nil {
		return CheckoutResult{}, err
	}
	return CheckoutResult{Checkout: &in, WorkerQueue: a.pinQueue(), Setup: a.setupDue(in)}, nil
}

// pinQueue is the queue a session's checkout calls go to: the one that
// outlives a restart of this worker on its state directory.
func (a *Activities) pinQueue() string {
	if a.cfg.CheckoutQueue != "" {
		return a.cfg.CheckoutQueue
	}
	return a.cfg.WorkerQueue
}

// CloseCheckoutRequest is CloseCheckout's input: see package contract.
type CloseCheckoutRequest = contract.CloseCheckoutRequest

// CloseCheckout commits what the session left in its checkout on its
// branch, except control files (listed in the result: see
// checkout.Close), and removes the checkout; the branch stays until the
// person discards it (starter discard). It runs on the worker holding the
// checkout: as a local activity when that worker runs the session's
// workflow task (the session's last activity round trip saved), else as
// an activity on its queue.
func (a *Activities) CloseCheckout(ctx context.Context, req CloseCheckoutRequest) (CloseCheckoutResult, error) {
	if err := a.here(req.Checkout.Name, req.CheckoutQueue); err != nil {
		return CloseCheckoutResult{}, err
	}
	// The workflow's heartbeat timeout (checkoutHeartbeat) retries a
	// call whose worker died within seconds, not at start-to-close.
	defer heartbeatEvery(ctx, ctx, HeartbeatEvery)()
	in, err := a.ownCheckout(req.Checkout.Name)
	if err != nil {
		return CloseCheckoutResult{}, temporal.NewNonRetryableApplicationError(err.Error(), "BadCheckout", nil)
	}
	if req.Checkout.Repo == req.Checkout.Dir {
		req.Checkout.Repo = in // restored on this worker (checkpoint.go)
	}
	req.Checkout.Dir = in
	a.stopServers(in)
	a.stopMCP(in)
	a.unlinkSetup(req.Checkout.Name)
	if _, err := os.Stat(in); err == nil {
		// Before the close, which brings the ref with the branch.
		// Without it only the last turn can be forked: the close goes on.
		if _, err := checkout.KeepTurns(ctx, in, req.Checkout.Name, req.TurnCheckpoints); err != nil && activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("the turns' checkpoints are not kept: a fork after the close can start only from the last turn", "error", err)
		}
	}
	c, err := checkout.CloseTo(ctx, req.Checkout, req.Message, a.cfg.CheckpointRemote)
	if err == nil {
		err = a.storeBranch(ctx, req.Checkout, &c)
	}
	c.PushDue = err == nil && a.pushDue(req.Checkout, c)
	return CloseCheckoutResult(c), err
}

// ownCheckout is the directory of this worker's checkout name: a name the
// workflow sends, so it must be one Sanitize would make (no separator, no
// "..") before it is joined to the state directory.
func (a *Activities) ownCheckout(name string) (string, error) {
	if a.cfg.StateDir == "" {
		return "", errors.New("this worker keeps no checkouts (no state directory)")
	}
	if name == "" || checkout.Sanitize(name) != name {
		return "", fmt.Errorf("checkout %q: not a checkout name", name)
	}
	return filepath.Join(a.cfg.StateDir, checkout.Dir, name), nil
}

// checkoutWorkspace is the session's working directory in its checkout.
func (a *Activities) checkoutWorkspace(name, sub string) (*tools.Workspace, error) {
	dir, err := a.ownCheckout(name)
	if err != nil {
		return nil, err
	}
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		return nil, fmt.Errorf("the session's checkout is not on this worker: %w", err)
	}
	return ws.Sub(sub)
}
