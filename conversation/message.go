// Package conversation holds the messages of a session as our own structs
// (never openai-go types: a recorded history must replay after the SDK
// changes) and the pairing check every test uses.
package conversation

// Roles of a message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Reason says why a tool result exists. Later issues add reasons (timeout,
// interrupted, blocked, worker lost) without reshaping anything.
type Reason string

// Reasons a tool result exists.
const (
	ReasonRan                   Reason = "ran"                     // the tool ran and returned normally
	ReasonFailed                Reason = "failed"                  // the tool ran and failed (or the system failed running it)
	ReasonInvalidArguments      Reason = "invalid_arguments"       // the arguments did not match the schema; nothing ran
	ReasonUnknownTool           Reason = "unknown_tool"            // the model asked for a tool that does not exist
	ReasonDenied                Reason = "denied"                  // a person denied the call
	ReasonCancelledBeforeRun    Reason = "cancelled_before_run"    // the session was cancelled while the call waited
	ReasonCancelledWhileRunning Reason = "cancelled_while_running" // the session was cancelled while the tool ran
	ReasonInterrupted           Reason = "interrupted"             // the user interrupted the turn before or while it ran
	ReasonTimeout               Reason = "timeout"                 // nobody decided within the approval timeout; nothing ran
	ReasonDeniedByPolicy        Reason = "denied_by_policy"        // a rule, the profile or fail-closed mode refused it; nobody was asked
	ReasonBlocked               Reason = "blocked"                 // a hard block refused a destructive command before any approval
	ReasonWorkerLost            Reason = "worker_lost"             // the worker running a mutating tool was lost; it may or may not have run
)

// Message is one entry of the conversation.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Result is set on tool messages: the one result for one call.
	Result *ToolResult `json:"result,omitempty"`
	// Compacted is set on the summary a compaction put in place of older
	// messages: the transcript reference of the messages it replaced, so
	// the originals can still be shown.
	Compacted string `json:"compacted,omitempty"`
	// Reasoning is the reasoning text the model returned with an assistant
	// message (chat endpoints' reasoning_content or reasoning, a Responses
	// reasoning summary): kept for watch and the UI, and sent back to
	// providers that require it.
	Reasoning string `json:"reasoning,omitempty"`
	// ReasoningItems are the Responses API's reasoning items of an
	// assistant message, kept opaque (with their encrypted_content) so a
	// stateless (store: false) session sends them back on the next request
	// and the model keeps its reasoning across turns and continue-as-new.
	ReasoningItems []ReasoningItem `json:"reasoning_items,omitempty"`
}

// ReasoningItem is one Responses API reasoning item, as the model returned it.
type ReasoningItem struct {
	ID               string   `json:"id"`
	EncryptedContent string   `json:"encrypted_content,omitempty"`
	Summary          []string `json:"summary,omitempty"`
}

// ToolCall is one call the model asked for. ID is the model's own id; it is
// what an approval names.
type ToolCall struct {
	// ID is the model's own id for the call, sent back to the model with
	// its result; the model chooses it, so nothing a person decides is
	// keyed by it.
	ID string `json:"id"`
	// Ref is the id the session gave the call (callref.Name: "c17"),
	// unique in the session: the one every surface shows and every
	// decision names. Never sent to the model.
	Ref       string `json:"ref,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // raw JSON text, exactly as the model sent it
	// Freeform is set on a call to a custom (freeform) tool, such as
	// apply_patch offered with its grammar: the raw input text exactly as
	// the model sent it. Arguments then holds the JSON the tool validates,
	// built from that text by the model activity, and the wire protocol
	// sends Freeform back as the custom call's input.
	Freeform string `json:"freeform,omitempty"`
}

// ToolResult is the result paired with one ToolCall.
type ToolResult struct {
	CallID string `json:"call_id"` // the model's id of the call (ToolCall.ID)
	// Ref is the session's id of the call (ToolCall.Ref).
	Ref     string `json:"ref,omitempty"`
	Name    string `json:"name"`
	Content string `json:"content"`
	IsError bool   `json:"is_error,omitempty"`
	Reason  Reason `json:"reason"`
	// ContentRef, when set, is the transcript reference of the full
	// result and Content is only a preview of it: the worker that ran the
	// tool kept the text out of the workflow history. The model activity
	// and the conversation query put the full text back
	// (transcript.Resolve); ContentBytes is its length, for estimates.
	ContentRef   string `json:"content_ref,omitempty"`
	ContentBytes int    `json:"content_bytes,omitempty"`
}

// ToolMessage wraps a result as a tool message.
func ToolMessage(r ToolResult) Message {
	return Message{Role: RoleTool, Content: r.Content, Result: &r}
}

// Usage counts tokens as the model reports them.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	// CachedTokens are the prompt tokens the provider served from its
	// prompt cache (part of PromptTokens, priced lower).
	CachedTokens int64 `json:"cached_tokens,omitempty"`
	// ReasoningTokens are the completion tokens spent on reasoning (part
	// of CompletionTokens).
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
	// CostUSD is the estimated cost, from the worker's price table; 0 when
	// the model has no price there.
	CostUSD float64 `json:"cost_usd,omitempty"`
}

// Add returns u plus o.
func (u Usage) Add(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
		CachedTokens:     u.CachedTokens + o.CachedTokens,
		ReasoningTokens:  u.ReasoningTokens + o.ReasoningTokens,
		CostUSD:          u.CostUSD + o.CostUSD,
	}
}
