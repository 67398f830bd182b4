package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/longrun/longrun/lsp"
)

//go:embed lsp_diagnostics.md
var lspDiagnosticsDescription string

// lspDiagnosticsWait is how long lsp_diagnostics waits for a file's
// diagnostics: longer than an edit's cap, since asking is the point.
const lspDiagnosticsWait = 15 * time.Second

// LSPDiagnosticsParams name the file to check, or none.
type LSPDiagnosticsParams struct {
	Path string `json:"path,omitempty" jsonschema:"File to check. Omit it for everything the running servers report for the workspace."`
}

// LSPDiagnostics reports the language servers' errors and warnings.
type LSPDiagnostics struct{ m *lsp.Manager }

// Spec describes the lsp_diagnostics tool.
func (*LSPDiagnostics) Spec() Spec {
	return lspSpec(LSPDiagnosticsName, lspDiagnosticsDescription, paramsSchema[LSPDiagnosticsParams](nil))
}

// Run syncs the file and waits for its diagnostics, or reports what the
// running servers last said.
func (t *LSPDiagnostics) Run(ctx context.Context, env Env, args json.RawMessage) (Result, error) {
	if env.Workspace == nil {
		return Result{}, errors.New("tool lsp_diagnostics: no workspace")
	}
	var p LSPDiagnosticsParams
	if err := unmarshalArgs(args, &p); err != nil {
		return Errorf("%v", err), nil
	}
	ctx, cancel := lspContext(ctx)
	defer cancel()
	root := env.Workspace.Root()
	if p.Path != "" {
		at, bad := lspFile(ctx, t.m, env, p.Path)
		if bad != nil {
			return *bad, nil
		}
		// Ask again from scratch: a save makes the server diagnose the
		// file even when nothing changed.
		diags, missing := at.client.Diagnose(ctx, at.file, time.Now().Add(lspDiagnosticsWait))
		out := lsp.Format(root, map[string][]lsp.Diagnostic{at.file: diags}, lsp.SeverityHint)
		switch {
		case missing:
			return Result{Content: strings.TrimSpace(out + "\n" + at.server + " did not report on " + p.Path + " within " + lspDiagnosticsWait.String() + "; it may still be loading the workspace.")}, nil
		case out == "":
			return Result{Content: at.server + " reports no problems in " + p.Path + "."}, nil
		}
		return Result{Content: out}, nil
	}
	running := t.m.Running(root)
	if len(running) == 0 {
		return Result{Content: "no language server runs for this workspace yet: give a path to start one"}, nil
	}
	all := map[string][]lsp.Diagnostic{}
	for _, c := range running {
		_ = c.SyncOpen(ctx)
		for f, ds := range c.AllDiagnostics() {
			all[f] = append(all[f], ds...)
		}
	}
	out := lsp.Format(root, all, lsp.SeverityWarning)
	if out == "" {
		return Result{Content: "the running language servers report no errors or warnings."}, nil
	}
	return Result{Content: out}, nil
}
