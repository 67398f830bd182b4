package tools

import (
	"context"
	_ "embed"
	"encoding/json"

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
	return atPosition(ctx, t.m, env, args, LSPDefinitionName, func(ctx context.Context, at *lspTarget) (Result, error) {
		locs, err := at.client.Definition(ctx, at.file, at.pos)
		if err != nil {
			return Errorf("%s: %v", at.server, err), nil
		}
		if len(locs) == 0 {
			return Result{Content: "no definition found at that place"}, nil
		}
		return Result{Content: formatLocations(at.root, locs)}, nil
	})
}
