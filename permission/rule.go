package permission

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Action is what a rule or the engine decides for a call.
type Action string

// The three actions. Ask means a person must approve the call.
const (
	Allow Action = "allow"
	Ask   Action = "ask"
	Deny  Action = "deny"
)

// strictness orders actions so that combining decisions keeps the strictest.
func (a Action) strictness() int {
	switch a {
	case Allow:
		return 0
	case Ask:
		return 1
	}
	return 2
}

// Rule allows, asks for or denies the calls it matches.
type Rule struct {
	// Tool is a wildcard over tool names: "shell", "mcp_*", "*".
	Tool string `json:"tool"`
	// Pattern, when set, narrows the rule to some subjects. For a command
	// tool (shell) it is a wildcard over each command ("git *", "go test
	// *"); for a URL tool a wildcard over the host; for other tools a path
	// glob relative to the workspace ("docs/**").
	Pattern string `json:"pattern,omitempty"`
	// Action is allow, ask or deny.
	Action Action `json:"action"`
	// Exact, for a command tool only, makes Pattern (wildcards escaped,
	// see Literal) match one whole command line and nothing else, not
	// each command in it: "approve and remember" writes such a rule, so
	// what runs later unasked is exactly the line a person approved.
	Exact bool `json:"exact,omitempty"`
}

// String renders a rule as it appears in decision reasons: shell:"git *".
func (r Rule) String() string {
	if r.Exact {
		lit, _ := literalText(r.Pattern)
		return r.Tool + ":exactly " + strconv.Quote(lit)
	}
	if r.Pattern == "" {
		return r.Tool
	}
	return r.Tool + ":" + strconv.Quote(r.Pattern)
}

// Layer is a named list of rules. Within a layer the last matching rule wins;
// across layers the later layer wins.
type Layer struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// Layer names the engine uses in decisions. Workspace and session are the
// names callers are expected to give their layers; the others are reserved.
const (
	LayerDefaults   = "defaults"   // built-in logic, no rule
	LayerWorker     = "worker"     // permissions.json in the worker's config directory
	LayerWorkspace  = "workspace"  // .longrun/permissions.json
	LayerSession    = "session"    // the session's start options
	LayerRemembered = "remembered" // approvals remembered for the session
	LayerHardBlock  = "hardblock"  // shellcmd's block list
	LayerProfile    = "profile"    // the plan and auto profiles
	LayerDoomLoop   = "doom_loop"  // the repeated-call check
	LayerControl    = "control"    // a write to a control file (.longrun, .git, AGENTS.md)
	LayerSandbox    = "sandbox"    // no sandbox on this worker: shell commands ask
)

// Profiles.
const (
	ProfileBuild = "build" // the defaults: reads run, changes ask
	ProfilePlan  = "plan"  // read-only: tools that change anything are denied and hidden
	ProfileAuto  = "auto"  // everything in the workspace runs; deny rules and hard blocks stay
)

// Approvers.
const (
	ApproverPerson = "person" // someone answers ask decisions
	ApproverNone   = "none"   // nobody does: ask becomes deny (fail-closed)
	// ApproverGuardian: a reviewer model (package guardian) sees some ask
	// decisions before a person does. To the engine it is a person: ask
	// stays ask, and the session decides who answers it.
	ApproverGuardian = "guardian"
)

// DoomLoopTool is the tool name rules use to answer the doom-loop check
// itself: {"tool":"doom_loop","pattern":"read","action":"allow"} stops it for
// read. Such rules are matched by exact name, never by a "*" rule.
const DoomLoopTool = "doom_loop"

// Errors New, Remember and Restore return, wrapped with the offending value.
var (
	ErrBadAction   = errors.New("permission: action must be allow, ask or deny")
	ErrBadRule     = errors.New("permission: bad rule")
	ErrBadProfile  = errors.New("permission: profile must be build, plan or auto")
	ErrBadApprover = errors.New("permission: approver must be person, guardian or none")
	ErrBadLayer    = errors.New("permission: bad layer")
	ErrBadDoomLoop = errors.New("permission: doom loop threshold must be at least 2, or negative to turn it off")
)

// validate reports what is wrong with a rule.
func (r Rule) validate() error {
	switch r.Action {
	case Allow, Ask, Deny:
	default:
		return fmt.Errorf("rule %s: action %q: %w", r, r.Action, ErrBadAction)
	}
	if r.Tool == "" {
		return fmt.Errorf("rule with action %s: tool is empty, use \"*\" for every tool: %w", r.Action, ErrBadRule)
	}
	if r.Exact && (r.Pattern == "" || strings.ContainsAny(r.Tool, "*?")) {
		// Which tools take a command line is for their specs to say
		// (KindCommand); an exact rule matches only calls of such a tool.
		return fmt.Errorf("rule %s: exact is for a command line: tool must name one command tool (\"shell\") and pattern the line: %w", r, ErrBadRule)
	}
	return nil
}
