package contract

import (
	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/untrusted"
)

// Events a session notifies about (NotifyEvent.Event, the body's "event").
const (
	EventWaiting   = "waiting"
	EventCompleted = "completed"
	EventFailed    = "failed"
	EventBudget    = "budget"
)

// ErrTypeNotifyRejected marks a notification every sink that failed
// refused outright (4xx): posting it again cannot help.
const ErrTypeNotifyRejected = "NotifyRejected"

// NotifyEvent is one notification as the workflow describes it. It is the
// activity's input, so it is recorded in history: it holds what the
// session knows and nothing of the worker's (no sink URL, no secret, no
// console address); the worker adds those when it renders it.
type NotifyEvent struct {
	// Key is the idempotency key: the session's workflow id, its first
	// run id, the event and a sequence number the workflow assigns. A
	// sink is posted a key at most once per completed 2xx (see notify.Sender).
	Key     string `json:"key"`
	Event   string `json:"event"`
	Session string `json:"session"`
	// Status is the session's result status (completed, failed, budget,
	// max-turns) for the events that end it.
	Status string `json:"status,omitempty"`
	Turn   int    `json:"turn"`
	// Error says why a session failed or stopped.
	Error string `json:"error,omitempty"`
	// FinalText is the model's last answer, cut short.
	FinalText string `json:"final_text,omitempty"`
	// Pending are the calls waiting for a person: all of them, for a
	// waiting event.
	Pending []NotifyCall `json:"pending"`
	// Task is what the session was asked: its prompt's first line, cut.
	// Repo is the repository it works on, "" when it runs in place, in
	// the worker's workspace (Workspace then names the directory in it).
	// Every notification says them: a person running several sessions
	// must know which one writes without opening anything.
	Task      string `json:"task,omitempty"`
	Repo      string `json:"repo,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	// Branch and Changes are where an ended session with a checkout of
	// its own left its work, and its size: what to review.
	Branch  string       `json:"branch,omitempty"`
	Changes *record.Stat `json:"changes,omitempty"`
	// PullRequest is the URL of the pull request an ended session's
	// branch was published to, as the forge answered it; PushError says
	// why publishing failed.
	PullRequest string `json:"pull_request,omitempty"`
	PushError   string `json:"push_error,omitempty"`
}

// NotifyCall is one call waiting for a person.
type NotifyCall struct {
	// CallID is what approve takes; for a call waiting in a sub-agent it
	// is "<sub-agent session>/<call id>", decided through NotifyEvent.Session.
	CallID string `json:"call_id"` // the model's id of the call
	// ID is the session's id of the call ("c17"; "<sub-agent>/c17"): the
	// one shown and decided by. Digest is the digest of Tool and
	// Arguments a decision sends back (workflows.PendingApproval).
	ID        string `json:"id,omitempty"`
	Digest    string `json:"digest,omitempty"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	// Cut is what the session left out of Arguments to keep the event
	// small (nil: nothing); every rendering says so.
	Cut    *untrusted.Cut `json:"cut,omitempty"`
	Reason string         `json:"reason"`
	// Session is set for a call waiting in a sub-agent: its session id.
	Session string `json:"session,omitempty"`
}
