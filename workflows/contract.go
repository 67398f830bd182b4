// Package workflows holds the deterministic session: the turn loop, tool
// batches, approvals by signal, cancellation with paired results, and the
// queries that expose it all. It does no I/O: every effect is an activity.
package workflows

import (
	"time"

	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/session"
)

// The session contract. These names are product: people and scripts use
// them from the temporal CLI, the Web UI and our starter. Extend, never
// rename.
const (
	WorkflowType      = "AgentSession"
	DefaultTaskQueue  = "longrun"
	SignalUserMessage = "user-message"
	SignalApproval    = "approval"
	UpdateApprove     = "approve"
	SignalInterrupt   = "interrupt" // stop the current turn; the session waits for input
	QueryConversation = "conversation"
	// QueryConversationOriginal is the conversation with every compaction
	// summary expanded back into the messages it replaced.
	QueryConversationOriginal = "conversation-original"
	QueryPendingApprovals     = "pending-approvals"
	QueryStatus               = "status"
	// QueryTodos returns the session's plan: [{"content", "status"}].
	QueryTodos = "todos"
	// QueryEvents reads the session's event stream (docs/EVENTS.md): its
	// argument is {"after": N} (EventsRequest), its answer an EventsPage.
	// A query, not an update: it adds nothing to history and takes none
	// of the few update slots a workflow has (events.go says why).
	QueryEvents = "events"
	// SignalChildPending is how a child session tells its parent which of
	// its calls wait for a person, so they show (and are answered) on the
	// parent's pending list: the person approves in one place.
	SignalChildPending = "child-pending"
)

// Defaults of the limits a session's input leaves at 0 (see
// session.Limits).
const (
	// DefaultMaxTurns bounds a session whose input sets no MaxTurns: high,
	// because a background agent must not stop at turn 50; a token or cost
	// budget is the better brake.
	DefaultMaxTurns = session.DefaultMaxTurns
	// DefaultMaxParallelTools is the batch pool's size when the input sets
	// none.
	DefaultMaxParallelTools = session.DefaultMaxParallelTools
	// DefaultContinueAsNewTurns is how many turns one run takes at most
	// before the session continues as new, when the server has not
	// suggested it earlier (it does at 4,096 events or 4 MiB of history).
	DefaultContinueAsNewTurns = session.DefaultContinueAsNewTurns
	// DefaultCompactKeepTurns is how many recent turns a compaction keeps
	// as they are.
	DefaultCompactKeepTurns = session.DefaultCompactKeepTurns
)

