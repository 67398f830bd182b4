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

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/skills"
	"github.com/longrun/longrun/tools"
)

// PermissionsFile is the workspace's rules file, and
// ErrTypeBadWorkspaceConfig marks one that cannot be used: see package
// contract.
const (
	PermissionsFile           = contract.PermissionsFile
	ErrTypeBadWorkspaceConfig = contract.ErrTypeBadWorkspaceConfig
)

// WorkspaceConfig is the result of LoadWorkspaceConfig: see package contract.
type WorkspaceConfig = contract.WorkspaceConfig

// WorkerConfig is what the worker's own configuration directory says
// about the sessions it runs, given once to New (Config.Worker).
type WorkerConfig struct {
	// Rules are the directory's permissions.json (LoadRulesFile); they
	// reach every session as WorkspaceConfig.WorkerRules.
	Rules []permission.Rule
	// TrustWorkspace is set when a person marked the workspace trusted
	// (trusted.json or --trust-workspace): only then do its
	// .longrun/permissions.json rules count. The workspace's content is
	// otherwise the model's to change, so its rules could be the model's.
	TrustWorkspace bool
	// Notes are said in every session's WorkspaceConfig.Notes, e.g. that
	// the workspace's mcp.json was ignored.
	Notes []string
	// Skills are the worker's own skill directories (its configuration
	// directory's skills/, then the user's), after the workspace's.
	Skills []skills.Location
}

// UntrustedNote is what a session's notes and the worker's log say about
// a workspace configuration file that was not used.
func UntrustedNote(file string) string {
	return file + " ignored: the workspace is not trusted; see README Security model"
}

// LoadRulesFile reads a permissions file ({"rules": [...]}, the format of
// .longrun/permissions.json) and checks its rules as the layer named
// layer would hold them. A missing file is no rules and no error.
func LoadRulesFile(path, layer string) ([]permission.Rule, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return parseRules(raw, path, layer)
}

// parseRules decodes and validates a permissions file's content; name is
// the file as the message should name it.
func parseRules(raw []byte, name, layer string) ([]permission.Rule, error) {
	var file struct {
		Rules []permission.Rule `json:"rules"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return nil, fmt.Errorf("%s: %v (want {\"rules\": [{\"tool\": \"shell\", \"pattern\": \"go test *\", \"action\": \"allow\"}]})", name, err)
	}
	// Validate now, with the file's name in the message.
	if _, err := permission.New(permission.Config{Layers: []permission.Layer{{Name: layer, Rules: file.Rules}}}); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	return file.Rules, nil
}

// LoadWorkspaceConfig reads the session's configuration (see
// loadWorkspaceConfig) and says whether this worker's shell has a working
// sandbox (WorkspaceConfig.NoSandbox).
func (a *Activities) LoadWorkspaceConfig(ctx context.Context, workDir string) (WorkspaceConfig, error) {
	wc, err := a.loadWorkspaceConfig(ctx, workDir)
	if err != nil {
		return wc, err
	}
	wc.NoSandbox = !a.sandboxed()
	wc.Notify = a.cfg.Notify.Sinks() > 0
	return wc, nil
}

// sandboxed reports whether this worker's shell commands run in a working
// sandbox (tools.CheckSandbox probes once per process).
func (a *Activities) sandboxed() bool {
	if a.cfg.Shell == nil {
		return false
	}
	ok, _, err := tools.CheckSandbox(*a.cfg.Shell)
	return ok && err == nil
}

// loadWorkspaceConfig reads .longrun/permissions.json of the session's
// working directory: {"rules": [{"tool": "shell", "pattern": "go test *",
// "action": "allow"}]}, but only when the workspace is trusted (see
// WorkerConfig); otherwise a file there is named in Notes and not read.
// A missing file is no rules; a malformed one is an error naming the
// file, so nobody runs with rules they did not mean. It adds the worker's
// own rules, and reads the nearest AGENTS.md (see Instructions).
func (a *Activities) loadWorkspaceConfig(_ context.Context, workDir string) (WorkspaceConfig, error) {
	ws, err := a.cfg.Workspace.Sub(workDir)
	if err != nil {
		return WorkspaceConfig{}, temporal.NewNonRetryableApplicationError(fmt.Sprintf("working directory %q: %v", workDir, err), ErrTypeBadWorkspaceConfig, err)
	}
	base := WorkspaceConfig{WorkerRules: a.cfg.Worker.Rules, Notes: append([]string(nil), a.cfg.Worker.Notes...)}
	name := filepath.Join(workDir, PermissionsFile)
	if !a.cfg.Worker.TrustWorkspace {
		// Not even resolved: whatever is there is not read.
		if _, err := os.Lstat(filepath.Join(ws.Root(), PermissionsFile)); err == nil {
			base.Notes = append(base.Notes, UntrustedNote(name))
		}
		return a.withInstructions(base, ws)
	}
	raw, err := ws.ReadFile(PermissionsFile)
	if errors.Is(err, fs.ErrNotExist) {
		return a.withInstructions(base, ws)
	}
	if errors.Is(err, tools.ErrOutsideWorkspace) || errors.Is(err, tools.ErrSpecialFile) {
		return WorkspaceConfig{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadWorkspaceConfig, err)
	}
	if err != nil {
		return WorkspaceConfig{}, fmt.Errorf("read %s: %w", filepath.Join(ws.Root(), PermissionsFile), err)
	}
	rules, err := parseRules(raw, name, permission.LayerWorkspace)
	if err != nil {
		return WorkspaceConfig{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadWorkspaceConfig, err)
	}
	base.Path, base.Rules = name, rules
	return a.withInstructions(base, ws)
}

// withInstructions adds the working directory's AGENTS.md and its
// Environment to wc.
func (a *Activities) withInstructions(wc WorkspaceConfig, ws *tools.Workspace) (WorkspaceConfig, error) {
	ins, notes, err := a.loadInstructions(ws)
	if err != nil {
		return WorkspaceConfig{}, err
	}
	wc.Instructions = ins
	wc.Notes = append(wc.Notes, notes...)
	wc.Environment = environment(ws)
	wc.Skills, notes = a.listSkills(ws)
	wc.Notes = append(wc.Notes, notes...)
	return wc, nil
}
