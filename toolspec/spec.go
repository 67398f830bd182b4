// Package toolspec is the tool contract: what the session workflow knows
// of a tool and of a call to it (Spec, Result, FileVersion), the metadata a
// spec declares so the workflow never switches on a tool's name (the kind
// of its subject, the paths a call touches, its concurrency class, its UI
// summary), argument schemas and their validation, and the apply_patch
// format the session reads to know what a patch touches. It is pure: no
// process, no network, no file system, so workflows/ can import it; the
// implementations (the sandbox, jobs, the patch engine, grep, web, LSP)
// are in package tools, below it.
package toolspec

import (
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

// Errorf builds an error result for the model.
func Errorf(format string, a ...any) Result {
	return Result{Content: fmt.Sprintf(format, a...), IsError: true}
}
