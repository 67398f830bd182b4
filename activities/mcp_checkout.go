package activities

import (
	"github.com/longrun/longrun/tools"
)

// lookupCallTool finds the tool a call names. An MCP tool of a session
// with its own checkout runs in that checkout's instance of its server
// (mcp.Manager.LookupIn), so the server sees the session's edits, not the
// worker's workspace; a session in place, or a checkout name this worker
// cannot hold, gets the worker-level one (the call then fails on its
// working directory, as every tool's does).
func (a *Activities) lookupCallTool(req ToolRequest) (tools.Tool, bool) {
	if t, ok := a.cfg.Registry.Lookup(req.Name); ok {
		return t, true
	}
	if a.cfg.MCP == nil {
		return nil, false
	}
	dir := ""
	if req.Checkout != "" {
		dir, _ = a.ownCheckout(req.Checkout)
	}
	return a.cfg.MCP.LookupIn(req.Name, dir)
}

// stopMCP stops the MCP servers started in a session's checkout: it is
// being closed.
func (a *Activities) stopMCP(dir string) {
	if a.cfg.MCP != nil {
		a.cfg.MCP.CloseRoot(dir)
	}
}
