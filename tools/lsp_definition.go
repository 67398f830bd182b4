package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"

	"github.com/longrun/longrun/lsp"
)

//go:embed lsp_definition.md
var lspDefinitionDescription string

// LSPDefinition finds where a symbol is defined, through the language
// server of the file.
type LSPDefinition struct{ m *lsp.Manager }

// Spec describes the lsp_definition tool.
func (*LSPDefinition) Spec() Spec {
	return lspSpec(LSPDefinitionName, lspDefinitionDescription, paramsSchema[LSPPositionParams](func(p paramProps) { nonEmpty(p["path"]) }))
}

// Run asks the server.
func (t *LSPDefinition) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool lsp_definition: no workspace")
	}
	var p LSPPositionParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	ctx, cancel := lspContext(ctx)
	defer cancel()
	at, bad := lspPlace(ctx, t.m, env, p)
	if bad != nil {
		return *bad, nil
	}
	locs, err := at.client.Definition(ctx, at.file, at.pos)
	if err != nil {
		return Errorf("%s: %v", at.server, err), nil
	}
	if len(locs) == 0 {
		return Result{Content: "no definition found at that place"}, nil
	}
	return Result{Content: formatLocations(at.root, locs)}, nil
}
