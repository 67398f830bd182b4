package activities

import (
	"context"

	"go.temporal.io/sdk/activity"
)

// JobKiller is what KillJobs needs of the worker's background-job manager
// (tools.Jobs).
type JobKiller interface {
	KillSession(session string) []string
}

// KillJobs stops every background job the session still runs on this
// worker (their logs stay in the workspace) and returns their ids. The
// session runs it, on this worker's own queue, when it ends or is
// cancelled.
func (a *Activities) KillJobs(ctx context.Context, session string) ([]string, error) {
	if a.cfg.Jobs == nil {
		return nil, nil
	}
	killed := a.cfg.Jobs.KillSession(session)
	activity.GetLogger(ctx).Info("killed the session's background jobs", "session", session, "jobs", killed)
	return killed, nil
}
