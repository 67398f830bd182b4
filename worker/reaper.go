package main

import (
	"context"
	"errors"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/longrun/longrun/tools"
)

// describer is what the reaper needs of the Temporal client.
type describer interface {
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
}

// reaper kills the background jobs and deletes the files (spilled output,
// job logs) of sessions that have ended. A session ending normally or by
// cancel kills its own jobs, but one that is terminated, times out or is
// reset runs no more code: without the reaper its jobs would run, and its
// files stay, until the worker restarts. It asks Temporal, the only one
// who knows, at start and every interval.
type reaper struct {
	temporal describer
	jobs     *tools.Jobs
	files    *tools.SessionFiles
	every    time.Duration
	logger   *slog.Logger
}

// run sweeps at once and then every interval until ctx is done.
func (r *reaper) run(ctx context.Context) {
	t := time.NewTicker(r.every)
	defer t.Stop()
	for {
		r.sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweep kills the jobs of every run that is over and deletes the files of
// every session that is over. A session Temporal cannot be asked about
// now (an outage) is left for the next sweep.
func (r *reaper) sweep(ctx context.Context) {
	for _, jr := range r.jobs.Runs() {
		over, err := r.runOver(ctx, jr.Session, jr.Run)
		if err != nil {
			r.logger.Warn("reaper: cannot ask Temporal about a session with background jobs", "session", jr.Session, "error", err)
			continue
		}
		if over {
			killed := r.jobs.KillRun(jr.Session, jr.Run)
			r.logger.Info("reaper: killed the background jobs of a session that ended", "session", jr.Session, "run", jr.Run, "jobs", killed)
		}
	}
	sessions, err := r.files.Sessions()
	if err != nil {
		r.logger.Warn("reaper: cannot list the sessions' files", "error", err)
		return
	}
	for _, s := range sessions {
		over, err := r.runOver(ctx, s, "")
		if err != nil {
			r.logger.Warn("reaper: cannot ask Temporal about a session with files", "session", s, "error", err)
			continue
		}
		if !over {
			continue
		}
		// Its jobs first: a log still written to would keep its disk.
		r.jobs.KillSession(s)
		if err := r.files.Remove(s); err != nil {
			r.logger.Warn("reaper: cannot delete the files of a session that ended", "session", s, "error", err)
			continue
		}
		r.logger.Info("reaper: deleted the spilled output and job logs of a session that ended", "session", s)
	}
}

// describeTimeout bounds one question to Temporal.
const describeTimeout = 10 * time.Second

// runOver reports whether the run of the session's workflow (its latest
// run when run is "") has ended for good. A run that continued as new
// is over only if the session's latest run is; a run that was reset was
// terminated, and its jobs go even though the session runs on.
func (r *reaper) runOver(ctx context.Context, session, run string) (bool, error) {
	status, err := r.status(ctx, session, run)
	if err != nil {
		return false, err
	}
	if status == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW && run != "" {
		if status, err = r.status(ctx, session, ""); err != nil {
			return false, err
		}
	}
	return status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
}

// status is the run's status; a workflow Temporal does not know (never
// started, or past its retention) counts as completed.
func (r *reaper) status(ctx context.Context, session, run string) (enumspb.WorkflowExecutionStatus, error) {
	dctx, cancel := context.WithTimeout(ctx, describeTimeout)
	defer cancel()
	desc, err := r.temporal.DescribeWorkflowExecution(dctx, session, run)
	var nf *serviceerror.NotFound
	switch {
	case errors.As(err, &nf):
		return enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil
	case err != nil:
		return 0, err
	}
	return desc.GetWorkflowExecutionInfo().GetStatus(), nil
}
