package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/toolcalls"
)

// Error types of model failures: see package contract.
const (
	ErrTypeModelRejected      = contract.ErrTypeModelRejected
	ErrTypeModelFault         = contract.ErrTypeModelFault
	ErrTypeNoModel            = contract.ErrTypeNoModel
	ErrTypeContextLength      = contract.ErrTypeContextLength
	ErrTypeModelBadReply      = contract.ErrTypeModelBadReply
	ErrTypeModelReplyTooLarge = contract.ErrTypeModelReplyTooLarge
)

// MaxModelReplyBytes bounds a model reply as recorded in history (the
// encoded ModelResponse). The Temporal server refuses a payload over its
// blob size limit (2 MB by default) and the SDK then fails the attempt,
// which the retry policy would repeat with another paid call; this limit
// stays under it with room for the encoding's overhead.
const MaxModelReplyBytes = 1536 * 1024

// The model call's request and response: see package contract.
type (
	ToolDef       = contract.ToolDef
	ModelRequest  = contract.ModelRequest
	ModelResponse = contract.ModelResponse
)

// CallModel sends the conversation to the model and returns its reply.
// With a transcript store (Config.Transcript) the conversation is the one
// req.Head names plus req.Messages, and the reply carries the head that
// holds both, so the session's history keeps a reference per turn rather
// than the whole conversation. It
// streams unless the worker turned streaming off (ModelConfig.NoStream),
// heartbeating the text written so far, so a person watching the pending
// activity in the Temporal UI sees the reply being written.
func (a *Activities) CallModel(ctx context.Context, req ModelRequest) (ModelResponse, error) {
	model := req.Model
	if model == "" {
		model = a.cfg.Model.DefaultModel
	}
	if model == "" {
		return ModelResponse{}, temporal.NewNonRetryableApplicationError(
			"no model: start the session with a model or set LONGRUN_MODEL on the worker", ErrTypeNoModel, nil)
	}
	full, stored, err := a.conversationOf(ctx, req.Head, req.Messages)
	if err != nil {
		return ModelResponse{}, err
	}
	// Every return below waits for the store's write: none may leave it
	// running past the activity.
	toolsRef, err := a.toolsOf(ctx, &req)
	if err != nil {
		_, _ = stored()
		return ModelResponse{}, err
	}
	full = append(full, req.Reminders...)
	// The heartbeat runs whether the endpoint streams or not: it is how a
	// cancel reaches the call and how Temporal notices a lost worker
	// within the heartbeat timeout instead of the whole start-to-close one.
	progress := startProgress(ctx, !a.cfg.Model.NoStream)
	defer progress.stop()
	var resp ModelResponse
	if a.usesResponses(model) {
		resp, err = a.callResponses(ctx, model, full, req.Tools, progress)
	} else {
		resp, err = a.callChat(ctx, model, full, req.Tools, progress)
	}
	if err == nil {
		resp.Message = freeformArguments(resp.Message, req.Tools)
		resp.Message = textToolCalls(resp.Message, req)
	}
	head, serr := stored()
	if err == nil {
		err = serr
	}
	resp.Head, resp.ToolsRef = head, toolsRef
	if err == nil {
		err = replyFits(resp)
	}
	return resp, err
}

// callChat is CallModel over the chat completions protocol.
func (a *Activities) callChat(ctx context.Context, model string, full []conversation.Message, defs []ToolDef, progress *progress) (ModelResponse, error) {
	params := openai.ChatCompletionNewParams{
		Model:    shared.ChatModel(model),
		Messages: toWireMessages(full),
	}
	if key := a.promptCacheKey(ctx); key != "" {
		params.PromptCacheKey = openai.String(key)
	}
	for _, t := range defs {
		if ct, ok := a.customTool(model, t); ok { // apply_patch with its grammar (model_custom.go)
			params.Tools = append(params.Tools, ct)
			continue
		}
		schema, err := toolSchema(t)
		if err != nil {
			return ModelResponse{}, err
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  schema,
		}))
	}
	matchCustomCalls(&params)
	var comp *openai.ChatCompletion
	var reasoning string
	var err error
	if a.cfg.Model.NoStream {
		comp, err = a.client.Chat.Completions.New(ctx, params)
	} else {
		comp, reasoning, err = a.stream(ctx, params, progress)
	}
	if err != nil {
		return ModelResponse{}, classify(err, attempt(ctx))
	}
	resp, err := a.response(model, comp, attempt(ctx))
	if reasoning != "" {
		resp.Message.Reasoning = reasoning
	}
	return resp, err
}

