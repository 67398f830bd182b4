package contract

import (
	"encoding/json"
	"time"

	"github.com/longrun/longrun/toolspec"
)

// ErrTypeUnknownTool marks a call to a tool this worker does not have.
const ErrTypeUnknownTool = "UnknownTool"

// ErrTypeNotStarted marks a tool call whose worker could not get the
// server to record the call's first heartbeat, so it did not run the tool
// (activities/start.go). The call did not start: the session schedules it
// again rather than answer worker_lost.
const ErrTypeNotStarted = "ToolNotStarted"

// HeartbeatEvery is how often a running tool heartbeats. The workflow's
// heartbeat timeout is a few times this, so a cancel reaches the tool (and
// a lost worker is noticed) within seconds.
const HeartbeatEvery = time.Second

// ToolRequest is the input of RunTool: one validated, approved call.
type ToolRequest struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// WorkDir is the session's working directory, relative to the worker's
	// workspace root.
	WorkDir string `json:"workdir,omitempty"`
	// GuardWrites and Seen carry the session's stale-write guard to tools
	// that change files (tools.Env); Seen is only sent to those.
	GuardWrites bool              `json:"guard_writes,omitempty"`
	Seen        map[string]string `json:"seen,omitempty"`
	// AllowNetwork lets a sandboxed command reach the network.
	AllowNetwork bool `json:"allow_network,omitempty"`
	// JobID names the background job a `shell` call with background: true
	// starts; the session assigns it.
	JobID string `json:"job_id,omitempty"`
	// ByReference asks for a long result to be kept in the transcript
	// store, with only a preview and its reference in the result (see
	// tools.Result.ContentRef). The session asks when it holds its
	// conversation by reference; a call whose text the workflow itself
	// reads (job_list across workers) does not.
	ByReference bool `json:"by_reference,omitempty"`
	// ReadOnlySandbox and ApprovedByPerson say how the call came to run
	// (see tools.Env): allowed by the built-in read-only classifier only,
	// or approved by a person. Neither: a rule a person wrote allowed it.
	ReadOnlySandbox  bool `json:"read_only_sandbox,omitempty"`
	ApprovedByPerson bool `json:"approved_by_person,omitempty"`
	// Checkout names the session's own checkout on this worker
	// (checkout.Info.Name); WorkDir is then relative to it. Empty: the
	// session runs in place, in the worker's workspace.
	Checkout string `json:"checkout,omitempty"`
	// Prepare asks the tool to complete the call's arguments rather than
	// run it (tools.Preparer, Spec.Prepares).
	Prepare bool `json:"prepare,omitempty"`
	// CheckoutQueue is set on a call the session runs as a local activity
	// in its checkout: the queue the checkout is pinned to. A worker whose
	// checkouts are pinned elsewhere answers ErrTypeNotHere instead of
	// running the call (activities/here.go). Empty on an activity, which
	// only the worker holding the checkout takes.
	CheckoutQueue string `json:"checkout_queue,omitempty"`
	// AtMostOnce marks a call the session runs at most once (a tool that
	// changes things: a single attempt). Its worker gets the server to
	// record a first heartbeat before the tool runs (activities/start.go),
	// so a call whose heartbeat timed out with no heartbeat recorded is
	// one that never ran, and the session schedules it again instead of
	// answering worker_lost.
	AtMostOnce bool `json:"at_most_once,omitempty"`
}

// Catalog is the tool catalog a session works with, recorded in history at
// session start so the workflow never reads it from the environment.
type Catalog struct {
	Tools []toolspec.Spec `json:"tools"`
	// DefaultModel is the worker's LONGRUN_MODEL, the model of a session
	// that names none: the session picks its edit tools for it.
	DefaultModel string `json:"default_model,omitempty"`
}

// ErrTypeNotHere answers a local activity that needs the session's
// checkout on a worker that does not hold it. A local activity runs on
// whichever worker runs the session's workflow task, which is the
// checkout's worker in the common case (one worker, or sticky execution
// there) but not always; the session then sends the call to the
// checkout's worker as an activity. Never retried: the same worker would
// answer the same.
const ErrTypeNotHere = "CheckoutNotHere"
