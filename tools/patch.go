package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/longrun/longrun/toolspec"
	"io/fs"
	"strings"
)

// PatchName is the name the model calls the apply_patch tool by.
const PatchName = toolspec.PatchName

//go:embed patch.md
var patchDescription string

// PatchParams are the apply_patch tool's arguments.
type PatchParams struct {
	Patch string `json:"patch" jsonschema:"The whole patch, from '*** Begin Patch' to '*** End Patch'."`
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
		Parameters: paramsSchema[PatchParams](func(p paramProps) {
			nonEmpty(p["patch"])
		}),
		ReadOnly:       false,
		TimeoutSeconds: 60,
		EditsFiles:     true,
		Meta:           MetaVersion, Concurrency: ConcurrencyExclusive, Paths: PathsPatch,
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
	plan, err := PlanPatch(patch, env.Workspace)
	if err != nil {
		return patchFailure(err)
	}
	if msg := plan.controlCheck(env); msg != "" {
		return Errorf("%s", msg), nil
	}
	if msg := plan.staleCheck(env); msg != "" {
		return Errorf("%s", msg), nil
	}
	if err := plan.Apply(ctx); err != nil {
		return patchFailure(err)
	}
	return Result{Content: plan.Summary(), Files: plan.versions(env.Workspace)}, nil
}

// staleCheck runs the stale-write guard on every existing file the patch
// changes, before anything is written, and names all the stale ones so
// one re-read fixes the call.
func (pl *PatchPlan) staleCheck(env Env) string {
	var msgs []string
	for _, t := range pl.targets {
		if !t.orig.exists || t.orig.dir || !t.changed() {
			continue
		}
		if msg := env.staleCheck(t.display, t.real, t.orig.data); msg != "" {
			msgs = append(msgs, msg)
		}
	}
	return strings.Join(msgs, "\n")
}

// controlCheck refuses a patch that changes a control file (see
// IsControlPath), also one reached through a symlink, unless a person
// approved the call; it names every such file.
func (pl *PatchPlan) controlCheck(env Env) string {
	if env.ApprovedByPerson {
		return ""
	}
	var msgs []string
	for _, t := range pl.targets {
		if !t.changed() || !IsControlPath(t.real) {
			continue
		}
		if err := env.Workspace.controlRefusal(env, t.display, &entry{real: t.real}); err != nil {
			msgs = append(msgs, "apply_patch: "+err.Error())
		}
	}
	return strings.Join(msgs, "\n")
}

// versions are the files as the applied plan left them.
func (pl *PatchPlan) versions(ws *Workspace) []FileVersion {
	var out []FileVersion
	for _, t := range pl.targets {
		switch {
		case !t.changed():
		case t.final.exists:
			out = append(out, ws.version(t.real, t.final.data))
		default:
			out = append(out, FileVersion{Path: ws.display(t.real)})
		}
	}
	return out
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
