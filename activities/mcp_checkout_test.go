package activities

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/mcp"
	"github.com/longrun/longrun/mcp/mcptest"
)

// TestCheckoutMCPCallRunsInTheCheckout: an MCP call of a session with its
// own checkout runs in a server started in that checkout (it sees the
// session's file, not the workspace's), a session in place keeps the
// worker-level one, and CloseCheckout stops the checkout's server.
func TestCheckoutMCPCallRunsInTheCheckout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, root := newActs(t, nil)
	state := t.TempDir()
	a = a.with(func(c *Config) { c.StateDir = state })
	m, err := mcp.New(mcp.Config{Servers: map[string]mcp.ServerConfig{
		"probe": {Command: mcptest.Python(t), Args: []string{"-c", mcptest.ProbeServer}}}}, mcp.Options{Dir: root})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	a = a.with(func(c *Config) { c.MCP = m })
	require.NoError(t, os.WriteFile(filepath.Join(root, "probe.txt"), []byte("the person's"), 0o644))

	// Two sessions' checkouts (copies: the workspace is not in git), as
	// OpenCheckout makes them for sessions "one" and "two".
	open := func(session string) checkout.Info {
		in, err := checkout.CreateCopy(ctx, root, state, session, checkout.DefaultCopyLimit)
		require.NoError(t, err)
		t.Cleanup(func() { _ = checkout.Discard(ctx, in) })
		return in
	}
	one, two := open("one"), open("two")
	require.NoError(t, os.WriteFile(filepath.Join(one.Dir, "probe.txt"), []byte("session one's"), 0o644))
	call := func(co string) string {
		r, err := a.RunTool(ctx, ToolRequest{CallID: "c", Name: "probe__cwd", Arguments: json.RawMessage(`{}`), Checkout: co})
		require.NoError(t, err)
		require.False(t, r.IsError, r.Content)
		return regexp.MustCompile(` pid \d+`).ReplaceAllString(r.Content, "")
	}
	require.Equal(t, "cwd "+one.Dir+" probe session one's", call(one.Name))
	require.Equal(t, "cwd "+two.Dir+" probe the person's", call(two.Name), "a copy of the workspace, in its own checkout")
	require.Equal(t, "cwd "+root+" probe the person's", call(""), "a session in place keeps the worker-level server")
	require.ElementsMatch(t, []string{one.Dir, two.Dir}, m.RootsRunning())

	_, err = a.CloseCheckout(ctx, CloseCheckoutRequest{Checkout: one, Message: "done"})
	require.NoError(t, err)
	require.Equal(t, []string{two.Dir}, m.RootsRunning(), "closing a checkout stops its MCP servers")
}
