package activities

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/tools"
)

// Values of ModelConfig.FreeformTools (LONGRUN_FREEFORM_TOOLS): whether
// tools with a freeform form (apply_patch) are offered as custom tools
// with their grammar.
const (
	// FreeformAuto offers them to models known to take custom tools: the
	// GPT-5 family (ids with "gpt-" that are neither gpt-3/gpt-4 nor the
	// open-weight gpt-oss), which OpenAI documents custom tools for and
	// Codex sends its freeform apply_patch to. Other OpenAI-compatible
	// servers (vLLM, llama.cpp, Ollama, most gateways) reject or ignore a
	// "custom" tool, so they get the JSON function.
	FreeformAuto = "auto"
	// FreeformOn offers them to every model: for an endpoint that serves
	// a GPT-5 model under another name.
	FreeformOn = "on"
	// FreeformOff never does: for a gateway that names GPT-5 models but
	// does not pass custom tools through.
	FreeformOff = "off"
)

// ParseFreeformMode checks a FreeformTools setting; empty is auto.
func ParseFreeformMode(s string) (string, error) {
	switch v := strings.ToLower(strings.TrimSpace(s)); v {
	case "", FreeformAuto:
		return FreeformAuto, nil
	case FreeformOn, FreeformOff:
		return v, nil
	}
	return "", fmt.Errorf("%q: want %s, %s or %s", s, FreeformAuto, FreeformOn, FreeformOff)
}

// takesCustomTools reports whether requests for model offer freeform
// tools as custom tools (see FreeformAuto for the rule and why).
func (a *Activities) takesCustomTools(model string) bool {
	switch a.cfg.Model.FreeformTools {
	case FreeformOn:
		return true
	case FreeformOff:
		return false
	}
	id := strings.ToLower(model)
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	return strings.Contains(id, "gpt-") && !strings.Contains(id, "gpt-4") &&
		!strings.Contains(id, "gpt-3") && !strings.Contains(id, "oss")
}

// customTool returns t as a custom tool with its grammar, when t has a
// freeform form and the model takes custom tools; ok is false otherwise
// and t goes out as a JSON function.
func (a *Activities) customTool(model string, t ToolDef) (openai.ChatCompletionToolUnionParam, bool) {
	f, ok := tools.FreeformFor(t.Name)
	if !ok || !a.takesCustomTools(model) {
		return openai.ChatCompletionToolUnionParam{}, false
	}
	return openai.ChatCompletionCustomTool(openai.ChatCompletionCustomToolCustomParam{
		Name:        f.Name,
		Description: openai.String(f.Description),
		Format: openai.ChatCompletionCustomToolCustomFormatUnionParam{
			OfGrammar: &openai.ChatCompletionCustomToolCustomFormatGrammarParam{
				Grammar: openai.ChatCompletionCustomToolCustomFormatGrammarGrammarParam{Syntax: f.Syntax, Definition: f.Grammar},
			},
		},
	}), true
}

// responsesCustomTool is customTool for the Responses API.
func (a *Activities) responsesCustomTool(model string, t ToolDef) (responses.ToolUnionParam, bool) {
	f, ok := tools.FreeformFor(t.Name)
	if !ok || !a.takesCustomTools(model) {
		return responses.ToolUnionParam{}, false
	}
	return responses.ToolUnionParam{OfCustom: &responses.CustomToolParam{
		Name:        f.Name,
		Description: openai.String(f.Description),
		Format:      shared.CustomToolInputFormatParamOfGrammar(f.Grammar, f.Syntax),
	}}, true
}

// customCall is a custom tool call as the session records it: the raw
// input in Freeform, and in Arguments the JSON arguments the tool
// validates ({"patch": input}), so the same schema check and parser apply
// as for the JSON function. A tool without a freeform form keeps the raw
// input as its arguments, which validation then reports.
func customCall(id, name, input string) conversation.ToolCall {
	c := conversation.ToolCall{ID: id, Name: name, Arguments: input, Freeform: input}
	if f, ok := tools.FreeformFor(name); ok {
		c.Arguments = f.Arguments(input)
	}
	return c
}

