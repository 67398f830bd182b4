package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/longrun/longrun/lsp"
)

//go:embed lsp_references.md
var lspReferencesDescription string

// LSPReferences lists every use of a symbol, through the language server.
type LSPReferences struct{ m *lsp.Manager }

// Spec describes the lsp_references tool.
func (*LSPReferences) Spec() Spec {
	return lspSpec(LSPReferencesName, lspReferencesDescription, paramsSchema[LSPPositionParams](func(p paramProps) { nonEmpty(p["path"]) }))
}

// Run asks the server.
func (t *LSPReferences) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	return atPosition(ctx, t.m, env, args, LSPReferencesName, func(ctx context.Context, at *lspTarget) (Result, error) {
		locs, err := at.client.References(ctx, at.file, at.pos)
		if err != nil {
			return Errorf("%s: %v", at.server, err), nil
		}
		if len(locs) == 0 {
			return Result{Content: "no references found at that place"}, nil
		}
		return Result{Content: fmt.Sprintf("%d references:\n%s", len(locs), formatLocations(at.root, locs))}, nil
	})
}
