package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/tools"
)

// ErrTypeNotPreparable marks a prepare request for a tool that prepares
// nothing: the workflow asked wrongly, and a retry cannot help.
const ErrTypeNotPreparable = "NotPreparable"

// prepare completes a call's arguments (tools.Preparer) without running
// it: the completed arguments come back in Result.Prepared.
func prepare(ctx context.Context, t tools.Tool, env tools.Env, req ToolRequest) (tools.Result, error) {
	p, ok := t.(tools.Preparer)
	if !ok {
		return tools.Result{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("tool %q prepares nothing", req.Name), ErrTypeNotPreparable, nil)
	}
	args, res, err := p.Prepare(ctx, env, req.Arguments)
	if err != nil {
		return tools.Result{}, fmt.Errorf("prepare tool %s: %w", req.Name, err)
	}
	if !res.IsError {
		res.Prepared = json.RawMessage(args)
	}
	return res, nil
}

// withDiagnostics adds what the language servers say of the files an
// edit changed to its result, waiting at most the configured cap.
func (a *Activities) withDiagnostics(ctx context.Context, ws *tools.Workspace, res tools.Result) tools.Result {
	if a.cfg.LSP == nil || res.IsError || len(res.Files) == 0 {
		return res
	}
	root := ws.Root()
	files := make([]string, 0, len(res.Files))
	for _, f := range res.Files {
		files = append(files, filepath.Join(root, filepath.FromSlash(f.Path)))
	}
	if report := a.cfg.LSP.AfterEdit(ctx, root, files); report != "" {
		res.Content += "\n\n" + report
	}
	return res
}

// stopServers stops the language servers of a session's checkout.
func (a *Activities) stopServers(dir string) {
	if a.cfg.LSP != nil {
		a.cfg.LSP.CloseRoot(dir)
	}
}
