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
}

// LoadWorkspaceConfig reads .longrun/permissions.json of the session's
// working directory: {"rules": [{"tool": "shell", "pattern": "go test *",
// "action": "allow"}]}. A missing file is no rules; a malformed one is an
// error naming the file, so nobody runs with rules they did not mean.
func (a *Activities) LoadWorkspaceConfig(_ context.Context, workDir string) (WorkspaceConfig, error) {
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
		return WorkspaceConfig{}, nil
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
	return WorkspaceConfig{Path: filepath.Join(workDir, PermissionsFile), Rules: file.Rules}, nil
}
