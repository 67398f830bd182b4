package workflows

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/toolspec"
)

// jobTools are the tools that act on background jobs (toolspec.Spec.Job),
// in name order.
func (s *driver) jobTools() []string {
	var names []string
	for _, n := range s.cat.Names() {
		if s.cat.specs[n].Job != "" {
			names = append(names, n)
		}
	}
	return names
}

func (s *driver) jobIDs() string {
	ids := make([]string, len(s.Jobs))
	for i, j := range s.Jobs {
		ids[i] = j.ID
	}
	return strings.Join(ids, ", ")
}

func (s *driver) route(id string) *session.Job {
	for i := range s.Jobs {
		if s.Jobs[i].ID == id {
			return &s.Jobs[i]
		}
	}
	return nil
}

// jobCall runs job_output or job_kill on the worker holding the
// job. An id the session never started is answered without an activity.
func (s *driver) jobCall(ctx workflow.Context, cs callRef) (toolspec.Result, error) {
	var p struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal([]byte(cs.call().Arguments), &p)
	r := s.route(p.ID)
	switch {
	case r == nil && len(s.Jobs) == 0:
		return toolspec.Errorf("no background job %q in this session: it has started none. Start one with shell and \"background\": true.", p.ID), nil
	case r == nil:
		return toolspec.Errorf("no background job %q in this session; its jobs: %s", p.ID, s.jobIDs()), nil
	case r.Gone:
		s.tell(ctx, cs.i, session.WorkerLostEvent{})
		return toolspec.Errorf("%s", goneText(r)), nil
	}
	res, err := s.toolCallOn(ctx, cs, r.Queue)
	if isWorkerGone(err) {
		r.Gone = true
		s.tell(ctx, cs.i, session.WorkerLostEvent{})
		return toolspec.Errorf("%s", goneText(r)), nil
	}
	return res, err
}

// listJobs asks each worker holding jobs of this session for its
// list; a gone worker's jobs are listed as lost.
func (s *driver) listJobs(ctx workflow.Context, cs callRef) (toolspec.Result, error) {
	if len(s.Jobs) == 0 {
		return toolspec.Result{Content: "no background jobs in this session"}, nil
	}
	var parts []string
	asked := map[string]bool{}
	isErr := false
	for i := range s.Jobs {
		r := &s.Jobs[i]
		if asked[r.Queue] {
			continue
		}
		asked[r.Queue] = true
		if r.Gone {
			parts = append(parts, s.goneList(r.Queue))
			continue
		}
		res, err := s.toolCallOn(ctx, cs, r.Queue)
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
	return toolspec.Result{Content: strings.Join(parts, "\n"), IsError: isErr}, nil
}

func (s *driver) markGone(queue string) {
	for i := range s.Jobs {
		if s.Jobs[i].Queue == queue {
			s.Jobs[i].Gone = true
		}
	}
}

func (s *driver) goneList(queue string) string {
	var b strings.Builder
	for _, j := range s.Jobs {
		if j.Queue == queue {
			fmt.Fprintf(&b, "%s  lost: its worker is gone  %s\n", j.ID, j.Command)
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func goneText(r *session.Job) string {
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

// killJobs stops the session's background jobs at its end, on each worker
// that holds some. A gone worker took its jobs with it; failures are
// logged, never fatal: the session is ending either way.
func (s *driver) killJobs(ctx workflow.Context) {
	done := map[string]bool{}
	for _, j := range s.Jobs {
		if done[j.Queue] || j.Gone {
			continue
		}
		done[j.Queue] = true
		if err := s.killJobsOn(ctx, j.Queue); err != nil {
			s.logger(ctx).Warn("could not kill background jobs", "queue", j.Queue, "error", err)
		}
	}
}