// SessionInput starts a session.
type SessionInput struct {
	Prompt       string `json:"prompt"`
	Model        string `json:"model,omitempty"` // empty: the worker's LONGRUN_MODEL
	SystemPrompt string `json:"system_prompt,omitempty"`
	MaxTurns     int    `json:"max_turns,omitempty"` // model calls; 0 = DefaultMaxTurns
	// WorkDir is relative to the worker's workspace root; empty = the root.
	WorkDir string `json:"workdir,omitempty"`
	// Dir is the absolute directory `longrun start` ran in, when it
	// started the session there: the session then runs on the task queue
	// of the workspace root holding Dir (RootQueue), and WorkDir is Dir
	// relative to that root. Kept so every surface can say where the
	// session was asked to work; empty for a session started without one
	// (scripts, schedules), which works in the worker's first --workspace.
	Dir string `json:"dir,omitempty"`
	// Root is the workspace root Dir lies under, as the starter found it.
	Root string `json:"root,omitempty"`
	// IdleTimeout is how long to wait for another user message once the
	// model stops calling tools; 0 completes the session then, "forever"
	// (or any negative duration) waits until a message or a cancel. A
	// background agent waiting days for its person wants "forever".
	IdleTimeout Duration `json:"idle_timeout,omitempty"`
	// Approval is who decides calls that need approval: "person" (the
	// default: wait for an approval signal or update), "guardian" (the
	// worker's reviewer model judges each call first and asks a person
	// only when it does not approve or deny: see package guardian) or
	// "none" for unattended runs, which turns every ask into a deny (fail
	// closed).
	Approval string `json:"approval,omitempty"`
	// ApprovalTimeout bounds how long one call waits for a decision; when
	// it fires the call's result has reason "timeout". 0 waits forever.
	ApprovalTimeout Duration `json:"approval_timeout,omitempty"`
	// Profile is "build" (default: reads run, changes ask), "plan"
	// (read-only: tools that change things are hidden from the model and
	// denied) or "auto" (everything in the workspace runs; deny rules and
	// the hard block still apply).
	Profile string `json:"profile,omitempty"`
	// Rules are the session's permission rules; they override the
	// workspace's .longrun/permissions.json, e.g.
	// [{"tool": "shell", "pattern": "go test *", "action": "allow"}].
	Rules []permission.Rule `json:"rules,omitempty"`
	// MaxParallelTools bounds how many tool calls of one model reply run
	// at once; 0 = DefaultMaxParallelTools.
	MaxParallelTools int `json:"max_parallel_tools,omitempty"`
	// Network lets sandboxed shell commands reach the network; by default
	// a sandboxed command has none.
	Network bool `json:"network,omitempty"`
	// ContinueAsNewTurns is how many turns one run takes before the
	// session continues as new (0 = DefaultContinueAsNewTurns); the server's
	// suggestion (history size) also triggers it.
	ContinueAsNewTurns int `json:"continue_as_new_turns,omitempty"`
	// ContextWindow is the model's context window in tokens: a request
	// estimated past 80% of it compacts first. 0 = unknown: compact only
	// when the model answers with a context-length error.
	ContextWindow int `json:"context_window,omitempty"`
	// CompactKeepTurns is how many recent turns a compaction keeps
	// verbatim (0 = DefaultCompactKeepTurns).
	CompactKeepTurns int `json:"compact_keep_turns,omitempty"`
	// LocalReads runs the read-only builtin tools (read, grep, glob, list)
	// as local activities: inside the workflow task that received the
	// model's reply, on the worker that runs the session, instead of as
	// activities dispatched through the server. A turn of reads then takes
	// one workflow task instead of two (issue 10: the cost of durability).
	// Each read shows in the history as a local-activity marker with the
	// same summary, not as an activity. Absent (nil) means on, the
	// default since it was measured safe; false turns it off.
	LocalReads *bool `json:"local_reads,omitempty"`
	// LocalModel runs each model call as a local activity too: a turn is
	// then one workflow task and one round trip to the server, the least
	// a durable step can cost. What it gives up: the call's partial text
	// is not heartbeated (the UI shows the reply when it is complete), a
	// lost worker is noticed by the workflow task timeout (10 s) instead
	// of the heartbeat timeout, and the call shows as a marker. For fast
	// models (local ones, small replies) where dispatch is a visible part
	// of each turn.
	LocalModel bool `json:"local_model,omitempty"`
	// TokenBudget stops the session before a model call once the
	// session's total tokens (prompt + completion, over every run) reach
	// it; 0 = no budget. With days-long sessions a budget is the brake that
	// means something; max_turns is only a backstop.
	TokenBudget int64 `json:"token_budget,omitempty"`
	// CostBudgetUSD does the same with the estimated cost (the worker's
	// price table, usage.cost_usd); 0 = no budget. A model with no price
	// costs 0, so this brake never fires for it: use TokenBudget too.
	CostBudgetUSD float64 `json:"cost_budget_usd,omitempty"`
	// SystemPromptMode says what SystemPrompt does to Longrun's default
	// system prompt: "append" (the default: the default prompt, then
	// AGENTS.md, then SystemPrompt) or "replace" (SystemPrompt instead of
	// the default prompt, then AGENTS.md). See SystemPromptAppend.
	SystemPromptMode string `json:"system_prompt_mode,omitempty"`
	// Resume is set by the session itself when it continues as new: the
	// state it carries into the next run. Leave it empty when starting one.
	Resume *Resume `json:"resume,omitempty"`
	// Parent is set on a sub-agent session (the task tool): the session it
	// works for, which shows its waiting calls.
	Parent *ParentRef `json:"parent,omitempty"`
	// InPlace runs the session in the worker's workspace itself, as every
	// session did before isolation. Otherwise a session on a git
	// repository gets a checkout of its own (a worktree on the branch
	// longrun/<session>, see QueryCheckout); outside git it runs in place
	// all the same, and its history's checkout activity says why.
	InPlace bool `json:"in_place,omitempty"`
	// Base is the commit, branch or tag the session's checkout starts
	// from; empty: the repository's HEAD.
	Base string `json:"base,omitempty"`
	// Checkout is set on a sub-agent session: its parent's checkout, which
	// it works in (and leaves to its parent to commit).
	Checkout *session.Checkout `json:"checkout,omitempty"`
	// WorkerLostAfter is how long a call waits for the worker holding the
	// session's checkout to take it before that worker counts as lost and
	// the checkout is restored on another from its last checkpoint
	// (checkpoint.go); zero: 5 minutes.
	WorkerLostAfter Duration `json:"worker_lost_after,omitempty"`
	// Fork starts the session from another one's turn (rewind.go): its
	// conversation up to there, and a checkout whose files are that
	// turn's checkpoint. The fork-input query composes it; starter fork
	// sends it.
	Fork *ForkFrom `json:"fork,omitempty"`
	// PublishWhenWaiting publishes the session's branch each time the
	// model is done and the session waits for the person's next message
	// (an IdleTimeout other than 0), not only at its end: a session
	// started from a forge's issue opens its pull request then, and a
	// review's comment, sent as the next message, sends it back to work
	// on the same branch, which is pushed again when it is done (push.go).
	// It needs an isolated session on a worker with a push remote.
	PublishWhenWaiting bool `json:"publish_when_waiting,omitempty"`
}

