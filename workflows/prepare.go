package workflows

import (
	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
)

// prepare completes a call whose tool prepares its calls
// (tools.Spec.Prepares) before anyone decides it: lsp_rename's arguments
// get the patch the rename is, so the person (or the guardian) approves
// the patch itself and the run applies exactly it. The call is not
// offered for approval while it is prepared. Unless it goes on, it has
// its result (the tool's refusal, or the failure). Which calls are prepared is the tool's declaration, never its
// name.
func (s *driver) prepare(ctx workflow.Context, cs callRef) {
	// The calls before it in the plan finish first: a rename computed
	// before an earlier edit of the same files lands would be stale.
	if err := workflow.Await(ctx, func() bool { return s.batch.DepsDone(cs.i) }); err != nil {
		s.stop(cs)
		s.afterDecision(ctx)
		return
	}
	call := cs.call()
	req := activities.ToolRequest{
		CallID: call.ID, Name: call.Name, Arguments: []byte(call.Arguments), WorkDir: s.in.WorkDir,
		Prepare: true,
	}
	s.inCheckout(&req)
	res, err := s.toolCall(ctx, cs, req, false)
	if err == nil {
		// The files the preparation read are the ones the prepared call
		// may change: the stale-write guard holds them to these versions.
		s.recordFiles(res.Files)
	}
	if err != nil || res.IsError {
		s.recordRun(ctx, cs, res, err)
	} else {
		s.must(s.batch.Prepared(cs.i, string(res.Prepared)))
	}
	s.afterDecision(ctx)
}
