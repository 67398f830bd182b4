// Package tools defines the tool contract (spec, call, result), the registry,
// argument validation, workspace confinement and the built-in tools, one file
// each. It is plain Go: no Temporal, no openai-go, so every tool is tested
// with t.TempDir().
package tools

import (
	"context"
	"encoding/json"
	"fmt"
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
}

// Result is what a tool returns. IsError marks a failure the model can act
// on (file not found, non-zero exit); it is not a Go error.
type Result struct {
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
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
}

// Tool is one built-in tool.
type Tool interface {
	Spec() Spec
	// Run executes already-validated arguments. A returned error means the
	// system is broken (worth a retry); failures the model can fix are a
	// Result with IsError.
	Run(ctx context.Context, env Env, args json.RawMessage) (Result, error)
}

// Errorf builds an error result for the model.
func Errorf(format string, a ...any) Result {
	return Result{Content: fmt.Sprintf(format, a...), IsError: true}
}