// Approvers a session can have.
const (
	ApproverPerson = "person"
	ApproverNone   = "none"
)

// Flag is a *bool for an input field whose absence means its default
// (SessionInput.LocalReads): Flag(false) turns it off.
func Flag(b bool) *bool { return &b }

// localReads reports whether the session runs its read-only tools as
// local activities: unless the input says false.
func (in SessionInput) localReads() bool { return in.LocalReads == nil || *in.LocalReads }

// UserMessage is the payload of the user-message signal: {"text": "..."}.
// Delivery (optional) is the id of the forge's delivery the message came
// from (`longrun serve`): the session takes one message per id, so a
// webhook the forge sends again, even to a restarted serve, is not a
// second message (session.TakeDelivery).
type UserMessage struct {
	Text     string `json:"text"`
	Delivery string `json:"delivery,omitempty"`
}

// Decisions an approval can carry.
const (
	DecisionApprove = session.DecisionApprove
	DecisionDeny    = session.DecisionDeny
)

// Approval is the payload of the approval signal and the approve update:
// {"call_id": "call_abc", "decision": "approve"|"deny", "feedback": "..."}
// (session.Approval).
type Approval = session.Approval

// RememberSession is the only Remember value: for the rest of the session.
const RememberSession = session.RememberSession

// ApprovalOutcome is what the approve update returns: the calls the
// decision applied to.
type ApprovalOutcome struct {
	Decision string   `json:"decision"`
	CallIDs  []string `json:"call_ids"` // the model's ids of the calls
	// IDs are the session's ids of the calls, as pending-approvals
	// shows them.
	IDs []string `json:"ids,omitempty"`
	// Released are other waiting calls a remembered rule now allows.
	Released []string `json:"released,omitempty"`
}

