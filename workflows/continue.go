package workflows

import (
	"context"

	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
)

// Resume is what a session carries into its next run
// (SessionInput.Resume): its whole session.State, with the conversation by
// reference. The session id stays the same; starter commands and signals
// keep working across runs.
type Resume = session.State

// TranscriptReader resolves a transcript reference to its messages, for the
// conversation query only. The worker hands it over in Sessions.Transcript.
type TranscriptReader interface {
	Load(ctx context.Context, head string) ([]conversation.Message, error)
	Expand(ctx context.Context, msgs []conversation.Message) ([]conversation.Message, error)
	// Resolve puts back the full text of tool results held by reference.
	Resolve(ctx context.Context, msgs []conversation.Message) ([]conversation.Message, error)
}

// wantSwitch reports whether the run should continue as new at the next
// safe point (session.Limits.ShouldSwitch).
func (s *driver) wantSwitch(ctx workflow.Context) bool {
	return s.limits.ShouldSwitch(s.Turn-s.runStartTurn, workflow.GetInfo(ctx).GetContinueAsNewSuggested(), s.Head != "")
}

// continueAsNew ends this run and starts the next with everything the
// session knows. Handlers finish first and signals still buffered are
// taken in, so nothing a person sent is lost in the switch.
func (s *driver) continueAsNew(ctx workflow.Context) error {
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	s.drainSignals(ctx)
	r := s.State
	r.Run++
	r.Events = *s.Events.Carried()
	st := s.engine.State()
	r.Permissions = &st
	r.Batch, r.Guardian = s.batch, nil // the batch as it is (session.Batch)
	if s.guardianOn() {
		g := s.guard
		r.Guardian = &g
	}
	next := s.in
	next.Prompt, next.SystemPrompt = "", "" // in the transcript already
	next.Resume = &r
	next.Fork = next.Fork.carried()
	s.logger(ctx).Info("continue as new", "run", r.Run, "pending", len(s.pending()))
	// On a versioned worker the run is pinned to its build; the next one
	// starts on the deployment's current build (AutoUpgrade for its first
	// task, pinned again from then on). On an unversioned worker the
	// server ignores the option.
	return workflow.NewContinueAsNewErrorWithOptions(ctx, workflow.ContinueAsNewErrorOptions{
		InitialVersioningBehavior: workflow.ContinueAsNewVersioningBehaviorAutoUpgrade,
	}, WorkflowType, next)
}

// wantUpgrade reports whether the run, pinned to its build, should
// continue as new so the session moves to the deployment's current
// build: the server says the current build changed since this run was
// pinned, and the run has done a turn, so a run the server kept on its
// build cannot switch again and again without progress. It is asked
// between turns only (beforeTurn): the turn in progress, a batch waiting
// for a person included, ends on the build that began it. The flag comes
// from the workflow task's started event, so a replay reads the same.
func (s *driver) wantUpgrade(ctx workflow.Context) bool {
	return session.ShouldUpgrade(s.Turn-s.runStartTurn, workflow.GetInfo(ctx).GetTargetWorkerDeploymentVersionChanged())
}

// restore takes the carried state into this run. Its permissions and
// batch are taken up by runLoop once the engine and the catalog exist.
func (s *driver) restore(r *Resume) {
	model := s.Model
	s.State = *r
	if r.Guardian != nil {
		s.guard = *r.Guardian
	}
	s.Permissions, s.Batch, s.Guardian = nil, nil, nil
	if s.Model == "" {
		s.Model = model
	}
	s.runStartTurn = s.Turn
}
