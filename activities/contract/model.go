package contract

import (
	"encoding/json"

	"github.com/longrun/longrun/conversation"
)

// Error types of model failures, as Temporal sees them. The workflow's retry
// policy lists the non-retryable ones.
const (
	ErrTypeModelRejected = "ModelRequestRejected" // 4xx other than 408/409/429: retrying cannot help
	ErrTypeModelFault    = "ModelFault"           // 5xx, 429, timeouts, garbage: worth a retry
	ErrTypeNoModel       = "NoModelConfigured"
	// ErrTypeContextLength: the request is over the model's context
	// window. Not retryable as it is; the session shrinks the conversation.
	ErrTypeContextLength = "ModelContextLengthExceeded"
	// ErrTypeModelBadReply: the endpoint kept answering something that is
	// not a chat completion, MaxMalformedAttempts times.
	ErrTypeModelBadReply = "ModelBadReply"
	// ErrTypeModelReplyTooLarge: the reply, encoded, is over
	// activities.MaxModelReplyBytes, so the server could not record it.
	// Not retried: each attempt is a paid call that would fail the same way.
	ErrTypeModelReplyTooLarge = "ModelReplyTooLarge"
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
	Model string `json:"model,omitempty"` // empty: the worker's LONGRUN_MODEL
	// Head is the transcript reference of the conversation so far (see
	// package transcript); Messages are the messages after it. Empty Head:
	// Messages is the whole conversation.
	Head     string                 `json:"head,omitempty"`
	Messages []conversation.Message `json:"messages"`
	// Reminders are sent after Messages but are not part of the
	// conversation (not stored in the transcript), e.g. the current plan.
	Reminders []conversation.Message `json:"reminders,omitempty"`
	Tools     []ToolDef              `json:"tools,omitempty"`
	// ToolsRef, with Tools empty, names tool definitions an earlier reply
	// stored (ModelResponse.ToolsRef): the catalog is the same every turn
	// and tens of KB, so the history holds it once per run, not per turn.
	ToolsRef string `json:"tools_ref,omitempty"`
	Turn     int    `json:"turn"`
}

// ModelResponse is the output of CallModel: the assistant's message, our
// own struct, plus usage.
type ModelResponse struct {
	// Head is the transcript reference of the conversation the model was
	// sent (the request's Head plus its Messages), when the worker keeps a
	// transcript; the session then holds only this reference and what
	// comes after. Empty: the worker keeps none, the session keeps it all.
	Head string `json:"head,omitempty"`
	// ToolsRef is the transcript reference of the request's Tools, when
	// the worker keeps a transcript: send it instead of the same Tools.
	ToolsRef     string               `json:"tools_ref,omitempty"`
	Model        string               `json:"model"`
	Message      conversation.Message `json:"message"`
	Usage        conversation.Usage   `json:"usage"`
	FinishReason string               `json:"finish_reason"`
}
