// Package tools holds the built-in tools, one file each, the registry and
// workspace confinement: the implementations (the sandbox, jobs, the patch
// engine, grep, web, LSP) of the contract in package toolspec, which is
// what the session workflow imports. It is plain Go: no Temporal, no
// openai-go, so every tool is tested with t.TempDir().
package tools

import (
	"context"
	"encoding/json"

	"github.com/longrun/longrun/toolspec"
)

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

// The contract's types and functions, as the tools write them (package
// toolspec holds them, so the workflow needs none of the implementations).
type (
	Spec          = toolspec.Spec
	Result        = toolspec.Result
	FileVersion   = toolspec.FileVersion
	Patch         = toolspec.Patch
	FilePatch     = toolspec.FilePatch
	Hunk          = toolspec.Hunk
	PatchOp       = toolspec.PatchOp
	PatchError    = toolspec.PatchError
	ArgumentError = toolspec.ArgumentError
	ParamProps    = toolspec.ParamProps
)

// Errorf builds an error result for the model (toolspec.Errorf).
func Errorf(format string, a ...any) Result { return toolspec.Errorf(format, a...) }
