package contract

import (
	"encoding/json"
	"time"

	"github.com/longrun/longrun/toolspec"
)

// ErrTypeUnknownTool marks a call to a tool this worker does not have.
const ErrTypeUnknownTool = "UnknownTool"

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
}

// Catalog is the tool catalog a session works with, recorded in history at
// session start so the workflow never reads it from the environment.
type Catalog struct {
	Tools []toolspec.Spec `json:"tools"`
	// DefaultModel is the worker's LONGRUN_MODEL, the model of a session
	// that names none: the session picks its edit tools for it.
	DefaultModel string `json:"default_model,omitempty"`
}
