package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/conversation"
)

// Error types of model failures, as Temporal sees them. The workflow's retry
// policy lists the non-retryable ones.
const (
	ErrTypeModelRejected = "ModelRequestRejected" // 4xx other than 408/409/429: retrying cannot help
	ErrTypeModelFault    = "ModelFault"           // 5xx, 429, timeouts, garbage: worth a retry
	ErrTypeNoModel       = "NoModelConfigured"
)

// ToolDef is a tool as the model sees it: name, description, parameters and
// nothing else. Runtime metadata never reaches the model.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ModelRequest is the input of CallModel.
type ModelRequest struct {
	Model    string                 `json:"model,omitempty"` // empty: the worker's LONGRUN_MODEL
	Messages []conversation.Message `json:"messages"`
	Tools    []ToolDef              `json:"tools,omitempty"`
	Turn     int                    `json:"turn"`
}

// ModelResponse is the output of CallModel: the assistant's message, our
// own struct, plus usage.
type ModelResponse struct {
	Model        string               `json:"model"`
	Message      conversation.Message `json:"message"`
	Usage        conversation.Usage   `json:"usage"`
	FinishReason string               `json:"finish_reason"`
}

// CallModel sends the conversation to the model and returns its reply.
func (a *Activities) CallModel(ctx context.Context, req ModelRequest) (ModelResponse, error) {
	model := req.Model
	if model == "" {
		model = a.model.DefaultModel
	}
	if model == "" {
		return ModelResponse{}, temporal.NewNonRetryableApplicationError(
			"no model: start the session with a model or set LONGRUN_MODEL on the worker", ErrTypeNoModel, nil)
	}
	params := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel(model),
		Messages: toWireMessages(req.Messages),
	}
	for _, t := range req.Tools {
		var schema shared.FunctionParameters
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return ModelResponse{}, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("tool %s: parameter schema is not a JSON object: %v", t.Name, err), ErrTypeModelRejected, err)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  schema,
		}))
	}
	comp, err := a.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return ModelResponse{}, classify(err)
	}
	if len(comp.Choices) == 0 {
		return ModelResponse{}, temporal.NewApplicationError("model returned no choices", ErrTypeModelFault)
	}
	ch := comp.Choices[0]
	msg := conversation.Message{Role: conversation.RoleAssistant, Content: ch.Message.Content}
	for _, tc := range ch.Message.ToolCalls {
		name, args := tc.Function.Name, tc.Function.Arguments
		if tc.Type == "custom" {
			name, args = tc.Custom.Name, tc.Custom.Input
		}
		msg.ToolCalls = append(msg.ToolCalls, conversation.ToolCall{ID: tc.ID, Name: name, Arguments: args})
	}
	if msg.Content == "" && len(msg.ToolCalls) == 0 && ch.Message.Refusal != "" {
		msg.Content = ch.Message.Refusal
	}
	return ModelResponse{
		Model:        comp.Model,
		Message:      msg,
		FinishReason: string(ch.FinishReason),
		Usage: conversation.Usage{
			PromptTokens:     comp.Usage.PromptTokens,
			CompletionTokens: comp.Usage.CompletionTokens,
			TotalTokens:      comp.Usage.TotalTokens,
		},
	}, nil
}

func toWireMessages(msgs []conversation.Message) []openai.ChatCompletionMessageParamUnion {
	out := make([]openai.ChatCompletionMessageParamUnion, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case conversation.RoleSystem:
			out = append(out, openai.SystemMessage(m.Content))
		case conversation.RoleUser:
			out = append(out, openai.UserMessage(m.Content))
		case conversation.RoleTool:
			id := ""
			if m.Result != nil {
				id = m.Result.CallID
			}
			out = append(out, openai.ToolMessage(m.Content, id))
		case conversation.RoleAssistant:
			var p openai.ChatCompletionAssistantMessageParam
			if m.Content != "" {
				p.Content.OfString = openai.String(m.Content)
			}
			for _, c := range m.ToolCalls {
				p.ToolCalls = append(p.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID: c.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
							Name:      c.Name,
							Arguments: c.Arguments,
						},
					},
				})
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &p})
		}
	}
	return out
}

// classify turns a client error into a Temporal error: requests the model
// will never accept fail at once, faults are retried by the activity's
// retry policy, honouring Retry-After.
func classify(err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := fmt.Sprintf("model endpoint answered HTTP %d: %s", apiErr.StatusCode, apiErr.Message)
		switch code := apiErr.StatusCode; {
		case code == http.StatusRequestTimeout, code == http.StatusConflict, code == http.StatusTooManyRequests, code >= 500:
			opts := temporal.ApplicationErrorOptions{}
			if d := retryAfter(apiErr.Response); d > 0 {
				opts.NextRetryDelay = d
			}
			return temporal.NewApplicationErrorWithOptions(msg, ErrTypeModelFault, opts)
		default:
			return temporal.NewNonRetryableApplicationError(msg, ErrTypeModelRejected, nil)
		}
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	// Transport errors and replies that are not a chat completion (garbage,
	// truncated JSON) are faults of the endpoint; the error text says which.
	return temporal.NewApplicationError(fmt.Sprintf("model call: %v", err), ErrTypeModelFault)
}

func retryAfter(resp *http.Response) time.Duration {
	if resp == nil {
		return 0
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		return min(time.Duration(s)*time.Second, 10*time.Minute)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return min(d, 10*time.Minute)
		}
	}
	return 0
}
