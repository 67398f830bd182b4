package workflows

import (
	"encoding/json"
	"fmt"
	"maps"

	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/toolspec"
)

// answerer is a tool the session answers itself rather than by a tool
// activity of its own: its state is the session's (the plan, the catalog,
// its children, where its background jobs run). loadCatalog puts each in
// driver.self by the tool's name, so dispatch never switches on a name.
type answerer interface {
	// answer runs a call that was decided to run.
	answer(ctx workflow.Context, s *driver, cs callRef) (toolspec.Result, error)
}

// selfTool is an answerer that is the session's own tool: the worker's
// catalog does not have it.
type selfTool interface {
	answerer
	// offer reports whether this session has the tool, given the rest of
	// its catalog.
	offer(s *driver, catalog []toolspec.Spec) bool
	// spec is the tool as the model sees it.
	spec() toolspec.Spec
}

// selfTools are the session's own tools, in the order its catalog lists
// them after the worker's.
var selfTools = []selfTool{todoTool{}, toolSearchTool{}, taskTool{}}

// jobTool answers the tools that act on background jobs (toolspec.Spec.Job):
// on the worker holding the job, which only the session knows.
type jobTool struct{}

func (jobTool) answer(ctx workflow.Context, s *driver, cs callRef) (toolspec.Result, error) {
	if cs.spec.Job == toolspec.JobAll {
		return s.listJobs(ctx, cs)
	}
	return s.jobCall(ctx, cs)
}

// dispatch runs a call where session.Route says: answered by the session,
// or as a tool activity (local or not: local in a checkout only where
// the checkout is, here.go).
func (s *driver) dispatch(ctx workflow.Context, cs callRef) (toolspec.Result, error) {
	self, bySession := s.cat.self[cs.call().Name]
	switch session.Route(cs.spec, bySession, s.localHere()) {
	case session.RunBySession:
		return self.answer(ctx, s, cs)
	case session.RunLocalActivity:
		return s.runTool(ctx, cs, true)
	default:
		return s.runTool(ctx, cs, false)
	}
}

// runTool runs cs as a tool activity. A tool that edits files gets the
// stale-write guard's record; a call that starts a background job is
// given the job's id, and the job is routed to the worker that took it.
func (s *driver) runTool(ctx workflow.Context, cs callRef, local bool) (toolspec.Result, error) {
	req := activities.ToolRequest{
		CallID: cs.call().ID, Name: cs.call().Name, Arguments: json.RawMessage(cs.call().Arguments), WorkDir: s.in.WorkDir,
		AllowNetwork: s.in.Network, ByReference: true,
		ReadOnlySandbox: cs.readOnlySandbox(), ApprovedByPerson: cs.approvedByPerson(),
	}
	s.inCheckout(&req)
	if cs.spec.EditsFiles {
		// The whole record goes along: which files a patch touches is the
		// tool's to work out. JSON encodes the map in sorted key order, so
		// the input is the same on every replay.
		req.GuardWrites, req.Seen = true, maps.Clone(s.Seen)
		if req.Seen == nil {
			req.Seen = map[string]string{}
		}
	}
	command, background := cs.spec.BackgroundCommand(json.RawMessage(cs.call().Arguments))
	if background {
		// The session names the job, so an activity retry finds the job
		// it started instead of starting another.
		req.JobID = fmt.Sprintf("job-%d", len(s.Jobs)+s.FailedJobs+1)
	}
	res, err := s.toolCall(ctx, cs, req, local)
	if background {
		if err == nil && !res.IsError && res.WorkerQueue != "" {
			s.Jobs = append(s.Jobs, session.Job{ID: req.JobID, Queue: res.WorkerQueue, Command: command})
			s.load(s.jobTools()...) // the model needs them now
		} else {
			s.FailedJobs++ // its id is spent: a retry of the start must not reuse it
		}
	}
	return res, err
}
