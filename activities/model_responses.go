package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/conversation"
)

// Wire protocols of the model call (ModelConfig.API, LONGRUN_MODEL_API).
const (
	ModelAPIChat      = "chat"      // POST /chat/completions: every OpenAI-compatible server
	ModelAPIResponses = "responses" // POST /responses: OpenAI's newer API, the only one some models speak
)

// ParseModelAPI checks a LONGRUN_MODEL_API value; empty means automatic.
func ParseModelAPI(v string) (string, error) {
	switch v = strings.ToLower(strings.TrimSpace(v)); v {
	case "", "auto":
		return "", nil
	case ModelAPIChat, ModelAPIResponses:
		return v, nil
	}
	return "", fmt.Errorf("%q: want %s or %s (or auto: %s except for models that only speak %s)", v, ModelAPIChat, ModelAPIResponses, ModelAPIChat, ModelAPIResponses)
}

// responsesOnlyFamilies are the OpenAI models served only through the
// Responses API (the names openai-go's shared.ResponsesModel lists beyond
// its chat models): the codex family
// (gpt-5-codex, gpt-5.1-codex-max, codex-mini-latest), the pro models
// (o1-pro, o3-pro, gpt-5-pro, gpt-5.5-pro), deep research and computer use.
var responsesOnlyFamilies = []string{"codex", "deep-research", "computer-use-preview"}

// ResponsesOnly reports whether model is one OpenAI serves only through the
// Responses API. A name with a "/" belongs to a gateway (OpenRouter's
// "openai/gpt-5-codex"), which serves it over chat completions itself.
func ResponsesOnly(model string) bool {
	m := strings.ToLower(model)
	if strings.Contains(m, "/") {
		return false
	}
	for _, f := range responsesOnlyFamilies {
		if strings.Contains(m, f) {
			return true
		}
	}
	// o1-pro, o3-pro, gpt-5-pro, gpt-5.5-pro and their dated names.
	if i := strings.Index(m, "-pro"); i > 0 {
		rest := m[i+len("-pro"):]
		return rest == "" || strings.HasPrefix(rest, "-20")
	}
	return false
}

// usesResponses reports whether a call to model goes over the Responses API.
func (a *Activities) usesResponses(model string) bool {
	switch a.cfg.Model.API {
	case ModelAPIResponses:
		return true
	case ModelAPIChat:
		return false
	}
	return ResponsesOnly(model)
}

// chatOnlyFamilies are model families that do not reason: OpenAI answers
// 400 to reasoning settings for them, so those are left out.
var chatOnlyFamilies = []string{"gpt-4", "gpt-3.5", "chatgpt-4o"}

// reasons reports whether model is taken for a reasoning model, whose
// request asks for reasoning summaries and the encrypted reasoning
// content. Unknown names are: the non-reasoning families are the old ones.
func reasons(model string) bool {
	m := strings.ToLower(model)
	for _, f := range chatOnlyFamilies {
		if strings.HasPrefix(m, f) {
			return false
		}
	}
	return true
}

// callResponses is CallModel over the Responses API, run stateless
// (store: false): the whole conversation goes in each request, with the
// reasoning items (and their encrypted_content) the model returned before,
// so it keeps its reasoning across turns and across continue-as-new
// without OpenAI keeping anything.
func (a *Activities) callResponses(ctx context.Context, model string, full []conversation.Message, defs []ToolDef, progress *progress) (ModelResponse, error) {
	params := responses.ResponseNewParams{
		Model: shared.ResponsesModel(model),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: toResponsesInput(full)},
		Store: openai.Bool(false),
	}
	if reasons(model) {
		params.Include = []responses.ResponseIncludable{responses.ResponseIncludableReasoningEncryptedContent}
		params.Reasoning = shared.ReasoningParam{Summary: shared.ReasoningSummaryAuto}
	}
	if key := a.promptCacheKey(ctx); key != "" {
		params.PromptCacheKey = openai.String(key)
	}
	for _, t := range defs {
		if ct, ok := a.responsesCustomTool(model, t); ok { // apply_patch with its grammar (model_custom.go)
			params.Tools = append(params.Tools, ct)
			continue
		}
		tool, err := responsesTool(t)
		if err != nil {
			return ModelResponse{}, err
		}
		params.Tools = append(params.Tools, tool)
	}
	var r *responses.Response
	var err error
	if a.cfg.Model.NoStream {
		r, err = a.client.Responses.New(ctx, params)
	} else {
		r, err = a.streamResponses(ctx, params, progress)
	}
	if err != nil {
		return ModelResponse{}, classify(err, attempt(ctx))
	}
	if err := responseFailed(r); err != nil {
		return ModelResponse{}, err
	}
	return a.fromResponse(model, r, attempt(ctx))
}

