package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// freeformPatch is what a GPT-5 model writes as apply_patch's custom
// input: the patch itself, not a JSON string.
const freeformPatch = "*** Begin Patch\n*** Add File: notes/hello.txt\n+hi \"there\"\n+\tand a tab\n*** End Patch\n"

// customStream is a streamed chat completion whose one tool call is a
// custom call of apply_patch, its input split over two deltas, as OpenAI
// streams them (the chunk has a "custom" member openai-go does not type).
func customStream(t *testing.T, id, input string) string {
	t.Helper()
	p1, err := json.Marshal(input[:25])
	require.NoError(t, err)
	p2, err := json.Marshal(input[25:])
	require.NoError(t, err)
	return strings.Join([]string{
		`data: {"id":"cc","object":"chat.completion.chunk","model":"gpt-5","choices":[{"index":0,"delta":{"role":"assistant","content":"Adding the file.","tool_calls":[{"index":0,"id":"` + id + `","type":"custom","custom":{"name":"apply_patch","input":` + string(p1) + `}}]}}]}`,
		`data: {"id":"cc","object":"chat.completion.chunk","model":"gpt-5","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"custom":{"input":` + string(p2) + `}}]}}]}`,
		`data: {"id":"cc","object":"chat.completion.chunk","model":"gpt-5","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`data: {"id":"cc","object":"chat.completion.chunk","model":"gpt-5","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`,
		`data: [DONE]`, ``, ``,
	}, "\n\n")
}

// A GPT-5 session is offered apply_patch as a custom tool with Codex's
// Lark grammar; the model's freeform call is applied by the real worker
// through the same parser as the JSON function, recorded with its raw
// input, and sent back as a custom call. A model that does not take
// custom tools gets no grammar at all (issue 18, must-show 3).
func TestFreeformApplyPatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Reply{RawBody: customStream(t, "call_fp", freeformPatch)},
		sm.Text("Added notes/hello.txt."),
		sm.Text("nothing to do"),
	)
	id := e.start(workflows.SessionInput{Prompt: "add a hello note", Model: "gpt-5", Profile: "auto"})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)

	got, err := os.ReadFile(filepath.Join(e.workspace, "notes", "hello.txt"))
	require.NoError(t, err)
	require.Equal(t, "hi \"there\"\n\tand a tab\n", string(got))

	reqs := e.model.Requests()
	require.Len(t, reqs, 2)
	// The first request offers the grammar.
	var first struct {
		Tools []struct {
			Type   string `json:"type"`
			Custom struct {
				Name   string `json:"name"`
				Format struct {
					Type    string `json:"type"`
					Grammar struct {
						Syntax     string `json:"syntax"`
						Definition string `json:"definition"`
					} `json:"grammar"`
				} `json:"format"`
			} `json:"custom"`
		} `json:"tools"`
	}
	require.NoError(t, json.Unmarshal(reqs[0].Raw, &first))
	custom := 0
	for _, tool := range first.Tools {
		if tool.Type == "custom" {
			custom++
			require.Equal(t, "apply_patch", tool.Custom.Name)
			require.Equal(t, "grammar", tool.Custom.Format.Type)
			require.Equal(t, "lark", tool.Custom.Format.Grammar.Syntax)
			require.Contains(t, tool.Custom.Format.Grammar.Definition, "start: begin_patch hunk+ end_patch")
		}
	}
	require.Equal(t, 1, custom, "apply_patch, and only it, is a custom tool")

	// The second request carries the call back as a custom call with the
	// raw input, and its result.
	var second struct {
		Messages []struct {
			Role      string `json:"role"`
			Content   any    `json:"content"`
			ToolCalls []struct {
				ID     string `json:"id"`
				Type   string `json:"type"`
				Custom struct {
					Name  string `json:"name"`
					Input string `json:"input"`
				} `json:"custom"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	require.NoError(t, json.Unmarshal(reqs[1].Raw, &second))
	var sentBack bool
	for _, m := range second.Messages {
		for _, c := range m.ToolCalls {
			require.Equal(t, "call_fp", c.ID)
			require.Equal(t, "custom", c.Type)
			require.Equal(t, "apply_patch", c.Custom.Name)
			require.Equal(t, freeformPatch, c.Custom.Input)
			sentBack = true
		}
	}
	require.True(t, sentBack, "the custom call is not in the second request")
	res, ok := reqs[1].LastToolResult("call_fp")
	require.True(t, ok)
	require.Contains(t, res, "Success. Updated the following files:\nA notes/hello.txt (+2 -0)")

	// The session records the raw input and the JSON the tool validated.
	msgs := e.checkSession(id)
	var call *struct{ args, freeform string }
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			call = &struct{ args, freeform string }{c.Arguments, c.Freeform}
		}
	}
	require.NotNil(t, call)
	require.Equal(t, freeformPatch, call.freeform)
	var args struct {
		Patch string `json:"patch"`
	}
	require.NoError(t, json.Unmarshal([]byte(call.args), &args))
	require.Equal(t, freeformPatch, args.Patch)

	// A model that does not take custom tools gets no grammar (and, per
	// tools.EditToolsFor, edit and write instead of apply_patch).
	id = e.start(workflows.SessionInput{Prompt: "anything?", Model: "qwen3-coder", Profile: "auto"})
	r = result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	reqs = e.model.Requests()
	require.Len(t, reqs, 3)
	require.NotContains(t, string(reqs[2].Raw), `"type":"custom"`)
	require.NotContains(t, string(reqs[2].Raw), "begin_patch")
}
