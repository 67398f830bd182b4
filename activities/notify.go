package activities

import (
	"context"
	"errors"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/notify"
)

// ErrTypeNotifyRejected marks a notification no sink can take: see
// package contract.
const ErrTypeNotifyRejected = contract.ErrTypeNotifyRejected

// Notify posts a session's notification to the worker's sinks (see
// notify.Sender.Send: a sink that answered 2xx to an earlier attempt is
// not posted again). A worker without sinks, reached by a session whose
// configuration came from one with them, posts nothing and says so.
func (a *Activities) Notify(ctx context.Context, ev notify.Event) (notify.Result, error) {
	if a.cfg.Notify.Sinks() == 0 {
		activity.GetLogger(ctx).Warn("notification not sent: this worker has no --notify or --notify-slack sink", "key", ev.Key)
		return notify.Result{}, nil
	}
	// Heartbeats let the server notice a lost worker within the
	// heartbeat timeout instead of the whole attempt's.
	stop := heartbeatEvery(ctx, ctx, HeartbeatEvery)
	defer stop()
	res, err := a.cfg.Notify.Send(ctx, ev)
	if err != nil && allRejected(err) {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeNotifyRejected, nil)
	}
	return res, err
}

// allRejected reports whether every failure joined in err is a sink's
// refusal.
func allRejected(err error) bool {
	errs := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	}
	for _, e := range errs {
		var rej *notify.RejectedError
		if !errors.As(e, &rej) {
			return false
		}
	}
	return true
}
