package activities

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/tools"
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
	// NoSandbox is set when the worker that loaded the configuration has
	// no working shell sandbox: then no shell command may run without a
	// person's approval, and an auto session refuses to start. Recorded
	// as a negative so histories from before the field decide as before.
	NoSandbox bool `json:"no_sandbox,omitempty"`
}

// LoadWorkspaceConfig reads .longrun/permissions.json of the session's
// working directory: {"rules": [{"tool": "shell", "pattern": "go test *",
// "action": "allow"}]}. A missing file is no rules; a malformed one is an
// error naming the file, so nobody runs with rules they did not mean. It
// also reads the nearest AGENTS.md (see Instructions).
func (a *Activities) LoadWorkspaceConfig(ctx context.Context, workDir string) (WorkspaceConfig, error) {
	wc, err := a.loadWorkspaceConfig(ctx, workDir)
	if err != nil {
		return wc, err
	}
	wc.NoSandbox = !a.sandboxed()
	return wc, nil
}

// SetShell tells the activities how this worker runs shell commands, so
// LoadWorkspaceConfig can tell a session whether a sandbox stands behind
// its approvals (WorkspaceConfig.NoSandbox). Without it the activities
// assume none: fail closed. A function, not a method, like SetJobs.
func SetShell(a *Activities, cfg tools.ShellConfig) { a.shell = &cfg }

// sandboxed reports whether this worker's shell commands run in a working
// sandbox (tools.CheckSandbox probes once per process).
func (a *Activities) sandboxed() bool {
	if a.shell == nil {
		return false
	}
	ok, _, err := tools.CheckSandbox(*a.shell)
	return ok && err == nil
}

func (a *Activities) loadWorkspaceConfig(_ context.Context, workDir string) (WorkspaceConfig, error) {
	ws, err := a.workspace.Sub(workDir)
	if err != nil {
		return WorkspaceConfig{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("working directory %q: %v", workDir, err), ErrTypeBadWorkspaceConfig, err)
	}
	path, err := ws.Resolve(PermissionsFile)
	if err != nil {
		return WorkspaceConfig{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadWorkspaceConfig, err)
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return a.withInstructions(WorkspaceConfig{}, ws)
	}
	if err != nil {
		return WorkspaceConfig{}, fmt.Errorf("read %s: %w", path, err)
	}
	var file struct {
		Rules []permission.Rule `json:"rules"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return WorkspaceConfig{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s: %v (want {\"rules\": [{\"tool\": \"shell\", \"pattern\": \"go test *\", \"action\": \"allow\"}]})", filepath.Join(workDir, PermissionsFile), err),
			ErrTypeBadWorkspaceConfig, err)
	}
	// Validate now, with the file's name in the message.
	if _, err := permission.New(permission.Config{Layers: []permission.Layer{{Name: permission.LayerWorkspace, Rules: file.Rules}}}); err != nil {
		return WorkspaceConfig{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("%s: %v", filepath.Join(workDir, PermissionsFile), err), ErrTypeBadWorkspaceConfig, err)
	}
	return a.withInstructions(WorkspaceConfig{Path: filepath.Join(workDir, PermissionsFile), Rules: file.Rules}, ws)
}

// withInstructions adds the working directory's AGENTS.md to wc.
func (a *Activities) withInstructions(wc WorkspaceConfig, ws *tools.Workspace) (WorkspaceConfig, error) {
	ins, notes, err := a.loadInstructions(ws)
	if err != nil {
		return WorkspaceConfig{}, err
	}
	wc.Instructions, wc.Notes = ins, notes
	return wc, nil
}