// wireCall is a recorded tool call as the request sends it back: a
// custom call with its raw input when the model made one, else a
// function call.
func wireCall(c conversation.ToolCall) openai.ChatCompletionMessageToolCallUnionParam {
	if c.Freeform != "" {
		return openai.ChatCompletionMessageToolCallUnionParam{OfCustom: &openai.ChatCompletionMessageCustomToolCallParam{
			ID:     c.ID,
			Custom: openai.ChatCompletionMessageCustomToolCallCustomParam{Name: c.Name, Input: c.Freeform},
		}}
	}
	return openai.ChatCompletionMessageToolCallUnionParam{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
		ID:       c.ID,
		Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: c.Arguments},
	}}
}

// matchCustomCalls sends a recorded custom call back as a function call
// when this request offers its tool as a function: the worker's setting
// or the model changed since the call was made, and a provider that was
// not offered the custom tool may refuse a custom call in the history.
func matchCustomCalls(params *openai.ChatCompletionNewParams) {
	custom := map[string]bool{}
	for _, t := range params.Tools {
		if t.OfCustom != nil {
			custom[t.OfCustom.Custom.Name] = true
		}
	}
	for _, m := range params.Messages {
		if m.OfAssistant == nil {
			continue
		}
		for i, tc := range m.OfAssistant.ToolCalls {
			if tc.OfCustom == nil || custom[tc.OfCustom.Custom.Name] {
				continue
			}
			c := customCall(tc.OfCustom.ID, tc.OfCustom.Custom.Name, tc.OfCustom.Custom.Input)
			c.Freeform = ""
			m.OfAssistant.ToolCalls[i] = wireCall(c)
		}
	}
}

// customDeltas gathers streamed custom tool calls. openai-go's
// accumulator knows only function deltas (the chunk schema has no custom
// member yet), so a custom call's name and input, sent as
// {"index", "id", "type": "custom", "custom": {"name", "input"}} deltas,
// would be lost; they are read from each delta's raw JSON instead.
type customDeltas struct {
	calls map[int64]*openai.ChatCompletionMessageCustomToolCallCustom
}

// add reads the custom parts of one chunk.
func (d *customDeltas) add(chunk openai.ChatCompletionChunk) {
	if len(chunk.Choices) == 0 || chunk.Choices[0].Index != 0 {
		return
	}
	for _, tc := range chunk.Choices[0].Delta.ToolCalls {
		// An extra field is never Valid (it binds to no struct field);
		// its raw JSON is what counts.
		f, ok := tc.JSON.ExtraFields["custom"]
		if !ok || f.Raw() == "" {
			continue
		}
		var part struct {
			Name  *string `json:"name"`
			Input *string `json:"input"`
		}
		// Some gateways echo an empty "custom": {} on function deltas:
		// only a name or an input makes it a custom call's part.
		if json.Unmarshal([]byte(f.Raw()), &part) != nil || (part.Name == nil && part.Input == nil) {
			continue
		}
		if d.calls == nil {
			d.calls = map[int64]*openai.ChatCompletionMessageCustomToolCallCustom{}
		}
		c := d.calls[tc.Index]
		if c == nil {
			c = &openai.ChatCompletionMessageCustomToolCallCustom{}
			d.calls[tc.Index] = c
		}
		if part.Name != nil {
			c.Name += *part.Name
		}
		if part.Input != nil {
			c.Input += *part.Input
		}
	}
}

// apply puts the gathered custom calls into the accumulated completion.
func (d *customDeltas) apply(cc *openai.ChatCompletion) {
	if len(d.calls) == 0 || len(cc.Choices) == 0 {
		return
	}
	calls := cc.Choices[0].Message.ToolCalls
	for i := range calls {
		if c, ok := d.calls[int64(i)]; ok {
			calls[i].Type = "custom"
			calls[i].Custom.Name, calls[i].Custom.Input = c.Name, c.Input
		}
	}
}