// toolSchema is a tool's parameter schema as the SDK takes it. A schema
// that is not a JSON object can never be sent, so it fails at once.
func toolSchema(t ToolDef) (map[string]any, error) {
	var schema map[string]any
	if err := json.Unmarshal(t.Parameters, &schema); err != nil {
		return nil, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("tool %s: parameter schema is not a JSON object: %v", t.Name, err), ErrTypeModelRejected, err)
	}
	return schema, nil
}

// replyFits fails, not retryably, a reply too large to record: the server
// would refuse the activity's result, and every retry would pay for the
// same reply again.
func replyFits(resp ModelResponse) error {
	b, err := json.Marshal(resp)
	if err != nil {
		return fmt.Errorf("encode model reply: %w", err)
	}
	if len(b) <= MaxModelReplyBytes {
		return nil
	}
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("the model's reply is %d bytes encoded (%d of text, %d tool calls), more than the %d a session can record; "+
			"it was not retried. Ask for a shorter answer, or for large content written to files in several smaller calls",
			len(b), len(resp.Message.Content), len(resp.Message.ToolCalls), MaxModelReplyBytes),
		ErrTypeModelReplyTooLarge, nil)
}

// textToolCalls turns tool calls a model wrote as text (Hermes/Qwen
// <tool_call>, Qwen3-coder <function=...>, <invoke> blocks), as local
// models served without a tool-call parser do, into real calls, when the
// reply has none of its own. Only tools the session offered count, and
// each parameter is typed by that tool's schema. The ids carry the turn:
// the same text in two turns must not reuse an id.
func textToolCalls(msg conversation.Message, req ModelRequest) conversation.Message {
	if len(msg.ToolCalls) > 0 || msg.Content == "" || !strings.Contains(msg.Content, "<") {
		return msg
	}
	schemas := make(map[string]json.RawMessage, len(req.Tools))
	for _, t := range req.Tools {
		schemas[t.Name] = t.Parameters
	}
	calls, rest := toolcalls.ParseOptions(msg.Content, toolcalls.Options{
		Known:    func(name string) bool { _, ok := schemas[name]; return ok },
		Schemas:  schemas,
		IDPrefix: fmt.Sprintf("%st%d_", toolcalls.DefaultIDPrefix, req.Turn),
	})
	if len(calls) == 0 {
		return msg
	}
	msg.ToolCalls, msg.Content = calls, rest
	return msg
}

// response turns a chat completion, whole or accumulated from a stream,
// into our own ModelResponse, priced. requested is the model the request
// named, for pricing when the reply names none we know.
func (a *Activities) response(requested string, comp *openai.ChatCompletion, attempt int32) (ModelResponse, error) {
	if len(comp.Choices) == 0 {
		return ModelResponse{}, badReply(errors.New("the reply has no choices"), attempt)
	}
	ch := comp.Choices[0]
	msg := conversation.Message{Role: conversation.RoleAssistant, Content: ch.Message.Content,
		Reasoning: reasoningOf(ch.Message.JSON.ExtraFields)}
	for _, tc := range ch.Message.ToolCalls {
		if tc.Type == "custom" {
			msg.ToolCalls = append(msg.ToolCalls, customCall(tc.ID, tc.Custom.Name, tc.Custom.Input))
			continue
		}
		msg.ToolCalls = append(msg.ToolCalls, conversation.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	if msg.Content == "" && len(msg.ToolCalls) == 0 && ch.Message.Refusal != "" {
		msg.Content = ch.Message.Refusal
	}
	usage := chatUsage(comp.Usage)
	a.price(comp.Model, requested, &usage)
	return ModelResponse{
		Model:        comp.Model,
		Message:      msg,
		FinishReason: string(ch.FinishReason),
		Usage:        usage,
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
			if sendsReasoningBack(m) {
				p.SetExtraFields(map[string]any{"reasoning_content": m.Reasoning})
			}
			for _, c := range m.ToolCalls {
				p.ToolCalls = append(p.ToolCalls, wireCall(c))
			}
			out = append(out, openai.ChatCompletionMessageParamUnion{OfAssistant: &p})
		}
	}
	return out
}

// classify turns a client error into a Temporal error: requests the model
// will never accept fail at once, faults are retried by the activity's
// retry policy, honouring Retry-After. attempt is the activity's attempt
// (1-based), for the bound on replies that are not a chat completion.
func classify(err error, attempt int32) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := fmt.Sprintf("model endpoint answered HTTP %d: %s", apiErr.StatusCode, apiErr.Message)
		if isContextLength(apiErr) {
			return temporal.NewNonRetryableApplicationError(
				msg+" (the conversation does not fit the model's context window)", ErrTypeContextLength, nil)
		}
		retry := apiErr.StatusCode == http.StatusRequestTimeout || apiErr.StatusCode == http.StatusConflict ||
			apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode >= 500
		// x-should-retry is the provider's own verdict (OpenAI sends it);
		// it overrides the status code, as the official clients do.
		switch shouldRetryHeader(apiErr.Response) {
		case "true":
			retry = true
		case "false":
			retry = false
		}
		if !retry {
			return temporal.NewNonRetryableApplicationError(msg, ErrTypeModelRejected, nil)
		}
		opts := temporal.ApplicationErrorOptions{}
		if d := retryAfter(apiErr.Response); d > 0 {
			opts.NextRetryDelay = d
		}
		return temporal.NewApplicationErrorWithOptions(msg, ErrTypeModelFault, opts)
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	if malformedReply(err) {
		return badReply(err, attempt)
	}
	// Transport errors (connection refused, reset, a timeout) are faults
	// of the endpoint or the network; the error text says which.
	return temporal.NewApplicationError(fmt.Sprintf("model call: %v", err), ErrTypeModelFault)
}

