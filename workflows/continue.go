package workflows

import (
	"context"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/permission"
)

// versionTranscript gates the long-running session: the conversation held
// by transcript reference, continue-as-new and compaction. Sessions
// recorded before it kept every message inline and never switched runs.
const versionTranscript = "transcript-v1"

// DefaultContinueAsNewTurns is how many turns one run takes at most before
// the session continues as new, when the server has not suggested it
// earlier (it does at 4,096 events or 4 MiB of history).
const DefaultContinueAsNewTurns = 500

// Resume is what a session carries into its next run (SessionInput.Resume):
// everything it knows, with the conversation by reference. The session id
// stays the same; starter commands and signals keep working across runs.
type Resume struct {
	Run   int                `json:"run"` // how many runs came before this one
	Turn  int                `json:"turn"`
	Usage conversation.Usage `json:"usage"`
	Model string             `json:"model,omitempty"`
	// Head and Messages are the conversation: the transcript reference and
	// the messages after it.
	Head          string                 `json:"head,omitempty"`
	Messages      []conversation.Message `json:"messages,omitempty"`
	Inbox         []string               `json:"inbox,omitempty"`
	FinalText     string                 `json:"final_text,omitempty"`
	LastError     string                 `json:"last_error,omitempty"`
	LastErrorType string                 `json:"last_error_type,omitempty"`
	Rejected      []string               `json:"rejected,omitempty"`
	Permissions   *permission.State      `json:"permissions,omitempty"`
	Seen          map[string]string      `json:"seen,omitempty"`
	Jobs          []jobRoute             `json:"jobs,omitempty"`
	FailedJobs    int                    `json:"failed_jobs,omitempty"`
	Compactions   int                    `json:"compactions,omitempty"`
	Todos         []Todo                 `json:"todos,omitempty"`
	Loaded        map[string]bool        `json:"loaded_tools,omitempty"`
	Subagents     int                    `json:"subagents,omitempty"`
	// Guardian is the guardian's cache, denial streak and recent decisions.
	Guardian *GuardianState `json:"guardian,omitempty"`
	// Batch is the turn in progress when the switch came while calls
	// waited for a person: they are still pending in the next run,
	// answerable by the same call ids.
	Batch []CarriedCall `json:"batch,omitempty"`
}

// CarriedCall is one call of a batch carried across continue-as-new.
type CarriedCall struct {
	Call        conversation.ToolCall    `json:"call"`
	State       string                   `json:"state"` // "waiting", "approved" or "done"
	Why         string                   `json:"why,omitempty"`
	RequestedAt time.Time                `json:"requested_at"`
	Decision    *Approval                `json:"decision,omitempty"`
	Result      *conversation.ToolResult `json:"result,omitempty"`
	Perm        permission.Call          `json:"perm"`
	// ReadOnlySandbox and Released keep how the call came to run: allowed
	// by the read-only classifier alone, or released by a remembered rule
	// rather than approved by a person.
	ReadOnlySandbox bool `json:"read_only_sandbox,omitempty"`
	Released        bool `json:"released,omitempty"`
	// Guardian is the guardian's verdict on the call, when it judged it.
	Guardian *guardian.Verdict `json:"guardian,omitempty"`
}

// Carried call states.
const (
	carriedWaiting  = "waiting"
	carriedApproved = "approved"
	carriedDone     = "done"
)

// TranscriptReader resolves a transcript reference to its messages, for the
// conversation query only. The worker hands it over in Sessions.Transcript.
type TranscriptReader interface {
	Load(ctx context.Context, head string) ([]conversation.Message, error)
	Expand(ctx context.Context, msgs []conversation.Message) ([]conversation.Message, error)
	// Resolve puts back the full text of tool results held by reference.
	Resolve(ctx context.Context, msgs []conversation.Message) ([]conversation.Message, error)
}

