package activities

import (
	"context"

	"github.com/longrun/longrun/mcp"
	"github.com/longrun/longrun/tools"
)

// SetMCP gives the activities the worker's MCP servers: ListTools adds
// their tools after the built-ins and RunTool sends calls for them to the
// Manager. The connections live in this worker process, so every worker of
// a task queue needs the same MCP configuration. It is a function, not a
// method: every exported method of Activities is registered as an activity.
func SetMCP(a *Activities, m *mcp.Manager) { a.mcp = m }

// mcpSpecs lists the MCP tools to add to a catalog of n built-ins; none
// without a Manager.
func (a *Activities) mcpSpecs(ctx context.Context, n int) []tools.Spec {
	if a.mcp == nil {
		return nil
	}
	return a.mcp.Specs(ctx, n)
}
