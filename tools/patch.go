package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// PatchName is the name the model calls the apply_patch tool by.
const PatchName = "apply_patch"

//go:embed patch.md
var patchDescription string

// PatchParams are the apply_patch tool's arguments.
type PatchParams struct {
	Patch string `json:"patch"`
}

// ApplyPatch applies a Codex-format patch to the workspace, all or
// nothing. It mutates the workspace, so it needs approval and runs at most
// once.
type ApplyPatch struct{}

// NewApplyPatch returns the apply_patch tool.
func NewApplyPatch() *ApplyPatch { return &ApplyPatch{} }

// Spec describes the apply_patch tool.
func (*ApplyPatch) Spec() Spec {
	return Spec{
		Name:        PatchName,
		Description: patchDescription,
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "patch": {"type": "string", "minLength": 1, "description": "The whole patch, from '*** Begin Patch' to '*** End Patch'."}
  },
  "required": ["patch"],
  "additionalProperties": false
}`),
		ReadOnly:       false,
		TimeoutSeconds: 60,
	}
}

// Run parses the patch, locates every hunk, then writes all files or none.
func (*ApplyPatch) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool apply_patch: no workspace")
	}
	var p PatchParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	patch, err := ParsePatch(p.Patch)
	if err != nil {
		return patchFailure(err)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	plan, err := patch.Plan(env.Workspace)
	if err != nil {
		return patchFailure(err)
	}
	if err := plan.Apply(ctx); err != nil {
		return patchFailure(err)
	}
	return Result{Content: plan.Summary()}, nil
}

// patchFailure turns an error the model can act on into an error result
// and passes a broken system through as a Go error.
func patchFailure(err error) (Result, error) {
	var pe *PatchError
	switch {
	case errors.As(err, &pe):
		return Errorf("apply_patch failed: %v\nNo files were modified.", err), nil
	case errors.Is(err, fs.ErrPermission):
		return Errorf("apply_patch failed: %v", err), nil
	}
	return Result{}, fmt.Errorf("tool apply_patch: %w", err)
}
