// Package tools defines the tool contract (spec, call, result), the registry,
// argument validation, workspace confinement and the built-in tools, one file
// each. It is plain Go: no Temporal, no openai-go, so every tool is tested
// with t.TempDir().
package tools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/longrun/longrun/permission"
)

// Spec is what describes a tool. Name, Description and Parameters are what
// the model sees; the rest is runtime metadata that never leaves the worker
// and the workflow.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"` // JSON Schema (draft 2020-12) of the arguments object
	// ReadOnly tools change nothing; they run without approval and may be
	// retried after a worker crash. Everything else is mutating: it needs
	// approval and runs at most once.
	ReadOnly bool `json:"read_only"`
	// TimeoutSeconds bounds one run; the activity's start-to-close timeout
	// is derived from it.
	TimeoutSeconds int `json:"timeout_seconds"`
	// EditsFiles marks tools that change files by path (write, edit,
	// apply_patch): the session hands them the stale-write guard's hashes.
	EditsFiles bool `json:"edits_files,omitempty"`
	// Prepares marks tools whose calls are completed by the tool before
	// they are decided (Preparer): lsp_rename computes its patch, so the
	// person approves the patch itself and the call applies exactly it.
	Prepares bool `json:"prepares,omitempty"`
	// Concurrency is how the tool's calls share a batch with others:
	// ConcurrencyShared or ConcurrencyExclusive. Empty means shared for a
	// read-only tool and exclusive otherwise, which is also how specs
	// recorded before the field existed read.
	Concurrency string `json:"concurrency,omitempty"`
	// Exposure is how the model meets the tool: ExposureDirect (its spec is
	// sent every turn), ExposureDeferred (found through tool_search, then
	// sent for the rest of the session) or ExposureHidden (callable by the
	// runtime, never shown). Empty means direct, which is also how specs
	// recorded before the field existed read.
	Exposure string `json:"exposure,omitempty"`
	// Server names the MCP server the tool comes from; empty for built-ins.
	// Calls to it must reach a worker connected to that server.
	Server string `json:"server,omitempty"`
	// Requires names what a session must have for the tool to be offered:
	// RequiresSkills (its workspace configuration lists skills). Empty:
	// always offered.
	Requires string `json:"requires,omitempty"`

	// What the session needs to know about a call, declared by the tool so
	// the workflow never switches on tool names (see meta.go). Meta says
	// they were declared (MetaVersion); TestBuiltinMetadataComplete checks
	// every built-in sets it.
	Meta int `json:"meta,omitempty"`
	// LocalOK: a session with local_reads may run the tool as a local
	// activity. Only for read-only tools that finish in seconds and lose
	// nothing when run again.
	LocalOK bool `json:"local_ok,omitempty"`
	// SubjectArg names the string argument the permission rules match
	// (shell: "command", write: "path"); empty: the call has no subject.
	SubjectArg string `json:"subject_arg,omitempty"`
	// SubjectKind is what SubjectArg's value is: permission.KindCommand
	// (a command line: the hard block, the read-only classifier and the
	// sandbox apply to it), KindPath (a workspace path: path globs and
	// the control-file ask), KindURL (a URL whose host the address rules
	// match). The permission engine and the guardian decide on it, never
	// on the tool's name; read it through Kind, which also reads specs
	// recorded before the field existed.
	SubjectKind permission.Kind `json:"subject_kind,omitempty"`
	// NoDoomLoop: repeating a call unchanged is the tool's normal use
	// (polling a job), so the doom-loop guard does not count it.
	NoDoomLoop bool `json:"no_doom_loop,omitempty"`
	// Paths says where a call's paths are: PathsArg, PathsArgOrRoot,
	// PathsPatch, or empty when the arguments do not say (CallPaths).
	Paths string `json:"paths,omitempty"`
	// SummaryArg names the argument that labels a call in the Web UI
	// ("shell: go test ./..."); empty: the tool's name alone.
	SummaryArg string `json:"summary_arg,omitempty"`
	// SummaryLines adds the offset/limit line window to the label.
	SummaryLines bool `json:"summary_lines,omitempty"`
	// BackgroundArg names the boolean argument that asks for a background
	// job; SubjectArg's value is then the job's command.
	BackgroundArg string `json:"background_arg,omitempty"`
	// Job is how the tool acts on background jobs: JobOne (one job, by
	// its "id" argument, on the worker holding it) or JobAll (every job of
	// the session, on each worker holding some).
	Job string `json:"job,omitempty"`
	// Web marks a tool that reaches the web from the worker (web_fetch,
	// web_search). The permission engine asks for it by default although
	// it is read-only (what it sends can carry workspace data out), and
	// its SubjectArg, when set, holds a URL whose host is the subject
	// (Subject).
	Web bool `json:"web,omitempty"`
}

// Exposures: how much of the context a tool's spec takes. A large catalog
// sent every turn costs tokens and attention; deferred tools cost nothing
// until the model looks for them.
const (
	ExposureDirect   = "direct"
	ExposureDeferred = "deferred"
	ExposureHidden   = "hidden"
)

