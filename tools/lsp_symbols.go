package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/longrun/longrun/lsp"
)

//go:embed lsp_symbols.md
var lspSymbolsDescription string

// LSPSymbolsParams ask for a file's symbols or the workspace's.
type LSPSymbolsParams struct {
	Path  string `json:"path,omitempty" jsonschema:"File whose symbols to list (document symbols). Omit it to search the workspace with query."`
	Query string `json:"query,omitempty" jsonschema:"With no path: the name (or part of it) of the workspace symbols to find."`
}

// LSPSymbols lists a file's symbols, or finds symbols in the workspace.
type LSPSymbols struct{ m *lsp.Manager }

// Spec describes the lsp_symbols tool.
func (*LSPSymbols) Spec() Spec {
	s := lspSpec(LSPSymbolsName, lspSymbolsDescription, paramsSchema[LSPSymbolsParams](nil))
	s.SummaryArg = "query"
	return s
}

// Run asks the server of the file, or every configured server for the
// workspace.
func (t *LSPSymbols) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool lsp_symbols: no workspace")
	}
	var p LSPSymbolsParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	ctx, cancel := lspContext(ctx)
	defer cancel()
	if p.Path != "" {
		at, bad := lspFile(ctx, t.m, env, p.Path)
		if bad != nil {
			return *bad, nil
		}
		syms, err := at.client.DocumentSymbols(ctx, at.file)
		if err != nil {
			return Errorf("%s: %v", at.server, err), nil
		}
		var sb strings.Builder
		writeSymbols(&sb, at.root, at.text, syms, 0)
		if sb.Len() == 0 {
			return Result{Content: "no symbols in " + p.Path}, nil
		}
		return Result{Content: strings.TrimRight(sb.String(), "\n")}, nil
	}
	if p.Query == "" {
		return Errorf("give path for a file's symbols, or query to search the workspace"), nil
	}
	root := env.Workspace.Root()
	var sb strings.Builder
	for _, name := range t.m.Servers() {
		c, err := t.m.Client(ctx, root, name)
		if err != nil {
			fmt.Fprintf(&sb, "(%s: %v)\n", name, err)
			continue
		}
		syms, err := c.WorkspaceSymbols(ctx, p.Query)
		if err != nil {
			fmt.Fprintf(&sb, "(%s: %v)\n", name, err)
			continue
		}
		writeSymbols(&sb, root, "", syms, 0)
	}
	if sb.Len() == 0 {
		return Result{Content: fmt.Sprintf("no workspace symbol matches %q", p.Query)}, nil
	}
	return Result{Content: TruncateLabel(strings.TrimRight(sb.String(), "\n"), 32<<10)}, nil
}

// writeSymbols lists symbols one a line, children indented: "kind name
// detail  path:line" (the path only for workspace symbols).
func writeSymbols(sb *strings.Builder, root, text string, syms []lsp.DocumentSymbol, depth int) {
	for _, s := range syms {
		where := ""
		if s.Location != nil {
			where = "  " + formatLocations(root, []lsp.Location{*s.Location})
		} else {
			where = fmt.Sprintf("  line %d", lsp.ToPoint(text, s.SelectionRange.Start).Line)
		}
		detail := ""
		if s.Detail != "" {
			detail = " " + s.Detail
		}
		fmt.Fprintf(sb, "%s%s %s%s%s\n", strings.Repeat("  ", depth), lsp.SymbolKindName(s.Kind), s.Name, detail, where)
		writeSymbols(sb, root, text, s.Children, depth+1)
	}
}
