package tools

import (
	"context"
	_ "embed"
	"encoding/json"

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
	return atPosition(ctx, t.m, env, args, LSPHoverName, func(ctx context.Context, at *lspTarget) (Result, error) {
		text, err := at.client.Hover(ctx, at.file, at.pos)
		if err != nil {
			return Errorf("%s: %v", at.server, err), nil
		}
		if text == "" {
			return Result{Content: "the server has nothing to say about that place"}, nil
		}
		return Result{Content: TruncateLabel(text, 8<<10)}, nil
	})
}
