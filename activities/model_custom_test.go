package activities

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/tools"
)

const customPatch = "*** Begin Patch\n*** Add File: hello.txt\n+hi \"there\"\n*** End Patch\n"

// wireTools decodes the tools of a recorded request loosely.
func wireTools(t *testing.T, raw []byte) map[string]map[string]any {
	t.Helper()
	var body struct {
		Tools []map[string]any `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(raw, &body))
	out := map[string]map[string]any{}
	for _, tool := range body.Tools {
		switch tool["type"] {
		case "function":
			out[tool["function"].(map[string]any)["name"].(string)] = tool
		case "custom":
			out[tool["custom"].(map[string]any)["name"].(string)] = tool
		}
	}
	return out
}

func patchDef() ToolDef {
	s := tools.NewApplyPatch().Spec()
	return ToolDef{Name: s.Name, Description: s.Description, Parameters: s.Parameters}
}

// apply_patch goes out as a custom tool with Codex's Lark grammar to the
// models that take custom tools (or to every model, or none, as the
// worker says), and as the JSON function otherwise; other tools are
// always functions.
func TestCustomToolOffered(t *testing.T) {
	t.Parallel()
	readDef := ToolDef{Name: "read", Description: "read", Parameters: json.RawMessage(`{"type":"object"}`)}
	tests := []struct {
		model, setting string
		custom         bool
	}{
		{"gpt-5", "", true},
		{"gpt-5-codex", FreeformAuto, true},
		{"openai/gpt-5.1-mini", "", true},
		{"gpt-4.1", "", false},
		{"gpt-oss-120b", "", false},
		{"qwen3-coder", "", false},
		{"qwen3-coder", FreeformOn, true},
		{"gpt-5", FreeformOff, false},
	}
	for _, tt := range tests {
		t.Run(tt.model+"/"+tt.setting, func(t *testing.T) {
			t.Parallel()
			srv := sm.New(sm.Text("ok"))
			defer srv.Close()
			a, _ := newActs(t, srv)
			a.cfg.Model.FreeformTools = tt.setting
			a.cfg.Model.API = ModelAPIChat // the Responses API's form: TestResponsesCustomToolOffered
			_, err := a.CallModel(context.Background(), ModelRequest{Model: tt.model,
				Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}},
				Tools:    []ToolDef{readDef, patchDef()}})
			require.NoError(t, err)
			raw := srv.Requests()[0].Raw
			got := wireTools(t, raw)
			require.Equal(t, "function", got["read"]["type"])
			if !tt.custom {
				require.Equal(t, "function", got["apply_patch"]["type"])
				require.NotContains(t, string(raw), "begin_patch", "no grammar for a model that does not take custom tools")
				return
			}
			require.Equal(t, "custom", got["apply_patch"]["type"])
			c := got["apply_patch"]["custom"].(map[string]any)
			require.Contains(t, c["description"], "FREEFORM")
			format := c["format"].(map[string]any)
			require.Equal(t, "grammar", format["type"])
			g := format["grammar"].(map[string]any)
			require.Equal(t, "lark", g["syntax"])
			require.Contains(t, g["definition"], `start: begin_patch hunk+ end_patch`)
		})
	}
}

// On the Responses API (automatic for the codex family), apply_patch goes
// out as a custom tool with its Lark grammar too, and to a model that
// takes no custom tools as the JSON function.
func TestResponsesCustomToolOffered(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		model, setting, want string
	}{
		{"gpt-5-codex", FreeformAuto, "custom"},
		{"gpt-5-codex", FreeformOff, "function"},
	} {
		srv := sm.New(sm.Text("ok"))
		a, _ := newActs(t, srv)
		a.cfg.Model.FreeformTools = tt.setting
		_, err := a.CallModel(context.Background(), ModelRequest{Model: tt.model,
			Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}},
			Tools:    []ToolDef{patchDef()}})
		require.NoError(t, err)
		req := srv.Requests()[0]
		srv.Close()
		require.Equal(t, sm.APIResponses, req.API, "%+v", tt)
		require.Len(t, req.Tools, 1)
		require.Equal(t, tt.want, req.Tools[0].Type, "%+v", tt)
		if tt.want == "custom" {
			var format struct{ Type, Syntax, Definition string }
			require.NoError(t, json.Unmarshal(req.Tools[0].Format, &format))
			require.Equal(t, "grammar", format.Type)
			require.Equal(t, "lark", format.Syntax)
			require.Contains(t, format.Definition, `start: begin_patch hunk+ end_patch`)
		} else {
			require.NotContains(t, string(req.Raw), "begin_patch", "no grammar for %+v", tt)
		}
	}
}

// A custom call, streamed (in deltas openai-go's accumulator does not
// know) or plain, becomes ToolCall{Freeform: input, Arguments:
// {"patch": input}}; sent back, it is a custom call again, or a function
// call when the request offers apply_patch as a function.
func TestCustomCallRoundTrip(t *testing.T) {
	t.Parallel()
	in, _ := json.Marshal(customPatch)
	part1, _ := json.Marshal(customPatch[:20])
	part2, _ := json.Marshal(customPatch[20:])
	stream := strings.Join([]string{
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-5","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_p","type":"custom","custom":{"name":"apply_patch","input":""}}]}}]}`,
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-5","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"custom":{"input":` + string(part1) + `}}]}}]}`,
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-5","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"custom":{"input":` + string(part2) + `}}]}}]}`,
		`data: {"id":"x","object":"chat.completion.chunk","model":"gpt-5","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`data: [DONE]`, ``, ``}, "\n\n")
	plain := `{"id":"x","object":"chat.completion","model":"gpt-5","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,` +
		`"tool_calls":[{"id":"call_p","type":"custom","custom":{"name":"apply_patch","input":` + string(in) + `}}]}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`
	want := conversation.ToolCall{ID: "call_p", Name: "apply_patch", Freeform: customPatch, Arguments: `{"patch":` + string(in) + `}`}
	for _, tc := range []struct {
		name     string
		noStream bool
		body     string
	}{{"stream", false, stream}, {"plain", true, plain}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := sm.New(sm.Reply{RawBody: tc.body}, sm.Text("done"), sm.Text("done"))
			defer srv.Close()
			a, _ := newActs(t, srv)
			a.cfg.Model.NoStream = tc.noStream
			msgs := []conversation.Message{{Role: conversation.RoleUser, Content: "add hello.txt"}}
			resp, err := a.CallModel(context.Background(), ModelRequest{Model: "gpt-5", Messages: msgs, Tools: []ToolDef{patchDef()}})
			require.NoError(t, err)
			require.Equal(t, []conversation.ToolCall{want}, resp.Message.ToolCalls)
			var args tools.PatchParams
			require.NoError(t, json.Unmarshal([]byte(resp.Message.ToolCalls[0].Arguments), &args))
			require.Equal(t, customPatch, args.Patch, "the same patch the JSON function would carry")

			msgs = append(msgs, resp.Message, conversation.ToolMessage(conversation.ToolResult{CallID: "call_p", Name: "apply_patch", Content: "Success.", Reason: conversation.ReasonRan}))
			_, err = a.CallModel(context.Background(), ModelRequest{Model: "gpt-5", Messages: msgs, Tools: []ToolDef{patchDef()}})
			require.NoError(t, err)
			var body struct {
				Messages []map[string]any `json:"messages"`
			}
			require.NoError(t, json.Unmarshal(srv.Requests()[1].Raw, &body))
			call := body.Messages[1]["tool_calls"].([]any)[0].(map[string]any)
			require.Equal(t, "custom", call["type"])
			require.Equal(t, map[string]any{"name": "apply_patch", "input": customPatch}, call["custom"])

			a.cfg.Model.FreeformTools = FreeformOff
			_, err = a.CallModel(context.Background(), ModelRequest{Model: "gpt-5", Messages: msgs, Tools: []ToolDef{patchDef()}})
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(srv.Requests()[2].Raw, &body))
			call = body.Messages[1]["tool_calls"].([]any)[0].(map[string]any)
			require.Equal(t, "function", call["type"])
			require.Equal(t, want.Arguments, call["function"].(map[string]any)["arguments"])
		})
	}
}

// A gateway that echoes an empty "custom": {} on function deltas does not
// turn a function call into a custom one.
func TestEmptyCustomEchoIsNoCustomCall(t *testing.T) {
	t.Parallel()
	stream := strings.Join([]string{
		`data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","custom":{},"function":{"name":"read","arguments":"{\"path\":"}}]}}]}`,
		`data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"custom":{},"function":{"arguments":"\"a\"}"}}]}}]}`,
		`data: {"id":"x","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`data: [DONE]`, ``, ``}, "\n\n")
	srv := sm.New(sm.Reply{RawBody: stream})
	defer srv.Close()
	a, _ := newActs(t, srv)
	resp, err := a.CallModel(context.Background(), ModelRequest{Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}}})
	require.NoError(t, err)
	require.Equal(t, []conversation.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}}, resp.Message.ToolCalls)
}

func TestParseFreeformMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"": FreeformAuto, "auto": FreeformAuto, " ON ": FreeformOn, "off": FreeformOff} {
		got, err := ParseFreeformMode(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := ParseFreeformMode("yes")
	require.ErrorContains(t, err, `"yes": want auto, on or off`)
}
