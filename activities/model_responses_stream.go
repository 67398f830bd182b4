package activities

import (
	"context"
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3/responses"
)

// streamResponses sends a Responses request with `stream: true` and
// returns the response its response.completed (or response.incomplete,
// or response.failed) event carries whole. The deltas before it feed the
// heartbeat: the text, the reasoning summary, the calls being written. An
// HTTP error before the stream starts is the same *openai.Error a plain
// request gets; an `error` event is typed like a failed response; a
// stream that ends without a final response is malformed (bounded
// attempts), as on chat completions.
func (a *Activities) streamResponses(ctx context.Context, params responses.ResponseNewParams, progress *progress) (*responses.Response, error) {
	s := a.client.Responses.NewStreaming(ctx, params)
	defer s.Close()
	var text, reasoning strings.Builder
	var calls []string
	argLen := 0
	for s.Next() {
		ev := s.Current()
		switch ev.Type {
		case "response.output_text.delta", "response.refusal.delta":
			text.WriteString(ev.Delta)
		case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
			reasoning.WriteString(ev.Delta)
		case "response.reasoning_summary_part.added":
			if reasoning.Len() > 0 {
				reasoning.WriteString("\n\n")
			}
		case "response.output_item.added":
			if ev.Item.Type == "function_call" || ev.Item.Type == "custom_tool_call" {
				calls = append(calls, ev.Item.Name)
			}
		case "response.function_call_arguments.delta", "response.custom_tool_call_input.delta":
			argLen += len(ev.Delta)
		case "response.completed", "response.incomplete", "response.failed":
			r := ev.Response
			return &r, nil
		case "error":
			return nil, failedError(ev.Code, ev.Message)
		}
		progress.set(text.String(), reasoning.String(), append([]string(nil), calls...), argLen)
	}
	if err := s.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("the stream ended before the response was finished: %w", errMalformedStream)
}
