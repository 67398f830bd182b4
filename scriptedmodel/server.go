// Package scriptedmodel serves the OpenAI chat-completions protocol and the
// Responses API over real HTTP and answers from a script. Tests use it to play the model (they mock
// the model's answers, never the SDK client), and the offline demo uses it
// when no OPENAI_API_KEY is set. Every request is recorded so a test can
// assert what the model was sent.
package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/longrun/longrun/hostcheck"
)

// Reply is one scripted answer. A zero Status answers 200 with a chat
// completion built from Text and ToolCalls (streamed as server-sent events
// when the request asks for a stream); a non-zero Status answers that HTTP
// status with an OpenAI-style error body (a fault), before any stream
// starts. RawBody, when set, is sent verbatim instead (garbage, truncated
// JSON, or hand-written "data: ..." events).
type Reply struct {
	Text      string
	ToolCalls []Call
	Status    int
	RawBody   string
	Delay     time.Duration
	Usage     *Usage
	// Header is sent with the reply, e.g. Retry-After or retry-after-ms.
	Header map[string]string
	// ErrorMessage and ErrorCode shape the error body of a Status fault
	// the way a provider words it, e.g. OpenAI's context-length error.
	ErrorMessage, ErrorCode string
	// DropAfter > 0 sends only the first DropAfter bytes of the body and
	// closes the connection: a connection lost mid-body. A plain reply
	// announces the whole body's length first; a stream is cut after the
	// events those bytes hold (and part of the next).
	DropAfter int
	// ChunkDelay is the pause between the events of a stream, so a test can
	// watch a reply being written. Delay still comes before the first one.
	ChunkDelay time.Duration
	// OmitUsage leaves the usage chunk out of a stream even when the
	// request asks for it, as some proxies do.
	OmitUsage bool
	// Reasoning is the model's reasoning: on chat completions a
	// ReasoningField next to the content (streamed before it), as DeepSeek,
	// vLLM and llama.cpp send it; on the Responses API a reasoning item
	// whose summary it is, with an encrypted_content of
	// EncryptedReasoning (made up from the request's number when empty).
	Reasoning          string
	ReasoningField     string // default "reasoning_content"
	EncryptedReasoning string
}

// Call is a scripted tool call. Arguments is raw text, so a script can send
// invalid JSON on purpose. Custom makes it a call to a custom (freeform)
// tool, whose input is Arguments as it stands.
type Call struct {
	ID        string
	Name      string
	Arguments string
	Custom    bool
}

// Usage is the token usage reported in a reply. CachedTokens (of the
// prompt) and ReasoningTokens (of the completion) are reported in the
// usage details when set.
type Usage struct {
	PromptTokens, CompletionTokens int64
	CachedTokens, ReasoningTokens  int64
}

// Text is a reply with assistant text only.
func Text(s string) Reply { return Reply{Text: s} }

// Tools is a reply asking for the given calls, in one assistant message.
func Tools(calls ...Call) Reply { return Reply{ToolCalls: calls} }

// Request is one recorded request, of either protocol. A Responses
// request's input is also given as Messages (its items regrouped as chat
// messages), so a Responder reads both alike; Items has it as sent.
type Request struct {
	Header http.Header
	At     time.Time // when the request arrived
	// API is APIChat or APIResponses.
	API      string
	Model    string
	Messages []Message
	Tools    []Tool
	// Stream and IncludeUsage are the request's stream and
	// stream_options.include_usage.
	Stream, IncludeUsage bool
	// PromptCacheKey is the request's prompt_cache_key.
	PromptCacheKey string
	// Items, Store and Include are a Responses request's input, store
	// (nil: not sent) and include.
	Items   []Item
	Store   *bool
	Include []string
	Raw     json.RawMessage
}

// The protocols a Request may speak.
const (
	APIChat      = "chat"
	APIResponses = "responses"
)

// Message is a request message, decoded loosely: content may be a string or
// an array of parts; parts are joined.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"-"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []WireCall `json:"tool_calls,omitempty"`
	// ReasoningContent is an assistant message's reasoning_content, as
	// DeepSeek's thinking mode wants it back.
	ReasoningContent string `json:"reasoning_content,omitempty"`
}

// WireCall is a tool call as it appears on the wire. A custom tool call
// has Type "custom" and its input in Custom.
type WireCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
	Custom struct {
		Name  string `json:"name"`
		Input string `json:"input"`
	} `json:"custom"`
}

