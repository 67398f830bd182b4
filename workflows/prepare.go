package workflows

import (
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/activities"
)

// prepare completes a call whose tool prepares its calls
// (tools.Spec.Prepares) before anyone decides it: lsp_rename's arguments
// get the patch the rename is, so the person (or the guardian) approves
// the patch itself and the run applies exactly it. The call is not
// offered for approval while it is prepared. It reports whether the call
// goes on; otherwise it has its result (the tool's refusal, or the
// failure). Which calls are prepared is the tool's declaration, never its
// name.
func (s *driver) prepare(ctx workflow.Context, cs *callState) bool {
	if !cs.spec.Prepares || cs.state == stateDone {
		cs.preparing = false
		return true
	}
	cs.preparing = true // driveBatch set it already; a resumed call too
	// The calls before it in the plan finish first: a rename computed
	// before an earlier edit of the same files lands would be stale.
	if err := workflow.Await(ctx, func() bool { return s.depsDone(cs) }); err != nil {
		cs.preparing = false
		cs.finish(s.notRun("waited for the calls before it"))
		s.afterDecision(ctx)
		return false
	}
	req := activities.ToolRequest{
		CallID: cs.call.ID, Name: cs.call.Name, Arguments: []byte(cs.call.Arguments), WorkDir: s.in.WorkDir,
		Prepare: true,
	}
	s.inCheckout(&req)
	res, err := s.toolCall(ctx, cs, req, false)
	cs.preparing = false
	if err == nil {
		// The files the preparation read are the ones the prepared call
		// may change: the stale-write guard holds them to these versions.
		s.recordFiles(res.Files)
	}
	if err != nil || res.IsError {
		s.recordRun(ctx, cs, res, err)
		s.afterDecision(ctx)
		return false
	}
	cs.call.Arguments = string(res.Prepared)
	s.afterDecision(ctx)
	return true
}

// depsDone reports whether every call cs waits for in the plan is done.
func (s *driver) depsDone(cs *callState) bool {
	for _, d := range cs.deps {
		if s.batch[d].state != stateDone {
			return false
		}
	}
	return true
}
