package session

import (
	"encoding/json"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/toolspec"
)

// Verdict is what the session does with one call of the model's reply.
type Verdict int

// Verdicts. Unknown, Invalid, Denied and Blocked are answered at once,
// without running and without asking anyone.
const (
	Unknown Verdict = iota // no such tool, or one the model may not call
	Invalid                // the arguments do not match the tool's schema
	Denied                 // the profile or a rule denies it
	Blocked                // the hard block denies it
	Ask                    // it waits for a person's decision
	Run                    // it runs (when the batch plan admits it)
)

// Decision is the verdict on one call and what goes with it.
type Decision struct {
	Verdict Verdict
	// Result answers an Unknown, Invalid, Denied or Blocked call.
	Result *conversation.ToolResult
	// Why a call needs approval (Ask).
	Why string
	// Perm is how the permission engine saw the call (for remembered
	// rules); zero for Unknown and Invalid.
	Perm permission.Call
	// ReadOnlySandbox: only the read-only classifier allowed it, so it runs
	// in the read-only sandbox (permission.Decision.Classified).
	ReadOnlySandbox bool
	// Permission is the engine's own decision (layer, rule, reason), for
	// what the driver does beyond the verdict; zero for Unknown and
	// Invalid.
	Permission permission.Decision
}

// Catalog is what Decide needs of the session's tools.
type Catalog interface {
	// Spec is the tool the model may call by name, if there is one (a
	// hidden tool is the runtime's, never the model's).
	Spec(name string) (toolspec.Spec, bool)
	// Names are every tool's name, sorted, for the unknown-tool text.
	Names() []string
}

// Decide decides one call: unknown, invalid, or what the permission
// engine says of it. The engine counts the call for its doom-loop guard,
// so each call is decided once.
func Decide(c conversation.ToolCall, cat Catalog, engine *permission.Engine) Decision {
	spec, ok := cat.Spec(c.Name)
	if !ok {
		r := AnswerUnknownTool.Result(Facts{Tool: c.Name, Tools: cat.Names()})
		return Decision{Verdict: Unknown, Result: &r}
	}
	if err := toolspec.ValidateArguments(spec, c.Arguments); err != nil {
		r := AnswerInvalidArguments.Result(Facts{Detail: err.Error()})
		return Decision{Verdict: Invalid, Result: &r}
	}
	pc := PermissionCall(c, spec)
	d := engine.Decide(pc)
	engine.Observe(pc)
	switch d.Action {
	case permission.Allow:
		return Decision{Verdict: Run, Perm: pc, ReadOnlySandbox: d.Classified, Permission: d}
	case permission.Ask:
		return Decision{Verdict: Ask, Perm: pc, Why: d.Reason, Permission: d}
	}
	verdict, answer := Denied, AnswerDeniedByPolicy
	if d.Layer == permission.LayerHardBlock {
		verdict, answer = Blocked, AnswerBlocked
	}
	r := answer.Result(Facts{Detail: d.Reason})
	return Decision{Verdict: verdict, Result: &r, Perm: pc, Permission: d}
}

// PermissionCall describes a validated call to the permission engine.
func PermissionCall(c conversation.ToolCall, spec toolspec.Spec) permission.Call {
	var args map[string]any
	_ = json.Unmarshal([]byte(c.Arguments), &args)
	canonical, _ := json.Marshal(args) // map keys are sorted: a stable key
	argsKey := string(canonical)
	if spec.NoDoomLoop {
		// Polling a job repeats the same arguments by design, and each
		// answer is new output: no doom loop to catch.
		argsKey = ""
	}
	paths, _ := spec.CallPaths(json.RawMessage(c.Arguments)) // for the control-file check
	return permission.Call{Tool: c.Name, Kind: spec.Kind(), ReadOnly: spec.ReadOnly, Subject: spec.Subject(args), ArgsKey: argsKey, Paths: paths, Web: spec.Web}
}

// Runner is where a call that runs gets its result.
type Runner int

// Runners.
const (
	RunActivity      Runner = iota // a tool activity through the server
	RunLocalActivity               // a local activity, inside the workflow task (local_reads)
	RunBySession                   // the session answers it itself (todo, tool_search, task, the job tools)
)

// Route says where a call of spec runs. bySession: the session answers
// the tool itself. A tool runs as a local activity only with local_reads
// and when it declares it may (toolspec.Spec.LocalOK, read-only): a shell
// command, a write or an MCP call needs heartbeats, a cancellation that
// reaches the process, or at-most-once.
func Route(spec toolspec.Spec, bySession, localReads bool) Runner {
	switch {
	case bySession:
		return RunBySession
	case localReads && spec.ReadOnly && spec.LocalOK:
		return RunLocalActivity
	}
	return RunActivity
}
