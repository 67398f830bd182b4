package contract

import (
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/skills"
)

// PermissionsFile is the workspace's permission rules, relative to the
// session's working directory.
const PermissionsFile = ".longrun/permissions.json"

// ErrTypeBadWorkspaceConfig marks a permissions file that cannot be used.
const ErrTypeBadWorkspaceConfig = "InvalidWorkspaceConfig"

// WorkspaceConfig is what LoadWorkspaceConfig read, recorded in history so
// a replay decides exactly as the original run did.
type WorkspaceConfig struct {
	Path  string            `json:"path,omitempty"` // empty: no file
	Rules []permission.Rule `json:"rules,omitempty"`
	// Instructions is the AGENTS.md nearest the working directory, for
	// the system prompt; nil when there is none.
	Instructions *Instructions `json:"instructions,omitempty"`
	// Notes say what was found but not used (an AGENTS.md linking out of
	// the workspace), so the history explains a missing instruction.
	Notes []string `json:"notes,omitempty"`
	// WorkerRules are the permission rules of the worker's own
	// configuration directory (permissions.json there), which a person
	// wrote; they form the "worker" layer below the workspace's.
	WorkerRules []permission.Rule `json:"worker_rules,omitempty"`
	// Environment is where the session runs (working directory, git
	// branch, OS, shell), for the default system prompt; nil in
	// histories recorded before it.
	Environment *Environment `json:"environment,omitempty"`
	// NoSandbox is set when the worker that loaded the configuration has
	// no working shell sandbox: then no shell command may run without a
	// person's approval, and an auto session refuses to start. Recorded
	// as a negative so histories from before the field decide as before.
	NoSandbox bool `json:"no_sandbox,omitempty"`
	// Notify is set when the worker that loaded the configuration has
	// notification sinks: only then does the session schedule the Notify
	// activity, so a session without sinks issues no extra command, and
	// histories from before the field replay as they ran.
	Notify bool `json:"notify,omitempty"`
	// Skills are the skills the session lists for the model, in
	// precedence order (see listSkills); empty: none, and no skill tool.
	Skills []skills.Skill `json:"skills,omitempty"`
}

// Instructions is the AGENTS.md a session follows, read at start and
// recorded in history with the rest of the workspace configuration.
type Instructions struct {
	Path      string `json:"path"` // relative to the workspace root, slash-separated
	Content   string `json:"content"`
	Truncated bool   `json:"truncated,omitempty"`
}

// Environment is what the worker knows about where a session runs and the
// workflow cannot: its working directory on this machine, the git checkout
// and branch, the OS and the shell. LoadWorkspaceConfig reads it, so it is
// recorded in history and the default system prompt renders the same on
// replay.
type Environment struct {
	WorkDir string `json:"workdir"`            // absolute path on the worker
	GitRoot string `json:"git_root,omitempty"` // the checkout holding WorkDir; "" for none
	Branch  string `json:"branch,omitempty"`   // "" when HEAD is detached (or unknown)
	Head    string `json:"head,omitempty"`     // short commit id of a detached HEAD
	OS      string `json:"os,omitempty"`
	Shell   string `json:"shell,omitempty"`
}
