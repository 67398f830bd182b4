package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// A worker whose workspace configures an MCP server (streamable HTTP,
// served by the test) offers its tools, and a session's call to one by
// name runs on the server and its result reaches the model.
func TestSessionCallsAnMCPTool(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "kb", Version: "v0"}, nil)
	for i := range 3 {
		srv.AddTool(&sdk.Tool{
			Name:        fmt.Sprintf("lookup_%d", i),
			Description: fmt.Sprintf("Look up a key in table %d.", i),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"}},"required":["key"]}`),
		}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var args struct{ Key string }
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return nil, err
			}
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("table %d says %s=42", i, args.Key)}}}, nil
		})
	}
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)

	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_mcp", Name: "kb__lookup_1", Arguments: `{"key":"answer"}`}),
		sm.Text("the answer is 42"),
	)
	// The worker reads the MCP config at start-up.
	e.stopWorker()
	cfg := fmt.Sprintf(`{"servers":{"kb":{"url":%q,"exposure":"direct","timeout":"10s"}}}`, ts.URL)
	require.NoError(t, os.MkdirAll(filepath.Join(e.workspace, ".longrun"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, ".longrun", "mcp.json"), []byte(cfg), 0o644))
	e.startWorker()

	id := e.start(workflows.SessionInput{Prompt: "what is the answer?", Profile: "auto"})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	msgs := e.checkSession(id)
	res := resultFor(msgs, "c_mcp")
	require.NotNil(t, res)
	require.Equal(t, conversation.ReasonRan, res.Reason, res.Content)
	require.Equal(t, "table 1 says answer=42", res.Content)

	reqs := e.model.Requests()
	require.Len(t, reqs, 2)
	var offered []string
	for _, tl := range reqs[0].Tools {
		offered = append(offered, tl.Function.Name)
	}
	require.Contains(t, offered, "kb__lookup_1", "a direct MCP tool is sent to the model")
	require.Contains(t, reqs[1].Messages[len(reqs[1].Messages)-1].Content, "table 1 says answer=42")
	require.Contains(t, e.logs.String(), "MCP servers")
}