// responsesTool is a tool definition as the Responses API takes it: a
// function with its JSON schema. (A tool with a freeform form goes out
// as a custom tool instead, see responsesCustomTool; its calls and
// outputs travel as custom_tool_call and custom_tool_call_output.)
func responsesTool(t ToolDef) (responses.ToolUnionParam, error) {
	schema, err := toolSchema(t)
	if err != nil {
		return responses.ToolUnionParam{}, err
	}
	return responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
		Name:        t.Name,
		Description: openai.String(t.Description),
		Parameters:  schema,
		// Strict schemas must list every property as required; ours
		// have optional ones, as on chat completions.
		Strict: openai.Bool(false),
	}}, nil
}

// toResponsesInput turns the conversation into Responses input items:
// messages, then for an assistant message its reasoning items, its text
// and its calls (function_call, or custom_tool_call for a freeform one),
// and each result as the output item of its call's kind.
func toResponsesInput(msgs []conversation.Message) responses.ResponseInputParam {
	out := make(responses.ResponseInputParam, 0, len(msgs))
	freeform := map[string]bool{} // call ids of custom tool calls
	for _, m := range msgs {
		switch m.Role {
		case conversation.RoleSystem:
			out = append(out, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleSystem))
		case conversation.RoleUser:
			out = append(out, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleUser))
		case conversation.RoleAssistant:
			// OpenAI refuses a reasoning item without the item it led
			// to (a reply cut off while the model thought has none), so
			// such reasoning stays in the transcript only.
			reasoning := m.ReasoningItems
			if m.Content == "" && len(m.ToolCalls) == 0 {
				reasoning = nil
			}
			for _, r := range reasoning {
				item := responses.ResponseReasoningItemParam{ID: r.ID, Summary: []responses.ResponseReasoningItemSummaryParam{}}
				for _, s := range r.Summary {
					item.Summary = append(item.Summary, responses.ResponseReasoningItemSummaryParam{Text: s})
				}
				if r.EncryptedContent != "" {
					item.EncryptedContent = openai.String(r.EncryptedContent)
				}
				out = append(out, responses.ResponseInputItemUnionParam{OfReasoning: &item})
			}
			if m.Content != "" {
				out = append(out, responses.ResponseInputItemParamOfMessage(m.Content, responses.EasyInputMessageRoleAssistant))
			}
			for _, c := range m.ToolCalls {
				if c.Freeform != "" {
					freeform[c.ID] = true
					out = append(out, responses.ResponseInputItemParamOfCustomToolCall(c.ID, c.Freeform, c.Name))
					continue
				}
				out = append(out, responses.ResponseInputItemParamOfFunctionCall(c.Arguments, c.ID, c.Name))
			}
		case conversation.RoleTool:
			id := ""
			if m.Result != nil {
				id = m.Result.CallID
			}
			if freeform[id] {
				out = append(out, responses.ResponseInputItemParamOfCustomToolCallOutput(id, m.Content))
				continue
			}
			item := responses.ResponseInputItemParamOfFunctionCallOutput(m.Content)
			item.OfFunctionCallOutput.CallID = openai.String(id)
			out = append(out, item)
		}
	}
	return out
}

