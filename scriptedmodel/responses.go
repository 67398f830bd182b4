package scriptedmodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Item is one input item of a Responses request, decoded loosely: a
// message (Role, Content), a reasoning item (ID, Summary,
// EncryptedContent), a function_call or custom_tool_call (CallID, Name,
// Arguments or Input), or a call's output (CallID, Output).
type Item struct {
	Type             string   `json:"type"`
	Role             string   `json:"role,omitempty"`
	Content          string   `json:"-"`
	ID               string   `json:"id,omitempty"`
	CallID           string   `json:"call_id,omitempty"`
	Name             string   `json:"name,omitempty"`
	Arguments        string   `json:"arguments,omitempty"`
	Input            string   `json:"input,omitempty"`
	Output           string   `json:"-"`
	EncryptedContent string   `json:"encrypted_content,omitempty"`
	Summary          []string `json:"-"`
}

// ItemsOfType returns the request's input items of type typ, in order.
func (r Request) ItemsOfType(typ string) []Item {
	var out []Item
	for _, it := range r.Items {
		if it.Type == typ {
			out = append(out, it)
		}
	}
	return out
}

func decodeResponsesRequest(body []byte) (Request, error) {
	var wire struct {
		Model          string            `json:"model"`
		Input          json.RawMessage   `json:"input"`
		Instructions   string            `json:"instructions"`
		Tools          []json.RawMessage `json:"tools"`
		Stream         bool              `json:"stream"`
		Store          *bool             `json:"store"`
		Include        []string          `json:"include"`
		PromptCacheKey string            `json:"prompt_cache_key"`
	}
	if err := json.Unmarshal(body, &wire); err != nil {
		return Request{}, fmt.Errorf("request is not valid JSON: %w", err)
	}
	req := Request{API: APIResponses, Model: wire.Model, Raw: body, Stream: wire.Stream, IncludeUsage: wire.Stream,
		Store: wire.Store, Include: wire.Include, PromptCacheKey: wire.PromptCacheKey}
	for i, raw := range wire.Tools {
		var t struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Format      json.RawMessage `json:"format"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return Request{}, fmt.Errorf("tool %d: %w", i, err)
		}
		tool := Tool{Type: t.Type, Format: t.Format}
		tool.Function.Name, tool.Function.Description, tool.Function.Parameters = t.Name, t.Description, t.Parameters
		req.Tools = append(req.Tools, tool)
	}
	if wire.Instructions != "" {
		req.Messages = append(req.Messages, Message{Role: "system", Content: wire.Instructions})
	}
	var s string
	if json.Unmarshal(wire.Input, &s) == nil {
		req.Items = []Item{{Type: "message", Role: "user", Content: s}}
	} else if len(wire.Input) > 0 {
		var raws []json.RawMessage
		if err := json.Unmarshal(wire.Input, &raws); err != nil {
			return Request{}, fmt.Errorf("input is neither a string nor a list of items: %w", err)
		}
		for i, raw := range raws {
			it, err := decodeItem(raw)
			if err != nil {
				return Request{}, fmt.Errorf("input item %d: %w", i, err)
			}
			req.Items = append(req.Items, it)
		}
	}
	req.Messages = append(req.Messages, itemMessages(req.Items)...)
	return req, nil
}

func decodeItem(raw json.RawMessage) (Item, error) {
	var it Item
	if err := json.Unmarshal(raw, &it); err != nil {
		return Item{}, err
	}
	var rest struct {
		Content json.RawMessage `json:"content"`
		Output  json.RawMessage `json:"output"`
		Summary []struct {
			Text string `json:"text"`
		} `json:"summary"`
	}
	_ = json.Unmarshal(raw, &rest)
	if it.Type == "" && it.Role != "" {
		it.Type = "message"
	}
	it.Content, it.Output = contentText(rest.Content), contentText(rest.Output)
	for _, p := range rest.Summary {
		it.Summary = append(it.Summary, p.Text)
	}
	return it, nil
}

// itemMessages regroups input items as chat messages: an assistant
// message gathers the reasoning, text and calls that follow each other
// (its ReasoningContent is the reasoning summaries), an output is a tool
// message.
func itemMessages(items []Item) []Message {
	var out []Message
	assistant := func() *Message {
		if n := len(out); n > 0 && out[n-1].Role == "assistant" {
			return &out[n-1]
		}
		out = append(out, Message{Role: "assistant"})
		return &out[len(out)-1]
	}
	for _, it := range items {
		switch it.Type {
		case "message":
			if it.Role == "assistant" {
				m := assistant()
				m.Content += it.Content
				continue
			}
			out = append(out, Message{Role: it.Role, Content: it.Content})
		case "reasoning":
			m := assistant()
			m.ReasoningContent += strings.Join(it.Summary, "\n\n")
		case "function_call", "custom_tool_call":
			m := assistant()
			c := WireCall{ID: it.CallID, Type: "function"}
			c.Function.Name, c.Function.Arguments = it.Name, it.Arguments
			if it.Type == "custom_tool_call" {
				c.Type = "custom"
				c.Custom.Name, c.Custom.Input = it.Name, it.Input
			}
			m.ToolCalls = append(m.ToolCalls, c)
		case "function_call_output", "custom_tool_call_output":
			out = append(out, Message{Role: "tool", ToolCallID: it.CallID, Content: it.Output})
		}
	}
	return out
}

// encryptedReasoning is the reply's encrypted_content.
func encryptedReasoning(seq int, r Reply) string {
	if r.EncryptedReasoning != "" {
		return r.EncryptedReasoning
	}
	return fmt.Sprintf("enc-scripted-%d", seq)
}

// outputItems are the reply as Responses output items: a reasoning item,
// the message, then the calls.
func outputItems(seq int, r Reply) []map[string]any {
	var items []map[string]any
	if r.Reasoning != "" {
		items = append(items, map[string]any{
			"type": "reasoning", "id": fmt.Sprintf("rs_scripted_%d", seq),
			"summary":           []map[string]any{{"type": "summary_text", "text": r.Reasoning}},
			"encrypted_content": encryptedReasoning(seq, r),
		})
	}
	if r.Text != "" || len(r.ToolCalls) == 0 {
		items = append(items, map[string]any{
			"type": "message", "id": fmt.Sprintf("msg_scripted_%d", seq), "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": r.Text, "annotations": []any{}}},
		})
	}
	for i, c := range r.ToolCalls {
		if c.Custom {
			items = append(items, map[string]any{
				"type": "custom_tool_call", "id": fmt.Sprintf("ctc_scripted_%d_%d", seq, i),
				"call_id": callID(seq, i, c), "name": c.Name, "input": c.Arguments,
			})
			continue
		}
		items = append(items, map[string]any{
			"type": "function_call", "id": fmt.Sprintf("fc_scripted_%d_%d", seq, i), "status": "completed",
			"call_id": callID(seq, i, c), "name": c.Name, "arguments": c.Arguments,
		})
	}
	return items
}

// responseObject is a Response with the given status and output.
func responseObject(model string, seq int, status string, output []map[string]any, r Reply) map[string]any {
	u := replyUsage(r)
	obj := map[string]any{
		"id": fmt.Sprintf("resp_scripted_%d", seq), "object": "response", "created_at": 1700000000 + seq,
		"status": status, "model": modelName(model), "output": output,
		"parallel_tool_calls": true, "tool_choice": "auto", "tools": []any{}, "store": false,
	}
	if status == "completed" {
		obj["usage"] = map[string]any{
			"input_tokens":          u.PromptTokens,
			"input_tokens_details":  map[string]any{"cached_tokens": u.CachedTokens},
			"output_tokens":         u.CompletionTokens,
			"output_tokens_details": map[string]any{"reasoning_tokens": u.ReasoningTokens},
			"total_tokens":          u.PromptTokens + u.CompletionTokens,
		}
	}
	return obj
}

// response is a whole (not streamed) Responses reply.
func response(model string, seq int, r Reply) map[string]any {
	return responseObject(model, seq, "completed", outputItems(seq, r), r)
}

// streamResponses answers a streamed Responses request the way OpenAI
// does: `event: type` / `data: {...}` pairs, response.created, then per
// output item its output_item.added, its deltas (reasoning summary, text,
// function arguments or custom input, in a few pieces) and its
// output_item.done, and response.completed with the whole response.
func (s *Server) streamResponses(w http.ResponseWriter, r *http.Request, req Request, seq int, reply Reply) {
	var events [][]byte
	n := 0
	emit := func(typ string, fields map[string]any) {
		fields["type"], fields["sequence_number"] = typ, n
		n++
		b, _ := json.Marshal(fields)
		events = append(events, []byte("event: "+typ+"\ndata: "+string(b)+"\n\n"))
	}
	emit("response.created", map[string]any{"response": responseObject(req.Model, seq, "in_progress", []map[string]any{}, reply)})
	items := outputItems(seq, reply)
	for i, item := range items {
		id := item["id"]
		skeleton := map[string]any{}
		for k, v := range item {
			skeleton[k] = v
		}
		deltaType, full := "", ""
		switch item["type"] {
		case "reasoning":
			skeleton["summary"] = []any{}
			deltaType, full = "response.reasoning_summary_text.delta", reply.Reasoning
		case "message":
			skeleton["content"], skeleton["status"] = []any{}, "in_progress"
			deltaType, full = "response.output_text.delta", reply.Text
		case "function_call":
			skeleton["arguments"], skeleton["status"] = "", "in_progress"
			deltaType, full = "response.function_call_arguments.delta", item["arguments"].(string)
		case "custom_tool_call":
			skeleton["input"] = ""
			deltaType, full = "response.custom_tool_call_input.delta", item["input"].(string)
		}
		emit("response.output_item.added", map[string]any{"output_index": i, "item": skeleton})
		if item["type"] == "reasoning" {
			emit("response.reasoning_summary_part.added", map[string]any{"item_id": id, "output_index": i, "summary_index": 0,
				"part": map[string]any{"type": "summary_text", "text": ""}})
		}
		for _, p := range splitText(full, maxTextChunks) {
			f := map[string]any{"item_id": id, "output_index": i, "delta": p}
			switch item["type"] {
			case "reasoning":
				f["summary_index"] = 0
			case "message":
				f["content_index"] = 0
			}
			emit(deltaType, f)
		}
		emit("response.output_item.done", map[string]any{"output_index": i, "item": item})
	}
	emit("response.completed", map[string]any{"response": responseObject(req.Model, seq, "completed", items, reply)})
	writeEvents(w, r, events, reply)
}
