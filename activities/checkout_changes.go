package activities

import (
	"bytes"
	"context"
	"encoding/json"

	"go.temporal.io/sdk/activity"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/tools"
)

// CloseCheckoutResult is what CloseCheckout did: the commit on the
// session's branch, the control files left out of it, and the branch's
// size against its base.
type CloseCheckoutResult checkout.Closed

// UnmarshalJSON also reads the plain commit id CloseCheckout returned
// before it returned this struct, so recorded histories still replay.
func (r *CloseCheckoutResult) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		*r = CloseCheckoutResult{}
		return json.Unmarshal(b, &r.Commit)
	}
	var c checkout.Closed
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	*r = CloseCheckoutResult(c)
	return nil
}

// noteChanges puts the size of what an isolated session changed so far
// into the result of a call that may have changed files
// (tools.Result.Changes): the workflow keeps the latest for status, the
// Web UI and its result with no command of its own, and the cost (three
// git commands that hash only what changed, see checkout.Stats) falls on
// calls that write, never on reads. A failure leaves the result without
// it: the call ran, and that must not be reported otherwise.
func (a *Activities) noteChanges(ctx context.Context, req ToolRequest, spec tools.Spec, res *tools.Result) {
	if req.Checkout == "" || req.Base == "" || spec.ReadOnly || req.ReadOnlySandbox {
		return
	}
	dir, err := a.ownCheckout(req.Checkout)
	if err == nil {
		var st checkout.Stat
		if st, err = checkout.Stats(ctx, dir, req.Base); err == nil {
			res.Changes = &st
			return
		}
	}
	if activity.IsActivity(ctx) {
		activity.GetLogger(ctx).Warn("no checkout stats for this call", "call_id", req.CallID, "error", err)
	}
}