// fromResponse turns a finished Response into our own ModelResponse,
// priced: its text, its reasoning items (kept whole, to send back) and
// their summaries as the message's reasoning, and its calls.
func (a *Activities) fromResponse(requested string, r *responses.Response, attempt int32) (ModelResponse, error) {
	if len(r.Output) == 0 {
		return ModelResponse{}, badReply(errors.New("the response has no output"), attempt)
	}
	msg := conversation.Message{Role: conversation.RoleAssistant}
	var text, refusal, reasoning []string
	for _, item := range r.Output {
		switch item.Type {
		case "message":
			for _, c := range item.Content {
				switch c.Type {
				case "output_text":
					text = append(text, c.Text)
				case "refusal":
					refusal = append(refusal, c.Refusal)
				}
			}
		case "reasoning":
			ri := conversation.ReasoningItem{ID: item.ID, EncryptedContent: item.EncryptedContent}
			for _, s := range item.Summary {
				ri.Summary = append(ri.Summary, s.Text)
			}
			msg.ReasoningItems = append(msg.ReasoningItems, ri)
			reasoning = append(reasoning, ri.Summary...)
			if len(ri.Summary) == 0 {
				// Open models (gpt-oss on vLLM) return the reasoning
				// itself rather than a summary.
				for _, c := range item.Content {
					if c.Text != "" {
						reasoning = append(reasoning, c.Text)
					}
				}
			}
		case "function_call":
			msg.ToolCalls = append(msg.ToolCalls, conversation.ToolCall{ID: item.CallID, Name: item.Name, Arguments: item.Arguments.OfString})
		case "custom_tool_call":
			msg.ToolCalls = append(msg.ToolCalls, conversation.ToolCall{ID: item.CallID, Name: item.Name, Freeform: item.Input})
		}
	}
	msg.Content = strings.Join(text, "")
	if msg.Content == "" && len(msg.ToolCalls) == 0 {
		msg.Content = strings.Join(refusal, "")
	}
	msg.Reasoning = strings.Join(reasoning, "\n\n")
	usage := conversation.Usage{
		PromptTokens:     r.Usage.InputTokens,
		CompletionTokens: r.Usage.OutputTokens,
		TotalTokens:      r.Usage.TotalTokens,
		CachedTokens:     r.Usage.InputTokensDetails.CachedTokens,
		ReasoningTokens:  r.Usage.OutputTokensDetails.ReasoningTokens,
	}
	a.price(string(r.Model), requested, &usage)
	return ModelResponse{
		Model:        string(r.Model),
		Message:      msg,
		Usage:        usage,
		FinishReason: finishReason(r, msg),
	}, nil
}

// finishReason words a Response's end as chat completions do, so the
// session reads both alike.
func finishReason(r *responses.Response, msg conversation.Message) string {
	if r.Status == responses.ResponseStatusIncomplete {
		switch reason := r.IncompleteDetails.Reason; reason {
		case "max_output_tokens":
			return "length"
		case "":
			return "incomplete"
		default:
			return reason
		}
	}
	if len(msg.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// responseFailed is the error of a response whose status is failed, typed
// as classify types an HTTP error: over the context window, a fault worth
// a retry (a server error, a rate limit), or a request that cannot succeed.
func responseFailed(r *responses.Response) error {
	if r.Status != responses.ResponseStatusFailed {
		return nil
	}
	return failedError(string(r.Error.Code), r.Error.Message)
}

// failedError types a Responses failure from its error code, for a failed
// response and for a stream's error event alike.
func failedError(code, message string) error {
	msg := fmt.Sprintf("model endpoint answered a failed response (%s): %s", code, message)
	switch {
	case code == "context_length_exceeded" || containsAny(strings.ToLower(message), contextLengthPhrases):
		return temporal.NewNonRetryableApplicationError(msg+" (the conversation does not fit the model's context window)", ErrTypeContextLength, nil)
	case code == "" || code == "server_error" || code == "rate_limit_exceeded" || strings.HasSuffix(code, "_timeout"):
		return temporal.NewApplicationError(msg, ErrTypeModelFault)
	}
	return temporal.NewNonRetryableApplicationError(msg, ErrTypeModelRejected, nil)
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