// PendingApproval is one call waiting for a person.
type PendingApproval struct {
	// CallID is the model's own id of the call. The model chooses it (and
	// may use it twice), so surfaces show ID and decisions name ID.
	CallID string `json:"call_id"`
	// ID is the session's id of the call ("c17", unique in the session):
	// the one to show and to decide by.
	ID string `json:"id,omitempty"`
	// Digest is callref.Digest of Tool and Arguments: a decision sends
	// back the digest of what it showed, and the session refuses it when
	// the call has other arguments.
	Digest      string    `json:"digest,omitempty"`
	Tool        string    `json:"tool"`
	Arguments   string    `json:"arguments"`
	Reason      string    `json:"reason"` // why it needs approval
	Turn        int       `json:"turn"`
	RequestedAt time.Time `json:"requested_at"`
	// Guardian is the guardian's verdict when it judged the call and
	// handed it to a person (approval "guardian"): why it did not decide.
	Guardian *guardian.Verdict `json:"guardian,omitempty"`
	// Session is set when the call waits in a sub-agent: its session id.
	// ID is then "<session>/<id>" (and CallID "<session>/<call id>"), and
	// deciding that id here decides the sub-agent's call.
	Session string `json:"session,omitempty"`
}

// Phases of a session, as the status query and the LongrunPhase search
// attribute report them.
const (
	PhaseRunning         = "running"
	PhaseWaitingApproval = "waiting-approval"
	PhaseWaitingInput    = "waiting-input"
	PhaseDone            = "done"
	// PhaseCompacting: the session is summarising older turns to fit the
	// model's context window.
	PhaseCompacting = "compacting"
)

// Search attributes a session keeps up to date, so the Web UI's list can
// filter sessions ("LongrunPhase = 'waiting-approval'") and show their
// progress. devserver and the docker-compose stack register them.
var (
	PhaseKey            = temporal.NewSearchAttributeKeyKeyword("LongrunPhase")
	ModelKey            = temporal.NewSearchAttributeKeyKeyword("LongrunModel")
	WorkspaceKey        = temporal.NewSearchAttributeKeyKeyword("LongrunWorkspace")
	PendingApprovalsKey = temporal.NewSearchAttributeKeyInt64("LongrunPendingApprovals")
	TurnsKey            = temporal.NewSearchAttributeKeyInt64("LongrunTurns")
	TokensKey           = temporal.NewSearchAttributeKeyInt64("LongrunTokens")
)

// SearchAttributes are every search attribute a session upserts, for the
// servers that must register them before sessions start (name and type:
// GetName, GetValueType).
var SearchAttributes = []temporal.SearchAttributeKey{
	PhaseKey, ModelKey, WorkspaceKey, PendingApprovalsKey, TurnsKey, TokensKey,
}

// EventsRequest is the events query's argument (eventlog.Request).
type EventsRequest = eventlog.Request

// EventsPage is the events query's answer (eventlog.Page).
type EventsPage = eventlog.Page

// Todo is one step of the plan (session.Todo).
type Todo = session.Todo

// Todo states.
const (
	TodoPending    = session.TodoPending
	TodoInProgress = session.TodoInProgress
	TodoCompleted  = session.TodoCompleted
)

// ParentRef names the session a child works for.
type ParentRef struct {
	WorkflowID string `json:"workflow_id"`
	CallID     string `json:"call_id"` // the parent's task call
	Depth      int    `json:"depth"`   // 1 for a child of a top session
}

// ChildPending is the payload of the child-pending signal: the child's
// whole list of waiting calls (empty when none waits).
type ChildPending struct {
	Child   string            `json:"child"`
	Pending []PendingApproval `json:"pending"`
}

// ErrTypeSandboxRequired fails a session with profile auto on a worker
// without a working shell sandbox (WorkspaceConfig.NoSandbox).
const ErrTypeSandboxRequired = "SandboxRequired"

