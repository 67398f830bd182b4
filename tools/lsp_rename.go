package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/longrun/longrun/lsp"
)

//go:embed lsp_rename.md
var lspRenameDescription string

// LSPRenameParams are lsp_rename's arguments as the model gives them.
type LSPRenameParams struct {
	LSPPositionParams
	NewName string `json:"new_name" jsonschema:"The new name."`
}

// lspRenameArgs are the arguments once the session prepared the call:
// the model's, plus the patch the rename is, which the person approves
// and Run applies as it is.
type lspRenameArgs struct {
	LSPRenameParams
	Patch string `json:"patch,omitempty"`
}

// LSPRename renames a symbol across the workspace as one patch. It is
// prepared before it is decided (Spec.Prepares): the server computes the
// rename and the call's arguments get the patch, so the approval shows
// the patch, and running the call applies exactly that patch, all or
// nothing, as apply_patch does.
type LSPRename struct{ m *lsp.Manager }

// Spec describes the lsp_rename tool.
func (*LSPRename) Spec() Spec {
	return Spec{
		Name: LSPRenameName, Description: lspRenameDescription,
		Parameters: paramsSchema[LSPRenameParams](func(p paramProps) {
			nonEmpty(p["path"])
			nonEmpty(p["new_name"])
		}),
		ReadOnly: false, TimeoutSeconds: lspWait + 10, EditsFiles: true, Prepares: true, Exposure: ExposureDeferred,
		Meta: MetaVersion, Concurrency: ConcurrencyExclusive,
		// Once prepared, its paths are the patch's; before, unknown, so
		// the call waits for every call before it.
		SubjectArg: "path", SubjectKind: SubjectPath, Paths: PathsPatch, SummaryArg: "new_name",
	}
}

// Prepare asks the server for the rename and returns the arguments with
// the patch, and the versions of the files it read (so the stale-write
// guard lets exactly these contents be changed). A rename the server
// refuses is an error result, and the call is not asked about.
func (t *LSPRename) Prepare(ctx context.Context, env Env, args json.RawMessage) (json.RawMessage, Result, error) {
	if env.Workspace == nil {
		return nil, Result{}, errors.New("tool lsp_rename: no workspace")
	}
	var p lspRenameArgs
	if err := unmarshalArgs(args, &p); err != nil {
		return nil, Errorf("%v", err), nil
	}
	if p.Patch != "" {
		return args, Result{}, nil // prepared already (a call carried across continue-as-new)
	}
	ctx, cancel := lspContext(ctx)
	defer cancel()
	at, bad := lspPlace(ctx, t.m, env, p.LSPPositionParams)
	if bad != nil {
		return nil, *bad, nil
	}
	changed, err := at.client.Rename(ctx, at.file, at.pos, p.NewName)
	if err != nil {
		return nil, Errorf("%s cannot rename: %v", at.server, err), nil
	}
	if len(changed) == 0 {
		return nil, Errorf("%s found nothing to rename at that place", at.server), nil
	}
	var changes []FileChange
	var files []FileVersion
	for abs, after := range changed {
		rel := lsp.Rel(at.root, abs)
		before, err := env.Workspace.ReadFile(rel)
		if err != nil {
			return nil, Errorf("the rename touches %s, which this session cannot change: %v", rel, err), nil
		}
		changes = append(changes, FileChange{Path: rel, Before: string(before), After: after})
		files = append(files, FileVersion{Path: rel, SHA256: hashBytes(before)})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	patch, err := PatchFor(env.Workspace, changes)
	if err != nil {
		return nil, Errorf("the rename cannot be written as a patch: %v", err), nil
	}
	p.Patch = patch
	out, err := json.Marshal(p)
	if err != nil {
		return nil, Result{}, fmt.Errorf("encode lsp_rename arguments: %w", err)
	}
	return out, Result{Files: files}, nil
}

// Run applies the prepared patch as apply_patch does: all files or none,
// refused when any of them changed since the rename was computed.
func (t *LSPRename) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	var p lspRenameArgs
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	if p.Patch == "" {
		return Errorf("lsp_rename was not prepared (its patch is missing), so nothing was changed: this session's runtime does not prepare calls; use apply_patch"), nil
	}
	if msg := renameStale(env, p.Patch); msg != "" {
		return Errorf("%s", msg), nil
	}
	pargs, _ := json.Marshal(PatchParams{Patch: p.Patch})
	res, err := NewApplyPatch().Run(ctx, env, pargs)
	if err != nil {
		return res, err
	}
	if res.IsError {
		res.Content = "the rename's patch no longer applies; call lsp_rename again. " + res.Content
		return res, nil
	}
	res.Content = fmt.Sprintf("renamed to %s\n%s", p.NewName, res.Content)
	return res, nil
}

// renameStale names the files the patch changes that are no longer as the
// rename found them (the session recorded their versions when it
// prepared the call), so the model hears plainly what happened.
func renameStale(env Env, patch string) string {
	if env.Workspace == nil || !env.GuardWrites {
		return ""
	}
	parsed, err := ParsePatch(patch)
	if err != nil {
		return ""
	}
	var stale []string
	for _, f := range parsed.Files {
		raw, err := env.Workspace.ReadFile(f.Path)
		if err != nil || hashBytes(raw) != env.Seen[f.Path] {
			stale = append(stale, f.Path)
		}
	}
	if len(stale) == 0 {
		return ""
	}
	return fmt.Sprintf("%s changed after the rename was computed, so nothing was changed: call lsp_rename again", strings.Join(stale, ", "))
}
