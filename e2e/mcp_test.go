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
	// The worker reads the MCP config of its config directory at start-up.
	e.stopWorker()
	cfg := fmt.Sprintf(`{"servers":{"kb":{"url":%q,"exposure":"direct","timeout":"10s"}}}`, ts.URL)
	require.NoError(t, os.WriteFile(filepath.Join(e.configDir, "mcp.json"), []byte(cfg), 0o644))
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

// A catalog of 60 MCP tools is too many to send: they are deferred, each
// request carries fewer than 15 tool specs, and the model finds the one it
// needs with tool_search, which then is sent and is called.
func TestSixtyMCPToolsDeferredAndFoundByToolSearch(t *testing.T) {
	t.Parallel()
	srv := sdk.NewServer(&sdk.Implementation{Name: "crm", Version: "v0"}, nil)
	topics := []string{"customer", "invoice", "order", "ticket", "contract", "payment"}
	for i := range 60 {
		topic := topics[i%len(topics)]
		srv.AddTool(&sdk.Tool{
			Name:        fmt.Sprintf("%s_tool_%02d", topic, i),
			Description: fmt.Sprintf("Operation %02d on %s records of the CRM.", i, topic),
			InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`),
		}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: fmt.Sprintf("tool %02d ran with %s", i, req.Params.Arguments)}}}, nil
		})
	}
	srv.AddTool(&sdk.Tool{
		Name:        "refund_payment",
		Description: "Refund a customer's payment by its payment id.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"payment_id":{"type":"string"}},"required":["payment_id"]}`),
	}, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "refunded " + string(req.Params.Arguments)}}}, nil
	})
	ts := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(ts.Close)

	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_find", Name: "tool_search", Arguments: `{"query": "refund a payment", "limit": 3}`}),
		sm.Tools(sm.Call{ID: "c_refund", Name: "crm__refund_payment", Arguments: `{"payment_id": "p-7"}`}),
		sm.Text("refunded"),
	)
	// A workspace's own .longrun/mcp.json counts for a trusted workspace.
	cfg := fmt.Sprintf(`{"servers":{"crm":{"url":%q,"timeout":"10s"}}}`, ts.URL)
	require.NoError(t, os.MkdirAll(filepath.Join(e.workspace, ".longrun"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, ".longrun", "mcp.json"), []byte(cfg), 0o644))
	e.trustWorkspace()

	id := e.start(workflows.SessionInput{Prompt: "refund payment p-7", Profile: "auto"})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	msgs := e.checkSession(id)
	found := resultFor(msgs, "c_find")
	require.Contains(t, found.Content, "crm__refund_payment")
	refund := resultFor(msgs, "c_refund")
	require.Equal(t, conversation.ReasonRan, refund.Reason, refund.Content)
	require.Contains(t, refund.Content, "refunded")

	reqs := e.model.Requests()
	require.Len(t, reqs, 3)
	names := func(i int) []string {
		var out []string
		for _, tl := range reqs[i].Tools {
			out = append(out, tl.Function.Name)
		}
		return out
	}
	for i := range reqs {
		require.Less(t, len(reqs[i].Tools), 15, "request %d sends %v", i, names(i))
	}
	require.Contains(t, names(0), "tool_search")
	require.NotContains(t, names(0), "crm__refund_payment", "deferred until found")
	require.Contains(t, names(1), "crm__refund_payment", "sent once tool_search found it")
}

// An untrusted workspace's .longrun/mcp.json never starts its command: a
// planted "MCP server" would run on the worker's machine unasked. The
// worker says in its log and in the session's history why it ignored it.
func TestUntrustedWorkspaceMCPIgnored(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Text("nothing to do"))
	e.stopWorker()
	canary := filepath.Join(t.TempDir(), "canary")
	cfg := fmt.Sprintf(`{"servers":{"planted":{"command":"sh","args":["-c","touch %s"],"exposure":"direct"}}}`, canary)
	require.NoError(t, os.MkdirAll(filepath.Join(e.workspace, ".longrun"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, ".longrun", "mcp.json"), []byte(cfg), 0o644))
	e.startWorker()

	id := e.start(workflows.SessionInput{Prompt: "hello", Profile: "auto"})
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	reqs := e.model.Requests()
	require.Len(t, reqs, 1)
	for _, tl := range reqs[0].Tools {
		require.NotContains(t, tl.Function.Name, "planted")
	}
	require.NoFileExists(t, canary, "the workspace's MCP command never ran")
	require.Contains(t, e.logs.String(), ".longrun/mcp.json ignored: the workspace is not trusted; see README Security model")
	require.Contains(t, string(decodedPayloads(history(t, id))), ".longrun/mcp.json ignored: the workspace is not trusted")
}
