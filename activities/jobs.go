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

// SetJobs connects the worker's job manager and the task queue that only
// this worker polls. Background jobs live in this process: the session
// sends every call about a job, and the kill at its end, to that queue.
// It is a function, not a method: every exported method of Activities is
// registered as an activity.
func SetJobs(a *Activities, jobs JobKiller, workerQueue string) {
	a.jobs, a.workerQueue = jobs, workerQueue
}

// KillJobs stops every background job the session still runs on this
// worker (their logs stay in the workspace) and returns their ids. The
// session runs it, on this worker's own queue, when it ends or is
// cancelled.
func (a *Activities) KillJobs(ctx context.Context, session string) ([]string, error) {
	if a.jobs == nil {
		return nil, nil
	}
	killed := a.jobs.KillSession(session)
	activity.GetLogger(ctx).Info("killed the session's background jobs", "session", session, "jobs", killed)
	return killed, nil
}