// Tool is a tool definition as the model receives it. On the Responses
// API a function tool's fields are not nested; they are decoded into
// Function all the same, and Format is a custom tool's format.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
	Format json.RawMessage `json:"format,omitempty"`
}

// Responder decides a reply from the request; it is consulted when the
// script is empty. ok=false means "no reply": the server answers 500.
type Responder func(req Request) (reply Reply, ok bool)

// Server is a scripted OpenAI-compatible endpoint.
type Server struct {
	srv *httptest.Server

	mu        sync.Mutex
	script    []Reply
	responder Responder
	requests  []Request
	seq       int
}

// New starts a server that answers with the script, in order. It answers
// only requests addressed to loopback (hostcheck), as every HTTP server
// Longrun runs does: the worker's demo mode serves it too.
func New(script ...Reply) *Server {
	s := &Server{script: script}
	s.srv = httptest.NewServer(hostcheck.Wrap(hostcheck.Policy{}, http.HandlerFunc(s.serve)))
	return s
}

// NewResponder starts a server that answers through r (after any script).
func NewResponder(r Responder, script ...Reply) *Server {
	// The responder is set before the server starts: a request served
	// at once must see it (and the race detector requires the order).
	s := &Server{script: script, responder: r}
	s.srv = httptest.NewServer(hostcheck.Wrap(hostcheck.Policy{}, http.HandlerFunc(s.serve)))
	return s
}

// URL is the base URL to give an OpenAI client (it ends in /v1).
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Enqueue appends replies to the script.
func (s *Server) Enqueue(r ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, r...)
}

// Requests returns a copy of every request received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// Remaining is how many scripted replies are still unused.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	responsesAPI := strings.HasSuffix(r.URL.Path, "/responses")
	if r.Method != http.MethodPost || !responsesAPI && !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, fmt.Sprintf("scripted model serves POST /v1/chat/completions and /v1/responses, not %s %s", r.Method, r.URL.Path))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "read body: "+err.Error())
		return
	}
	decode := decodeRequest
	if responsesAPI {
		decode = decodeResponsesRequest
	}
	req, err := decode(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	req.Header, req.At = r.Header.Clone(), time.Now()

	s.mu.Lock()
	s.requests = append(s.requests, req)
	var reply Reply
	ok := false
	if len(s.script) > 0 {
		reply, s.script, ok = s.script[0], s.script[1:], true
	} else if s.responder != nil {
		s.mu.Unlock()
		reply, ok = s.responder(req)
		s.mu.Lock()
	}
	s.seq++
	seq := s.seq
	s.mu.Unlock()

	if !ok {
		writeError(w, http.StatusInternalServerError, fmt.Sprintf("scripted model: script exhausted at request %d", seq))
		return
	}
	if reply.Delay > 0 {
		select {
		case <-time.After(reply.Delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	answer := func() any { return completion(req.Model, seq, reply) }
	if responsesAPI {
		answer = func() any { return response(req.Model, seq, reply) }
	}
	switch {
	case req.Stream && reply.RawBody == "" && reply.Status == 0 && responsesAPI:
		s.streamResponses(w, r, req, seq, reply)
	case req.Stream && reply.RawBody == "" && reply.Status == 0:
		s.stream(w, r, req, seq, reply)
	case reply.DropAfter > 0:
		dropMidBody(w, answer(), reply.DropAfter)
	case reply.RawBody != "":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(orDefault(reply.Status, http.StatusOK))
		_, _ = io.WriteString(w, reply.RawBody)
	case reply.Status != 0 && reply.ErrorMessage != "":
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.Status)
		_ = json.NewEncoder(w).Encode(map[string]any{
			"error": map[string]any{"message": reply.ErrorMessage, "type": "invalid_request_error", "code": reply.ErrorCode},
		})
	case reply.Status != 0:
		writeError(w, reply.Status, fmt.Sprintf("scripted fault %d", reply.Status))
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(answer())
	}
}

// dropMidBody writes the response by hand on the hijacked connection, so
// the client sees a Content-Length it never gets.
func dropMidBody(w http.ResponseWriter, v any, n int) {
	body, _ := json.Marshal(v)
	conn, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		writeError(w, http.StatusInternalServerError, "scripted model: cannot drop the connection: "+err.Error())
		return
	}
	defer conn.Close()
	fmt.Fprintf(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
	_, _ = buf.Write(body[:min(n, len(body)-1)])
	_ = buf.Flush()
}

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"error": map[string]any{"message": msg, "type": "scripted_error", "code": fmt.Sprint(status)},
	})
}