// Status is the answer of the status query.
type Status struct {
	Phase            string             `json:"phase"`
	Turn             int                `json:"turn"`
	MaxTurns         int                `json:"max_turns"`
	Model            string             `json:"model,omitempty"`
	Usage            conversation.Usage `json:"usage"`
	PendingApprovals int                `json:"pending_approvals"`
	// LastError is the latest failure the session survived (a model that
	// kept failing, a tool whose worker was lost), for a person to read.
	LastError string `json:"last_error,omitempty"`
	// LastErrorType is the error type behind LastError when it has one:
	// ModelContextLengthExceeded, ModelRequestRejected, ModelBadReply,
	// ModelReplyTooLarge, ModelFault, NoModelConfigured.
	LastErrorType string `json:"last_error_type,omitempty"`
	// Rejected lists recent signals the session could not use (an unknown
	// call id, a bad decision), with why.
	Rejected []string `json:"rejected_signals,omitempty"`
	// Guardian lists the guardian's recent decisions (approval
	// "guardian"), oldest first, each with its reason.
	Guardian []GuardianDecision `json:"guardian,omitempty"`
	// Changes is what an isolated session's checkout holds against its
	// base, as of its latest call that may have changed files.
	Changes *record.Stat `json:"changes,omitempty"`
	// PullRequest is the URL of the pull request the session's branch
	// was published to at its end (SessionResult.PullRequest), or while
	// it waits (SessionInput.PublishWhenWaiting). PushError says why the
	// latest publish failed ("" once one succeeds).
	PullRequest string `json:"pull_request,omitempty"`
	PushError   string `json:"push_error,omitempty"`
}

// Outcomes of a finished session.
const (
	ResultCompleted = "completed"
	ResultFailed    = "failed"
	ResultMaxTurns  = "max-turns"
	// ResultBudget: token_budget or cost_budget_usd was reached.
	ResultBudget = "budget"
)

// SessionResult is the workflow's result when it completes (a cancelled
// session closes as Canceled and has none; its queries still answer).
type SessionResult struct {
	Status    string             `json:"status"`
	FinalText string             `json:"final_text"`
	Turns     int                `json:"turns"`
	Usage     conversation.Usage `json:"usage"`
	Error     string             `json:"error,omitempty"`
	// Branch and Commit are where a session with its own checkout left
	// its changes (Commit is empty when it changed nothing).
	Branch string `json:"branch,omitempty"`
	Commit string `json:"commit,omitempty"`
	// CheckpointDue: a sub-agent working in its parent's checkout ran
	// calls that may have changed files, so the parent checkpoints after
	// the batch of its task call (checkpoint.go).
	CheckpointDue bool `json:"checkpoint_due,omitempty"`
	// Changes is the branch's size against its base; LeftOut the control
	// files the session changed, which the branch does not hold.
	Changes *record.Stat `json:"changes,omitempty"`
	LeftOut []string     `json:"left_out,omitempty"`
	// PullRequest is the URL of the pull request the branch was
	// published to, when the worker holding it publishes (longrun-worker
	// --push-remote); PushError says why publishing failed.
	PullRequest string `json:"pull_request,omitempty"`
	PushError   string `json:"push_error,omitempty"`
}

// System prompt modes (SessionInput.SystemPromptMode).
const (
	// SystemPromptAppend keeps the default prompt and puts the session's
	// system_prompt after it and after AGENTS.md: the most specific text
	// comes last. The default.
	SystemPromptAppend = "append"
	// SystemPromptReplace sends the session's system_prompt instead of
	// the default one (and nothing at all when it is empty), then
	// AGENTS.md: the order sessions had before the default prompt.
	SystemPromptReplace = "replace"
)

// ApproverGuardian is the approval mode in which the guardian, an
// independent reviewer model the worker configures, judges each call
// that would ask a person before a person is asked (package guardian).
const ApproverGuardian = permission.ApproverGuardian
