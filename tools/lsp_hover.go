package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"

	"github.com/longrun/longrun/lsp"
)

//go:embed lsp_hover.md
var lspHoverDescription string

// LSPHover shows a symbol's type and documentation.
type LSPHover struct{ m *lsp.Manager }

// Spec describes the lsp_hover tool.
func (*LSPHover) Spec() Spec {
	return lspSpec(LSPHoverName, lspHoverDescription, paramsSchema[LSPPositionParams](func(p paramProps) { nonEmpty(p["path"]) }))
}

// Run asks the server.
func (t *LSPHover) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool lsp_hover: no workspace")
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
	text, err := at.client.Hover(ctx, at.file, at.pos)
	if err != nil {
		return Errorf("%s: %v", at.server, err), nil
	}
	if text == "" {
		return Result{Content: "the server has nothing to say about that place"}, nil
	}
	return Result{Content: TruncateLabel(text, 8<<10)}, nil
}
