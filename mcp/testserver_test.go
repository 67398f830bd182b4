package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The test MCP server: 60 lookup tools with distinct descriptions, one that
// reports an error, one slow one, one answering with an image, and one
// that kills its own process (stdio only: it takes the test binary down).

const testServerEnv = "LONGRUN_MCP_TEST_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(testServerEnv) == "stdio" {
		// Re-run as a stdio MCP server: the Manager starts the test
		// binary itself as the server's command.
		if err := newTestServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

var lookupSchema = json.RawMessage(`{"type":"object","properties":{"key":{"type":"string","description":"the key to look up"}},"required":["key"],"additionalProperties":false}`)

func newTestServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "testserver", Version: "v0"}, nil)
	for i := range 60 {
		s.AddTool(&sdk.Tool{
			Name:        fmt.Sprintf("lookup_%d", i),
			Description: fmt.Sprintf("Look up a key in table number %d (%s).", i, colours[i%len(colours)]),
			InputSchema: lookupSchema,
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true},
		}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct {
				Key string `json:"key"`
			}
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: fmt.Sprintf("table %d", i)},
				&sdk.TextContent{Text: "key " + args.Key},
			}}, nil
		})
	}
	s.AddTool(&sdk.Tool{Name: "fail", Description: "Always fails.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "the table is locked"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "slow", Description: "Answers after ten seconds.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(10 * time.Second):
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "finally"}}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "picture", Description: "Draws a picture.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "here it is"},
				&sdk.ImageContent{MIMEType: "image/png", Data: make([]byte, 1234)},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.bin", MIMEType: "application/octet-stream", Blob: make([]byte, 10)}},
			}}, nil
		})
	s.AddTool(&sdk.Tool{Name: "crash", Description: "Exits the server process.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			if os.Getenv(testServerEnv) != "stdio" {
				return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "only crashes over stdio"}}}, nil
			}
			os.Exit(3)
			return nil, nil
		})
	s.AddTool(&sdk.Tool{Name: "env", Description: "Reports the server's environment, one NAME=value a line, sorted.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			env := os.Environ()
			sort.Strings(env)
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Join(env, "\n")}}}, nil
		})
	return s
}

var colours = []string{"red", "green", "blue", "amber", "violet", "teal", "ochre"}

// testServerTools is how many tools newTestServer offers.
const testServerTools = 65

// httpServer serves the test server over streamable HTTP.
func httpServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := newTestServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts
}

// stdioConfig starts the test binary itself as a stdio server.
func stdioConfig(t *testing.T) ServerConfig {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return ServerConfig{Command: exe, Args: []string{"-test.run=^$"}, Env: map[string]string{testServerEnv: "stdio"}}
}
