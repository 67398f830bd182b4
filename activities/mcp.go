package activities

import (
	"context"

	"github.com/longrun/longrun/tools"
)

// mcpSpecs lists the MCP tools to add to a catalog of n built-ins; none
// without a Manager.
func (a *Activities) mcpSpecs(ctx context.Context, n int) []tools.Spec {
	if a.cfg.MCP == nil {
		return nil
	}
	return a.cfg.MCP.Specs(ctx, n)
}
