package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// Search APIs (WebSearchConfig.API).
const (
	// WebSearchJSON is the simple HTTP JSON API (GET ?q=&n=).
	WebSearchJSON = "json"
	// WebSearchOpenAI is an OpenAI-compatible Responses endpoint with its
	// built-in web_search tool: the provider's model searches and answers
	// with URL citations.
	WebSearchOpenAI = "openai"
)

// openAISearchRequest asks a Responses endpoint to search. store: false
// keeps the query out of the provider's stored responses.
func openAISearchRequest(model, query string, count int) ([]byte, error) {
	return json.Marshal(map[string]any{
		"model": model,
		"input": fmt.Sprintf("Search the web for: %s\n\nAnswer briefly with what the %d most relevant sources say, citing each.", query, count),
		"tools": []map[string]any{{"type": "web_search"}},
		"store": false,
	})
}

// openAISearchAnswer is the part of a Responses answer web_search reads:
// the message text and its URL citations.
type openAISearchAnswer struct {
	Output []struct {
		Type    string `json:"type"`
		Content []struct {
			Type        string `json:"type"`
			Text        string `json:"text"`
			Annotations []struct {
				Type  string `json:"type"`
				URL   string `json:"url"`
				Title string `json:"title"`
			} `json:"annotations"`
		} `json:"content"`
	} `json:"output"`
}

// searchOpenAI asks the Responses endpoint (cfg.Search.URL + "/responses").
func (s *WebSearch) searchOpenAI(ctx context.Context, p WebSearchParams) (Result, error) {
	body, err := openAISearchRequest(s.cfg.Search.Model, p.Query, p.Count)
	if err != nil {
		return Result{}, fmt.Errorf("web search request: %w", err)
	}
	endpoint := strings.TrimSuffix(s.cfg.Search.URL, "/") + "/responses"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return Result{}, fmt.Errorf("web search request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	raw, res, ok := s.do(req)
	if !ok {
		return res, nil
	}
	var ans openAISearchAnswer
	if err := json.Unmarshal(raw, &ans); err != nil {
		return Errorf("the search provider's answer is not a Responses API answer: %v", err), nil
	}
	var text strings.Builder
	var hits []searchHit
	seen := map[string]bool{}
	for _, item := range ans.Output {
		if item.Type != "message" {
			continue
		}
		for _, c := range item.Content {
			if c.Type != "output_text" {
				continue
			}
			text.WriteString(c.Text)
			for _, a := range c.Annotations {
				if a.Type == "url_citation" && a.URL != "" && !seen[a.URL] {
					seen[a.URL] = true
					hits = append(hits, searchHit{Title: a.Title, URL: a.URL})
				}
			}
		}
	}
	if text.Len() == 0 && len(hits) == 0 {
		return Errorf("the search provider answered without text or sources"), nil
	}
	out := s.render(p, hits)
	if t := strings.TrimSpace(text.String()); t != "" {
		out += "\nThe provider's summary (untrusted):\n" + TruncateLabel(t, max(s.cfg.OutputLimit-len(out), 0)) + "\n"
	}
	return Result{Content: out}, nil
}