// RequiresSkills: the tool is offered only to a session that has skills
// (the skill tool), so a session without any sees neither it nor a list.
const RequiresSkills = "skills"

// Concurrency classes. A shared call runs beside other shared calls; an
// exclusive call is a barrier: it waits for every call before it and holds
// back every call after it. Calls whose paths are known (CallPaths) are
// refined: they conflict only with calls touching the same paths.
const (
	ConcurrencyShared    = "shared"
	ConcurrencyExclusive = "exclusive"
)

// ConcurrencyClass is the spec's class, defaulted from ReadOnly.
func (s Spec) ConcurrencyClass() string {
	switch {
	case s.Concurrency != "":
		return s.Concurrency
	case s.ReadOnly:
		return ConcurrencyShared
	default:
		return ConcurrencyExclusive
	}
}

// Result is what a tool returns. IsError marks a failure the model can act
// on (file not found, non-zero exit); it is not a Go error.
type Result struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	// Files are the versions of the files this call read or left behind
	// (see FileVersion); the session records them for the stale-write
	// guard. Never sent to the model.
	Files []FileVersion `json:"files,omitempty"`
	// WorkerQueue is the task queue only the worker that ran the call
	// polls; the activity sets it, so the session can route calls about a
	// background job to the worker that holds it.
	WorkerQueue string `json:"worker_queue,omitempty"`
	// ContentRef is set when the activity kept Content in the transcript
	// store and left only a preview here (see conversation.ToolResult):
	// a 20 KB read then costs the history a reference, not 20 KB.
	ContentRef   string `json:"content_ref,omitempty"`
	ContentBytes int    `json:"content_bytes,omitempty"`
	// Prepared is set by a Preparer: the call's completed arguments,
	// which replace the model's for the approval and the run.
	Prepared json.RawMessage `json:"prepared,omitempty"`
}

// Env is what a running tool needs from its caller.
type Env struct {
	// Workspace confines every path the tool touches.
	Workspace *Workspace
	// Heartbeat, when set, is called by long-running tools with a short
	// progress note (e.g. the last lines of output); the activity passes it
	// to Temporal so cancellation is delivered and the UI shows progress.
	Heartbeat func(progress string)
	// AllowNetwork lets sandboxed commands reach the network; the session
	// decides (SessionInput.Network), the default is no network.
	AllowNetwork bool
	// GuardWrites turns on the stale-write guard: write, edit and
	// apply_patch change an existing file only when Seen holds its current
	// hash. Off for sessions recorded before the guard existed.
	GuardWrites bool
	// Seen maps a path (relative to the working directory) to the hash of
	// the content this session last read or wrote there.
	Seen map[string]string
	// Session is the id of the session (workflow) the call belongs to:
	// background jobs are the session's, and listed and killed by it.
	Session string
	// Run is the run of the session's workflow the call belongs to (a
	// session continues as new into further runs): a background job keeps
	// it, so a job of a run that ended without its session (reset) dies
	// too. "" outside Temporal.
	Run string
	// JobID names the background job a `shell` call with background: true
	// starts; the session assigns it so it is the same on every replay.
	JobID string
	// ReadOnlySandbox is set when nobody approved the call and no rule a
	// person wrote allowed it: the built-in read-only classifier did. A
	// shell command then runs in the read-only sandbox (workspace
	// read-only, no network, private /tmp, empty home, no host sockets),
	// so a command the classifier misjudged fails harmlessly; a worker
	// without a working sandbox refuses to run it at all (fail closed).
	ReadOnlySandbox bool
	// ApprovedByPerson is set when a person approved this very call. Only
	// then may a tool change a control file (.longrun/**, .git/**,
	// AGENTS.md), also when the path the model named reaches one through
	// a symlink.
	ApprovedByPerson bool
	// Origin, for a session with a checkout of its own, is the person's
	// working directory on this worker, where the session's workspace
	// configuration (AGENTS.md, permissions, skills) was read when it
	// started; nil for a session in place, whose Workspace is that
	// directory. A tool that reads what the configuration listed (the
	// skill tool) reads it there, since the checkout holds only what is
	// committed and leaves control files off the branch.
	Origin *Workspace
}

// Tool is one built-in tool.
type Tool interface {
	Spec() Spec
	// Run executes already-validated arguments. A returned error means the
	// system is broken (worth a retry); failures the model can fix are a
	// Result with IsError.
	Run(ctx context.Context, env Env, args json.RawMessage) (Result, error)
}

// Preparer is a tool that completes a call's arguments before the call is
// decided (Spec.Prepares). A result with IsError ends the call with it,
// unasked; its Files count as read, as a tool run's do.
type Preparer interface {
	Prepare(ctx context.Context, env Env, args json.RawMessage) (json.RawMessage, Result, error)
}

// Errorf builds an error result for the model.
func Errorf(format string, a ...any) Result {
	return Result{Content: fmt.Sprintf(format, a...), IsError: true}
}
