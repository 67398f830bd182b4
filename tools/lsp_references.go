package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
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
	if env.Workspace == nil {
		return Result{}, errors.New("tool lsp_references: no workspace")
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
	locs, err := at.client.References(ctx, at.file, at.pos)
	if err != nil {
		return Errorf("%s: %v", at.server, err), nil
	}
	if len(locs) == 0 {
		return Result{Content: "no references found at that place"}, nil
	}
	return Result{Content: fmt.Sprintf("%d references:\n%s", len(locs), formatLocations(at.root, locs))}, nil
}
