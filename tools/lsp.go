package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/longrun/longrun/lsp"
	"github.com/longrun/longrun/toolspec"
)

// Names of the language-server tools.
const (
	LSPDefinitionName  = "lsp_definition"
	LSPReferencesName  = "lsp_references"
	LSPHoverName       = "lsp_hover"
	LSPSymbolsName     = "lsp_symbols"
	LSPDiagnosticsName = "lsp_diagnostics"
	LSPRenameName      = toolspec.LSPRenameName
)

// lspWait bounds how long a language-server tool waits for its answer;
// a server loading a large workspace for the first time is slow.
const lspWait = 50

// LSPTools are the language-server tools over the worker's servers.
func LSPTools(m *lsp.Manager) []Tool {
	return []Tool{&LSPDefinition{m}, &LSPReferences{m}, &LSPHover{m}, &LSPSymbols{m}, &LSPDiagnostics{m}, &LSPRename{m}}
}

// LSPPositionParams name a place in a file: a line and column, or a
// symbol's name (on the line, when one is given).
type LSPPositionParams struct {
	Path   string `json:"path" jsonschema:"File relative to the workspace root."`
	Line   int    `json:"line,omitempty" jsonschema:"1-based line number."`
	Column int    `json:"column,omitempty" jsonschema:"1-based column, in characters. Omit it and give symbol to use the symbol's first occurrence on the line (or in the file, without line)."`
	Symbol string `json:"symbol,omitempty" jsonschema:"The identifier to look up; used to find the column when column is not given."`
}

// lspSpec is the metadata every read-only language-server tool shares.
func lspSpec(name, description string, params []byte) Spec {
	return Spec{
		Name: name, Description: description, Parameters: params,
		ReadOnly: true, TimeoutSeconds: lspWait + 10, Exposure: ExposureDeferred,
		Meta: MetaVersion, Concurrency: ConcurrencyShared,
		SubjectArg: "path", SubjectKind: SubjectPath, Paths: PathsArgOrRoot, SummaryArg: "path",
	}
}

// lspTarget is a place a tool asks a server about.
type lspTarget struct {
	client *lsp.Client
	server string
	root   string
	file   string // absolute
	text   string
	pos    lsp.Position
}

// lspFile locates path in the workspace for a server: confined as every
// file tool is (read through the workspace), then named absolutely, as
// the server knows it. The server is started on first use and made to
// see the file as it is on disk.
func lspFile(ctx context.Context, m *lsp.Manager, env Env, path string) (*lspTarget, *Result) {
	if path == "" {
		r := Errorf("path is empty; name the file")
		return nil, &r
	}
	rel, err := env.Workspace.Resolve(path)
	if err != nil {
		r := Errorf("%v", err)
		return nil, &r
	}
	raw, err := env.Workspace.ReadFile(rel)
	if err != nil {
		r := Errorf("cannot read %s: %v", path, err)
		return nil, &r
	}
	root := env.Workspace.Root()
	file := filepath.Join(root, filepath.FromSlash(rel))
	c, server, err := m.ForFile(ctx, root, file)
	if err != nil {
		r := Errorf("%v", err)
		return nil, &r
	}
	if err := c.SyncOpen(ctx); err != nil {
		r := Errorf("%s: %v", server, err)
		return nil, &r
	}
	if _, _, err := c.Sync(ctx, file); err != nil {
		r := Errorf("%s: %v", server, err)
		return nil, &r
	}
	return &lspTarget{client: c, server: server, root: root, file: file, text: string(raw)}, nil
}

// lspPlace locates the position p names.
func lspPlace(ctx context.Context, m *lsp.Manager, env Env, p LSPPositionParams) (*lspTarget, *Result) {
	t, bad := lspFile(ctx, m, env, p.Path)
	if bad != nil {
		return nil, bad
	}
	pt := lsp.Point{Line: p.Line, Column: p.Column}
	switch {
	case p.Column > 0 && p.Line > 0:
	case p.Symbol != "":
		found, ok := lsp.FindSymbol(t.text, p.Symbol, p.Line)
		if !ok {
			where := p.Path
			if p.Line > 0 {
				where = fmt.Sprintf("line %d of %s", p.Line, p.Path)
			}
			r := Errorf("%q does not occur as a whole word in %s; give line and column", p.Symbol, where)
			return nil, &r
		}
		pt = found
	default:
		r := Errorf("name the place: line and column (1-based), or symbol (with line to pick an occurrence)")
		return nil, &r
	}
	t.pos = lsp.ToPosition(t.text, pt)
	return t, nil
}

// atPosition runs ask at the place a position tool's arguments name, in
// the file's server, within the tools' time cap: the part lsp_definition,
// lsp_references and lsp_hover share (a bad argument or a place that is
// not there is the model's to fix, so it is a result, not an error).
func atPosition(ctx context.Context, m *lsp.Manager, env Env, args json.RawMessage, tool string, ask func(context.Context, *lspTarget) (Result, error)) (Result, error) {
	if env.Workspace == nil {
		return Result{}, fmt.Errorf("tool %s: no workspace", tool)
	}
	var p LSPPositionParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	ctx, cancel := lspContext(ctx)
	defer cancel()
	at, bad := lspPlace(ctx, m, env, p)
	if bad != nil {
		return *bad, nil
	}
	return ask(ctx, at)
}

// lspContext bounds one request.
func lspContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, lspWait*1e9)
}

// formatLocations lists locations one a line, "path:line:col: text",
// with the line's text for files inside the workspace.
func formatLocations(root string, locs []lsp.Location) string {
	var sb strings.Builder
	cache := map[string]string{}
	for i, l := range locs {
		if i == 200 {
			fmt.Fprintf(&sb, "(%d more not shown)\n", len(locs)-i)
			break
		}
		file, ok := lsp.URIPath(l.URI)
		if !ok {
			fmt.Fprintf(&sb, "%s:%d\n", l.URI, l.Range.Start.Line+1)
			continue
		}
		rel := lsp.Rel(root, file)
		inside := !filepath.IsAbs(rel)
		text, seen := cache[file]
		if !seen && inside {
			raw, _ := os.ReadFile(file)
			text = string(raw)
			cache[file] = text
		}
		pt := lsp.ToPoint(text, l.Range.Start)
		line := ""
		if inside {
			if ls := strings.Split(text, "\n"); pt.Line-1 < len(ls) {
				line = ": " + strings.TrimSpace(ls[pt.Line-1])
			}
		}
		fmt.Fprintf(&sb, "%s:%d:%d%s\n", rel, pt.Line, pt.Column, line)
	}
	return strings.TrimRight(sb.String(), "\n")
}
