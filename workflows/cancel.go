package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
)

// closeCancelled runs after the session's context is cancelled and every
// call of the current batch has its synthetic result. It records those
// results in history as a marker, so the closed workflow's history shows
// them without replaying, and returns the CanceledError that closes the
// execution as Canceled.
func (s *driver) closeCancelled(ctx workflow.Context) error {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	var synthetic []conversation.ToolResult
	for _, m := range s.Messages {
		if m.Result != nil && (m.Result.Reason == conversation.ReasonCancelledBeforeRun || m.Result.Reason == conversation.ReasonCancelledWhileRunning) {
			synthetic = append(synthetic, *m.Result)
		}
	}
	if len(synthetic) > 0 {
		// SideEffect writes the value into a MarkerRecorded event; no I/O.
		_ = workflow.SideEffect(dctx, func(workflow.Context) any { return synthetic })
	}
	s.killJobs(dctx)
	s.closeCheckout(dctx, nil)
	s.setPhase(dctx, PhaseDone)
	s.emit(dctx, eventlog.Event{Kind: eventlog.KindEnded, Outcome: "cancelled"})
	return temporal.NewCanceledError("session cancelled")
}
