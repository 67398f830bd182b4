package session

import (
	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/permission"
)

// State is what a session knows that outlives one run: the workflow holds
// it while it runs, and the same value is the next run's input when the
// session continues as new (SessionInput.Resume), so a carried field is
// written once, here. The JSON names are the ones recorded histories hold.
type State struct {
	Run   int                `json:"run"` // how many runs came before this one
	Turn  int                `json:"turn"`
	Usage conversation.Usage `json:"usage"`
	Model string             `json:"model,omitempty"`
	// Head and Messages are the conversation: the transcript reference and
	// the messages after it.
	Head          string                 `json:"head,omitempty"`
	Messages      []conversation.Message `json:"messages,omitempty"`
	Inbox         []string               `json:"inbox,omitempty"` // user messages not yet in the conversation
	FinalText     string                 `json:"final_text,omitempty"`
	LastError     string                 `json:"last_error,omitempty"`
	LastErrorType string                 `json:"last_error_type,omitempty"`
	Rejected      []string               `json:"rejected,omitempty"`
	// Permissions is the permission engine's state (remembered rules, the
	// doom-loop counts), written when the run switches.
	Permissions *permission.State `json:"permissions,omitempty"`
	// Seen is the stale-write guard's record: path -> the hash this session
	// last read or wrote.
	Seen        map[string]string `json:"seen,omitempty"`
	Jobs        []Job             `json:"jobs,omitempty"`
	FailedJobs  int               `json:"failed_jobs,omitempty"` // job ids spent on starts that failed
	Compactions int               `json:"compactions,omitempty"`
	Todos       []Todo            `json:"todos,omitempty"`
	// Loaded are the deferred tools found (tool_search) or called: sent to
	// the model from then on.
	Loaded    map[string]bool `json:"loaded_tools,omitempty"`
	Subagents int             `json:"subagents,omitempty"` // task calls started in this session
	// Named is how many calls the session has named (callref.Name): the
	// next call is c<Named+1>, in every run.
	Named int `json:"named,omitempty"`
	// Earlier is the record of the latest finished calls (callref.Record),
	// so a decision naming one is told what became of it and a model id
	// the model used again is known to be ambiguous.
	Earlier []callref.Record `json:"earlier_calls,omitempty"`
	// Batch is the turn in progress when the switch came while calls
	// waited for a person: they are still pending in the next run,
	// answerable by the same call ids. Written when the run switches.
	Batch *Batch `json:"batch,omitempty"`
	// Guardian is the guardian's cache, denial streak and recent
	// decisions, for a session with approval "guardian".
	Guardian *GuardianState `json:"guardian,omitempty"`
	// Checkout is the session's own checkout (nil: it runs in place).
	Checkout *Checkout `json:"checkout,omitempty"`
	// Changes is the checkout's size against its base, as the latest call
	// that may have changed files (or the checkout's close) found it.
	Changes *record.Stat `json:"changes,omitempty"`
	// Marks say where each finished turn left the conversation and the
	// files, so the session can go back to one (rewind.go).
	Marks []TurnMark `json:"turn_marks,omitempty"`
	// Events is the session's event stream (package eventlog): in a run,
	// every event the log still holds; carried, its tail
	// (eventlog.Log.Carried), so sequence numbers go on across runs.
	Events eventlog.Log `json:"events,omitzero"`
	// PullRequest is the URL the latest publish of the session's branch
	// got from the forge, and PushError why the latest publish failed ("" after
	// one that did not). Carried: a session that publishes while it waits
	// for a review keeps showing its pull request in the next run.
	PullRequest string `json:"pull_request,omitempty"`
	PushError   string `json:"push_error,omitempty"`
	// Review is what the pull request's body shows a reviewer of the
	// session's calls (Review.Observe), carried so a long session's
	// checks and approvals stay in it.
	Review *record.Review `json:"review,omitempty"`
	// Deliveries are the ids of the latest forge deliveries whose
	// message the session took (UserMessage.Delivery), newest last, at
	// most MaxDeliveries: carried, so a redelivery after a restart of
	// `longrun serve` or a continue-as-new is still refused.
	Deliveries []string `json:"deliveries,omitempty"`
}

// Job is where one background job lives. Its fields have no JSON tags, as
// recorded histories have them.
type Job struct {
	ID      string
	Queue   string // the task queue only its worker polls
	Command string
	// Gone is set once a call found nobody polling Queue: later calls say
	// so at once instead of waiting again.
	Gone bool
}

// Approval is the payload of the approval signal and the approve update:
// {"id": "c17", "digest": "…", "decision": "approve"|"deny", "feedback": "..."}.
// ID is the session's id of the call (callref), as pending-approvals
// shows it; CallID, the model's own tool-call id, is still taken while it
// names one call (see callref.Match). Digest is what the person saw.
type Approval struct {
	CallID string `json:"call_id,omitempty"`
	// ID is the session's id of the call ("c17"): preferred to CallID.
	ID string `json:"id,omitempty"`
	// Digest is callref.Digest of the tool and arguments the person was
	// shown (all 64 hex digits or the first 16): the session refuses the
	// decision when the call it names has other arguments. Optional.
	Digest   string `json:"digest,omitempty"`
	Decision string `json:"decision"`
	Feedback string `json:"feedback,omitempty"`
	// All applies the decision to every call waiting in this turn; CallID
	// is then ignored.
	All bool `json:"all,omitempty"`
	// Remember "session" (with approve) adds an allow rule for this tool
	// and Pattern (default: this call's command or path) for the rest of
	// the session, and releases other waiting calls it now allows.
	Remember string `json:"remember,omitempty"`
	Pattern  string `json:"pattern,omitempty"`
	// Author (optional) is who sent the decision, as the sender names
	// them: the forge login for `longrun serve`, the local user for
	// `longrun approve`. Not verified by the session (any client that
	// may signal it may write it); the pull request's body shows it as
	// the name the decision came with.
	Author string `json:"author,omitempty"`
}

// Decisions an approval can carry.
const (
	DecisionApprove = "approve"
	DecisionDeny    = "deny"
)

// RememberSession is the only Remember value: for the rest of the session.
const RememberSession = "session"