// badReply is the error for a reply that is not a chat completion
// (garbage, HTML from a proxy, a body cut off mid-way, no choices). It is
// worth a few tries, not the full budget a 503 gets: an endpoint that keeps
// answering garbage is misconfigured, and the person should hear so soon.
func badReply(err error, attempt int32) error {
	msg := fmt.Sprintf("model endpoint sent a reply that is not a chat completion (attempt %d of %d): %v", attempt, MaxMalformedAttempts, err)
	if attempt >= MaxMalformedAttempts {
		return temporal.NewNonRetryableApplicationError(msg, ErrTypeModelBadReply, nil)
	}
	return temporal.NewApplicationError(msg, ErrTypeModelFault)
}

// attempt is the activity's attempt number, 1 outside an activity.
func attempt(ctx context.Context) int32 {
	if !activity.IsActivity(ctx) {
		return 1
	}
	return activity.GetInfo(ctx).Attempt
}

// MaxMalformedAttempts bounds the attempts of a model call whose replies
// are not chat completions.
const MaxMalformedAttempts = 3

// malformedReply reports whether err is a reply that arrived but could not
// be read as a chat completion: invalid or truncated JSON, a connection
// lost in the middle of the body, or a stream that is not a whole reply.
func malformedReply(err error) bool {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	return errors.As(err, &syn) || errors.As(err, &typ) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, errMalformedStream) ||
		strings.Contains(err.Error(), "unexpected end of JSON input")
}

// contextLengthPhrases are how OpenAI, Azure, vLLM, llama.cpp, OpenRouter
// and Anthropic-compatible gateways word a request over the context window.
var contextLengthPhrases = []string{
	"maximum context length", "context length", "context window", "context size",
	"maximum model length", "prompt is too long", "too many tokens", "reduce the length of the messages",
}

// isContextLength recognises the context-length error, which is typed on
// its own: the session must shrink the conversation, not retry it.
func isContextLength(e *openai.Error) bool {
	if e.StatusCode != http.StatusBadRequest && e.StatusCode != http.StatusRequestEntityTooLarge {
		return false
	}
	if e.Code == "context_length_exceeded" || strings.Contains(e.Type, "exceed_context_size") {
		return true
	}
	msg := strings.ToLower(e.Message)
	for _, p := range contextLengthPhrases {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

func shouldRetryHeader(resp *http.Response) string {
	if resp == nil {
		return ""
	}
	return strings.ToLower(resp.Header.Get("x-should-retry"))
}

// retryAfter reads retry-after-ms (milliseconds, OpenAI and Azure) or
// Retry-After (seconds or an HTTP date), capped at ten minutes.
func retryAfter(resp *http.Response) time.Duration {
	if resp == nil {
		return 0
	}
	const limit = 10 * time.Minute
	if v := resp.Header.Get("retry-after-ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return min(time.Duration(ms*float64(time.Millisecond)), limit)
		}
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s > 0 {
		return min(time.Duration(s*float64(time.Second)), limit)
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := time.Until(t); d > 0 {
			return min(d, limit)
		}
	}
	return 0
}