// wantSwitch reports whether the run should continue as new at the next
// safe point: the server suggests it, or the run has had its turns.
func (s *session) wantSwitch(ctx workflow.Context) bool {
	if !s.transcript {
		return false
	}
	limit := s.in.ContinueAsNewTurns
	if limit <= 0 {
		limit = DefaultContinueAsNewTurns
	}
	if s.turn-s.runStartTurn >= limit {
		return true
	}
	if !workflow.GetInfo(ctx).GetContinueAsNewSuggested() {
		return false
	}
	if s.head == "" && s.turn-s.runStartTurn < minRunTurnsCarryingAll &&
		s.has(ctx, versionCarryAll) {
		// No transcript (the worker runs with --transcript off): the next
		// run's input carries the whole conversation, so once that alone
		// passes the server's threshold every run is suggested to switch
		// at once, and switching each turn would only copy it again.
		return false
	}
	return true
}

// minRunTurnsCarryingAll is how many turns a run without a transcript
// takes before it follows the server's suggestion to continue as new.
const minRunTurnsCarryingAll = 20

// versionCarryAll marks sessions that hold the suggestion back per
// minRunTurnsCarryingAll; asked only when it would, so other sessions'
// histories are unchanged.
const versionCarryAll = "carry-all-min-turns-v1"

// canCarryBatch reports whether the current batch may be carried into a
// new run: no call is running or queued to run, and some wait for a
// person (otherwise the batch ends soon and the switch waits for it).
func (s *session) canCarryBatch() bool {
	waiting := false
	for _, c := range s.batch {
		switch {
		case c.state == stateDone:
		case c.state == stateWaiting:
			waiting = true
		case c.started, c.state == stateReviewing:
			return false
		}
	}
	return waiting
}

// continueAsNew ends this run and starts the next with everything the
// session knows. Handlers finish first and signals still buffered are
// taken in, so nothing a person sent is lost in the switch.
func (s *session) continueAsNew(ctx workflow.Context) error {
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	s.drainSignals(ctx)
	r := Resume{
		Run: s.run + 1, Turn: s.turn, Usage: s.usage, Model: s.model,
		Head: s.head, Messages: s.messages, Inbox: s.inbox, FinalText: s.finalText,
		LastError: s.lastErr, LastErrorType: s.lastErrType, Rejected: s.rejected,
		Seen: s.seen, Jobs: s.jobs, FailedJobs: s.failedJobs, Compactions: s.compactions, Todos: s.todos, Loaded: s.loaded, Subagents: s.subagentsTotal,
	}
	if s.guardianOn() {
		g := s.guard
		r.Guardian = &g
	}
	if s.engine != nil {
		st := s.engine.State()
		r.Permissions = &st
	}
	for _, c := range s.batch {
		cc := CarriedCall{Call: c.call, Why: c.why, RequestedAt: c.requestedAt, Decision: c.decision, Result: c.result, Perm: c.perm,
			ReadOnlySandbox: c.readOnlySandbox, Released: c.released, Guardian: c.verdict}
		switch {
		case c.state == stateDone:
			cc.State = carriedDone
		case c.state == stateWaiting && c.decision == nil:
			cc.State = carriedWaiting
		default:
			cc.State = carriedApproved
		}
		r.Batch = append(r.Batch, cc)
	}
	next := s.in
	next.Prompt, next.SystemPrompt = "", "" // in the transcript already
	next.Resume = &r
	s.logger(ctx).Info("continue as new", "run", r.Run, "pending", len(s.pending()))
	return workflow.NewContinueAsNewError(ctx, WorkflowType, next)
}

// restore takes the carried state into this run.
func (s *session) restore(r *Resume) {
	s.run, s.turn, s.runStartTurn = r.Run, r.Turn, r.Turn
	s.usage, s.head, s.messages, s.inbox, s.finalText = r.Usage, r.Head, r.Messages, r.Inbox, r.FinalText
	if r.Model != "" {
		s.model = r.Model
	}
	s.lastErr, s.lastErrType, s.rejected = r.LastError, r.LastErrorType, r.Rejected
	s.seen, s.jobs, s.failedJobs, s.compactions, s.todos, s.loaded = r.Seen, r.Jobs, r.FailedJobs, r.Compactions, r.Todos, r.Loaded
	s.subagentsTotal = r.Subagents
	if r.Guardian != nil {
		s.guard = *r.Guardian
	}
}
