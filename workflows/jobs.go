package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/tools"
)

// jobWorkerWait is how long a call about a job waits for its worker to
// pick it up before the session says that worker is gone.
const jobWorkerWait = 30 * time.Second

// jobRoute is where one background job lives.
type jobRoute struct {
	ID      string
	Queue   string // the task queue only its worker polls
	Command string
	// Gone is set once a call found nobody polling Queue: later calls say
	// so at once instead of waiting again.
	Gone bool
}

// jobTools are the tools that act on background jobs (tools.Spec.Job),
// in name order.
func (s *session) jobTools() []string {
	var names []string
	for _, n := range s.toolNames() {
		if s.specs[n].Job != "" {
			names = append(names, n)
		}
	}
	return names
}

func (s *session) jobIDs() string {
	ids := make([]string, len(s.jobs))
	for i, j := range s.jobs {
		ids[i] = j.ID
	}
	return strings.Join(ids, ", ")
}

func (s *session) route(id string) *jobRoute {
	for i := range s.jobs {
		if s.jobs[i].ID == id {
			return &s.jobs[i]
		}
	}
	return nil
}

// executeJobCall runs job_output or job_kill on the worker holding the
// job. An id the session never started is answered without an activity.
func (s *session) executeJobCall(ctx workflow.Context, cs *callState) (tools.Result, error) {
	var p struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal([]byte(cs.call.Arguments), &p)
	r := s.route(p.ID)
	switch {
	case r == nil && len(s.jobs) == 0:
		return tools.Errorf("no background job %q in this session: it has started none. Start one with shell and \"background\": true.", p.ID), nil
	case r == nil:
		return tools.Errorf("no background job %q in this session; its jobs: %s", p.ID, s.jobIDs()), nil
	case r.Gone:
		cs.workerLost = true
		return tools.Errorf("%s", goneText(r)), nil
	}
	res, err := s.runOn(ctx, cs, r.Queue)
	if isWorkerGone(err) {
		r.Gone = true
		cs.workerLost = true
		return tools.Errorf("%s", goneText(r)), nil
	}
	return res, err
}

// executeJobList asks each worker holding jobs of this session for its
// list; a gone worker's jobs are listed as lost.
func (s *session) executeJobList(ctx workflow.Context, cs *callState) (tools.Result, error) {
	if len(s.jobs) == 0 {
		return tools.Result{Content: "no background jobs in this session"}, nil
	}
	var parts []string
	asked := map[string]bool{}
	isErr := false
	for i := range s.jobs {
		r := &s.jobs[i]
		if asked[r.Queue] {
			continue
		}
		asked[r.Queue] = true
		if r.Gone {
			parts = append(parts, s.goneList(r.Queue))
			continue
		}
		res, err := s.runOn(ctx, cs, r.Queue)
		switch {
		case isWorkerGone(err):
			s.markGone(r.Queue)
			parts = append(parts, s.goneList(r.Queue))
		case err != nil:
			return res, err
		default:
			parts = append(parts, strings.TrimRight(res.Content, "\n"))
			isErr = isErr || res.IsError
		}
	}
	return tools.Result{Content: strings.Join(parts, "\n"), IsError: isErr}, nil
}

func (s *session) markGone(queue string) {
	for i := range s.jobs {
		if s.jobs[i].Queue == queue {
			s.jobs[i].Gone = true
		}
	}
}

func (s *session) goneList(queue string) string {
	var b strings.Builder
	for _, j := range s.jobs {
		if j.Queue == queue {
			fmt.Fprintf(&b, "%s  lost: its worker is gone  %s\n", j.ID, j.Command)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func goneText(r *jobRoute) string {
	return fmt.Sprintf("the worker that ran background job %s (%s) is gone: nobody polls its task queue %s. "+
		"The job ended with that worker; if the machine is still up, its log stays in that worker's state directory (sessions/<session>/jobs/, outside the workspace) for a person to read. "+
		"Start the command again if it is still needed.", r.ID, r.Command, r.Queue)
}

// isWorkerGone is the schedule-to-start timeout of a call routed to one
// worker's own queue: nobody polls it any more.
func isWorkerGone(err error) bool {
	var te *temporal.TimeoutError
	return errors.As(err, &te) && te.TimeoutType() == enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START
}

// runOn runs the call's tool activity on one worker's own queue.
func (s *session) runOn(ctx workflow.Context, cs *callState, queue string) (tools.Result, error) {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		TaskQueue:              queue,
		ScheduleToStartTimeout: jobWorkerWait,
		StartToCloseTimeout:    time.Duration(max(cs.spec.TimeoutSeconds, 30))*time.Second + time.Minute,
		HeartbeatTimeout:       10 * activities.HeartbeatEvery,
		WaitForCancellation:    true,
		RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrTypeUnknownTool}},
		Summary:                s.callSummary(cs),
	})
	req := activities.ToolRequest{CallID: cs.call.ID, Name: cs.call.Name, Arguments: json.RawMessage(cs.call.Arguments), WorkDir: s.in.WorkDir}
	var res tools.Result
	err := workflow.ExecuteActivity(actx, a.RunTool, req).Get(ctx, &res)
	return res, err
}

// killJobs stops the session's background jobs at its end, on each worker
// that holds some. A gone worker took its jobs with it; failures are
// logged, never fatal: the session is ending either way.
func (s *session) killJobs(ctx workflow.Context) {
	done := map[string]bool{}
	for _, j := range s.jobs {
		if done[j.Queue] || j.Gone {
			continue
		}
		done[j.Queue] = true
		actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			TaskQueue:              j.Queue,
			ScheduleToStartTimeout: jobWorkerWait,
			StartToCloseTimeout:    time.Minute,
			RetryPolicy:            &temporal.RetryPolicy{MaximumAttempts: 2},
			Summary:                "kill background jobs",
		})
		var killed []string
		if err := workflow.ExecuteActivity(actx, a.KillJobs, s.workflowID).Get(ctx, &killed); err != nil {
			s.logger(ctx).Warn("could not kill background jobs", "queue", j.Queue, "error", err)
		}
	}
}
