package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/mcp"
	"github.com/longrun/longrun/tools"
)

// mcpTestServer serves 60 lookup tools and a slow one over streamable HTTP.
func mcpTestServer(t *testing.T) string {
	t.Helper()
	s := sdk.NewServer(&sdk.Implementation{Name: "kb", Version: "v0"}, nil)
	for i := range 60 {
		s.AddTool(&sdk.Tool{
			Name:        fmt.Sprintf("lookup_%d", i),
			Description: fmt.Sprintf("Look up a key in table %d.", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`),
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("table %d: %s", i, req.Params.Arguments)}}}, nil
		})
	}
	s.AddTool(&sdk.Tool{Name: "slow", Description: "Answers after 2.5 s.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(2500 * time.Millisecond):
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "done"}}}, nil
		})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil))
	t.Cleanup(ts.Close)
	return ts.URL
}

func newMCPActs(t *testing.T) *Activities {
	t.Helper()
	a, _ := newActs(t, nil)
	m, err := mcp.New(mcp.Config{Servers: map[string]mcp.ServerConfig{"kb": {URL: mcpTestServer(t)}}}, mcp.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	a = a.with(func(c *Config) { c.MCP = m; c.Jobs, c.WorkerQueue = nil, "own-queue" })
	return a
}

func TestListToolsMergesMCPAfterBuiltins(t *testing.T) {
	t.Parallel()
	a := newMCPActs(t)
	builtins := a.cfg.Registry.Specs()
	cat, err := a.ListTools(context.Background())
	require.NoError(t, err)
	require.Len(t, cat.Tools, len(builtins)+61)
	require.Equal(t, builtins, cat.Tools[:len(builtins)], "built-ins first, untouched")
	rest := cat.Tools[len(builtins):]
	require.True(t, sort.SliceIsSorted(rest, func(i, j int) bool { return rest[i].Name < rest[j].Name }))
	for _, s := range rest {
		require.True(t, strings.HasPrefix(s.Name, "kb__"), s.Name)
		require.Equal(t, tools.ExposureDeferred, s.Exposure)
		require.Equal(t, "kb", s.Server)
	}
	again, err := a.ListTools(context.Background())
	require.NoError(t, err)
	require.Equal(t, cat, again, "stable")
}

func TestRunToolRoutesToMCP(t *testing.T) {
	t.Parallel()
	a := newMCPActs(t)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	var mu sync.Mutex
	var beats []string
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		var p string
		require.NoError(t, d.Get(&p))
		mu.Lock()
		beats = append(beats, p)
		mu.Unlock()
	})

	val, err := env.ExecuteActivity(a.RunTool, ToolRequest{CallID: "c1", Name: "kb__lookup_9", Arguments: json.RawMessage(`{"key":"k"}`)})
	require.NoError(t, err)
	var res tools.Result
	require.NoError(t, val.Get(&res))
	require.Equal(t, tools.Result{Content: `table 9: {"key":"k"}`, WorkerQueue: "own-queue"}, res)

	// A slow call heartbeats while it waits, so a cancel reaches it.
	val, err = env.ExecuteActivity(a.RunTool, ToolRequest{CallID: "c2", Name: "kb__slow", Arguments: json.RawMessage(`{}`)})
	require.NoError(t, err)
	require.NoError(t, val.Get(&res))
	require.Equal(t, "done", res.Content)
	mu.Lock()
	require.Contains(t, beats, "waiting for MCP server kb")
	mu.Unlock()

	_, err = env.ExecuteActivity(a.RunTool, ToolRequest{CallID: "c3", Name: "other__lookup_1", Arguments: json.RawMessage(`{}`)})
	var appErr *temporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	require.Equal(t, ErrTypeUnknownTool, appErr.Type(), "a server this worker does not have")
}
