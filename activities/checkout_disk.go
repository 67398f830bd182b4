package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/checkout"
)

// ErrTypeCheckoutDiskFull fails a session whose checkout would take the
// worker's checkouts past their bound (Config.MaxCheckoutBytes). It is not
// retried: the disk frees only when other sessions end (their checkouts
// are removed then) or a person raises the bound, and a session that
// failed to start says so at once, where waiting would look like a hang.
const ErrTypeCheckoutDiskFull = "CheckoutDiskFull"

// CheckoutLimitSetting names the worker setting that bounds the disk its
// checkouts take, for messages.
const CheckoutLimitSetting = "--max-checkout-bytes (LONGRUN_MAX_CHECKOUT_BYTES)"

// checkDiskBound refuses a new checkout when the checkouts there already
// are, plus the files of the base it would check out, exceed the bound. A
// checkout already made for this session (an activity retry) is never
// refused.
func (a *Activities) checkDiskBound(ctx context.Context, workDir, base string) error {
	if a.cfg.MaxCheckoutBytes <= 0 {
		return nil
	}
	if _, err := os.Stat(filepath.Join(a.cfg.StateDir, checkout.Dir, checkout.Sanitize(sessionID(ctx)))); err == nil {
		return nil
	}
	uses, used, err := checkout.DiskUse(a.cfg.StateDir)
	if err != nil {
		return fmt.Errorf("open checkout: %w", err)
	}
	need, err := checkout.TreeBytes(ctx, workDir, base)
	if err != nil {
		// Not a repository (a copy: its files), or a bad base (Create
		// says so).
		_, need, _ = checkout.MeasureCopy(workDir, checkout.DefaultCopyLimit)
	}
	if used+need <= a.cfg.MaxCheckoutBytes {
		if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Info("checkouts' disk", "checkouts", len(uses), "used", checkout.Size(used),
				"new_checkout_about", checkout.Size(need), "bound", checkout.Size(a.cfg.MaxCheckoutBytes))
		}
		return nil
	}
	msg := fmt.Sprintf("this worker's checkouts would take more disk than its bound, %s: %d checkouts use %s under %s and this session's checkout needs about %s. "+
		"The session does not start. Wait for other sessions to end (their checkouts are removed then), start this one elsewhere or --in-place, or raise %s",
		checkout.Size(a.cfg.MaxCheckoutBytes), len(uses), checkout.Size(used), filepath.Join(a.cfg.StateDir, checkout.Dir), checkout.Size(need), CheckoutLimitSetting)
	return temporal.NewNonRetryableApplicationError(msg, ErrTypeCheckoutDiskFull, nil)
}

// ErrTypeCopyTooLarge fails a session outside git whose directory is past
// checkout.DefaultCopyLimit: copying it would cost more than a session
// start should, and retrying cannot make it smaller.
const ErrTypeCopyTooLarge = "CopyTooLarge"

// openCopy gives a session outside git a copy of its directory.
func (a *Activities) openCopy(ctx context.Context, dir string) (CheckoutResult, error) {
	in, err := checkout.CreateCopy(ctx, dir, a.cfg.StateDir, sessionID(ctx), checkout.DefaultCopyLimit)
	switch {
	case errors.Is(err, checkout.ErrTooLarge):
		return CheckoutResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%v. Make it a git repository (git init; a worktree costs no copy), start the session on a smaller --workdir, or start it --in-place to work in the directory itself", err),
			ErrTypeCopyTooLarge, nil)
	case err != nil:
		return CheckoutResult{}, fmt.Errorf("open checkout: %w", err)
	}
	note := ""
	if len(in.Dropped) > 0 {
		note = fmt.Sprintf("the copy of %s leaves out the nested git repositories' .git (%s): their files are copied as plain files of the copy, "+
			"and their configuration, which could name programs the worker's git would run, is not", dir, strings.Join(in.Dropped, ", "))
	}
	if activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Info("session outside git works in a copy", "dir", dir, "copy", in.Dir, "dropped", in.Dropped)
	}
	return CheckoutResult{Checkout: &in, Note: note, WorkerQueue: a.pinQueue()}, nil
}
