package activities

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/longrun/longrun/conversation"
)

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Input  float64 `json:"input"`
	Output float64 `json:"output"`
	// CachedInput prices the input tokens the provider served from its
	// prompt cache (Usage.CachedTokens). Nil: they cost the full Input
	// price, the estimate that never understates a bill; 0 is free.
	CachedInput *float64 `json:"cached_input,omitempty"`
}

// PriceTable maps a model name, or a prefix of dated names
// ("gpt-4.1" prices "gpt-4.1-2025-04-14"), to its price.
type PriceTable map[string]Price

// DefaultPrices are OpenAI's list prices for common models as of 2025.
// Prices change and endpoints differ (a local model costs nothing), so the
// worker takes its own table from LONGRUN_PRICES; a model in neither is
// reported without a cost rather than with a wrong one.
var DefaultPrices = PriceTable{
	"gpt-4.1":      {Input: 2, Output: 8, CachedInput: new(0.5)},
	"gpt-4.1-mini": {Input: 0.4, Output: 1.6, CachedInput: new(0.1)},
	"gpt-4.1-nano": {Input: 0.1, Output: 0.4, CachedInput: new(0.025)},
	"gpt-4o":       {Input: 2.5, Output: 10, CachedInput: new(1.25)},
	"gpt-4o-mini":  {Input: 0.15, Output: 0.6, CachedInput: new(0.075)},
	"o3":           {Input: 2, Output: 8, CachedInput: new(0.5)},
	"o4-mini":      {Input: 1.1, Output: 4.4, CachedInput: new(0.275)},
	"gpt-5":        {Input: 1.25, Output: 10, CachedInput: new(0.125)},
	"gpt-5-mini":   {Input: 0.25, Output: 2, CachedInput: new(0.025)},
	"gpt-5-nano":   {Input: 0.05, Output: 0.4, CachedInput: new(0.005)},
	"gpt-5-codex":  {Input: 1.25, Output: 10, CachedInput: new(0.125)},
}

// LoadPrices reads a price table from a JSON file:
// {"my-model": {"input": 0.5, "output": 1.5, "cached_input": 0.05}}. Its
// entries override and extend DefaultPrices; an entry without
// cached_input prices cached tokens at its input price.
func LoadPrices(path string) (PriceTable, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("price table: %w", err)
	}
	var t PriceTable
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("price table %s: want {\"model\": {\"input\": USD per 1M tokens, \"output\": ..., \"cached_input\": ... (optional)}}: %w", path, err)
	}
	out := PriceTable{}
	for k, v := range DefaultPrices {
		out[k] = v
	}
	for k, v := range t {
		if v.Input < 0 || v.Output < 0 || v.CachedInput != nil && *v.CachedInput < 0 {
			return nil, fmt.Errorf("price table %s: %s has a negative price", path, k)
		}
		out[k] = v
	}
	return out, nil
}

// Cost is the estimated cost of usage on model: the exact name's price,
// else the longest name that is a prefix of it followed by "-". Cached
// prompt tokens are priced at CachedInput, the rest of the prompt at Input.
func (t PriceTable) Cost(model string, u conversation.Usage) (float64, bool) {
	p, ok := t[model]
	if !ok {
		names := make([]string, 0, len(t))
		for n := range t {
			names = append(names, n)
		}
		sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
		for _, n := range names {
			if strings.HasPrefix(model, n+"-") {
				p, ok = t[n], true
				break
			}
		}
	}
	if !ok {
		return 0, false
	}
	cached := min(max(u.CachedTokens, 0), u.PromptTokens)
	cachedPrice := p.Input
	if p.CachedInput != nil {
		cachedPrice = *p.CachedInput
	}
	return (float64(u.PromptTokens-cached)*p.Input + float64(cached)*cachedPrice + float64(u.CompletionTokens)*p.Output) / 1e6, true
}