func decodeRequest(body []byte) (Request, error) {
	var wire struct {
		Model         string            `json:"model"`
		Messages      []json.RawMessage `json:"messages"`
		Tools         []Tool            `json:"tools"`
		Stream        bool              `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		PromptCacheKey string `json:"prompt_cache_key"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		return Request{}, fmt.Errorf("request is not valid JSON: %w", err)
	}
	req := Request{API: APIChat, Model: wire.Model, Tools: wire.Tools, Raw: body, PromptCacheKey: wire.PromptCacheKey,
		Stream: wire.Stream, IncludeUsage: wire.StreamOptions.IncludeUsage}
	for i, raw := range wire.Messages {
		var m Message
		if err := json.Unmarshal(raw, &m); err != nil {
			return Request{}, fmt.Errorf("message %d: %w", i, err)
		}
		var c struct {
			Content json.RawMessage `json:"content"`
		}
		_ = json.Unmarshal(raw, &c)
		m.Content = contentText(c.Content)
		req.Messages = append(req.Messages, m)
	}
	return req, nil
}

// contentText flattens string or array-of-parts content.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

func completion(model string, seq int, r Reply) map[string]any {
	msg := map[string]any{"role": "assistant", "content": r.Text}
	if r.Reasoning != "" {
		msg[reasoningField(r)] = r.Reasoning
	}
	if len(r.ToolCalls) > 0 {
		calls := make([]map[string]any, len(r.ToolCalls))
		for i, c := range r.ToolCalls {
			calls[i] = wireCall(seq, i, c)
		}
		msg["tool_calls"] = calls
	}
	return map[string]any{
		"id":      fmt.Sprintf("chatcmpl-scripted-%d", seq),
		"object":  "chat.completion",
		"created": 1700000000 + seq,
		"model":   modelName(model),
		"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finishReason(r)}},
		"usage":   usage(r),
	}
}

// wireCall is a chat completion's tool call: a function call, or a custom
// tool call carrying its input.
func wireCall(seq, i int, c Call) map[string]any {
	if c.Custom {
		return map[string]any{"id": callID(seq, i, c), "type": "custom",
			"custom": map[string]any{"name": c.Name, "input": c.Arguments}}
	}
	return map[string]any{"id": callID(seq, i, c), "type": "function",
		"function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
}

// reasoningField is the chat field a reply's reasoning goes in.
func reasoningField(r Reply) string {
	if r.ReasoningField != "" {
		return r.ReasoningField
	}
	return "reasoning_content"
}

// callID is the call's scripted id, or one made up from the request's
// sequence number and the call's position.
func callID(seq, i int, c Call) string {
	if c.ID != "" {
		return c.ID
	}
	return fmt.Sprintf("call_%d_%d", seq, i)
}

func finishReason(r Reply) string {
	if len(r.ToolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

func modelName(model string) string {
	if model == "" {
		return "scripted"
	}
	return model
}

// usage is the reply's usage on the wire: the scripted one, or 100 prompt
// and 20 completion tokens.
func usage(r Reply) map[string]any {
	u := replyUsage(r)
	out := map[string]any{
		"prompt_tokens":     u.PromptTokens,
		"completion_tokens": u.CompletionTokens,
		"total_tokens":      u.PromptTokens + u.CompletionTokens,
	}
	if u.CachedTokens > 0 {
		out["prompt_tokens_details"] = map[string]any{"cached_tokens": u.CachedTokens}
	}
	if u.ReasoningTokens > 0 {
		out["completion_tokens_details"] = map[string]any{"reasoning_tokens": u.ReasoningTokens}
	}
	return out
}

// replyUsage is the reply's usage: the scripted one, or 100 prompt and 20
// completion tokens.
func replyUsage(r Reply) Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	return Usage{PromptTokens: 100, CompletionTokens: 20}
}

// LastToolResult returns the content of the tool message answering callID
// in the request, and whether it was found.
func (r Request) LastToolResult(callID string) (string, bool) {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "tool" && r.Messages[i].ToolCallID == callID {
			return r.Messages[i].Content, true
		}
	}
	return "", false
}
