package activities

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities/contract"
)

// ErrTypeNotStarted: see package contract.
const ErrTypeNotStarted = contract.ErrTypeNotStarted

// startConfirmWait bounds the wait for the server to record a call's
// first heartbeat. Shorter than the workflow's heartbeat timeout for tool
// calls (15 s), so a worker that cannot reach the server says so before
// the server gives up on it.
const startConfirmWait = 10 * time.Second

// confirmStart gets the server to record a first heartbeat for a call the
// session runs at most once, and returns only when it did. Why: under
// load an activity task can be recorded as started on the server and
// never reach a worker (the fleet benchmark lost 7–12 of 2000 that way,
// docs/BENCHMARKS.md); its heartbeat then times out exactly as a worker
// that died mid-command does, and the session had to answer worker_lost,
// "may or may not have taken effect", for a command that never ran. With
// the confirmed heartbeat the two differ in history: a heartbeat timeout
// with no heartbeat details is a call no worker began, which the
// workflow schedules again (workflows/activity.go toolCall).
//
// activity.RecordHeartbeat cannot be used: it is throttled and swallows
// the server's answer. A call whose heartbeat cannot be recorded is not
// run: it fails with ErrTypeNotStarted, which the workflow also
// schedules again. A local activity has no task to lose and is not asked.
func confirmStart(ctx context.Context, req ToolRequest) error {
	if !req.AtMostOnce || !activity.IsActivity(ctx) {
		return nil
	}
	info := activity.GetInfo(ctx)
	if info.IsLocalActivity {
		return nil
	}
	c := activity.GetClient(ctx)
	if c == nil {
		// Only the SDK's activity test environment runs an activity
		// without a client; a worker always has one.
		return nil
	}
	cctx, cancel := context.WithTimeout(ctx, startConfirmWait)
	defer cancel()
	err := c.RecordActivityHeartbeat(cctx, info.TaskToken, "started")
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		// Cancelled before it began: the workflow pairs the call as
		// cancelled.
		return ctx.Err()
	}
	if errors.Is(err, context.Canceled) || temporal.IsCanceledError(err) {
		// The server answered that the workflow asked to cancel the call.
		return err
	}
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("the server did not record the start of %s, so it was not run: %v", req.Name, err),
		ErrTypeNotStarted, err)
}
