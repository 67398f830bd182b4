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
}

// PriceTable maps a model name, or a prefix of dated names
// ("gpt-4.1" prices "gpt-4.1-2025-04-14"), to its price.
type PriceTable map[string]Price

// DefaultPrices are OpenAI's list prices for common models as of 2025.
// Prices change and endpoints differ (a local model costs nothing), so the
// worker takes its own table from LONGRUN_PRICES; a model in neither is
// reported without a cost rather than with a wrong one.
var DefaultPrices = PriceTable{
	"gpt-4.1":      {Input: 2, Output: 8},
	"gpt-4.1-mini": {Input: 0.4, Output: 1.6},
	"gpt-4.1-nano": {Input: 0.1, Output: 0.4},
	"gpt-4o":       {Input: 2.5, Output: 10},
	"gpt-4o-mini":  {Input: 0.15, Output: 0.6},
	"o3":           {Input: 2, Output: 8},
	"o4-mini":      {Input: 1.1, Output: 4.4},
}

// LoadPrices reads a price table from a JSON file:
// {"my-model": {"input": 0.5, "output": 1.5}}. Its entries override and
// extend DefaultPrices.
func LoadPrices(path string) (PriceTable, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("price table: %w", err)
	}
	var t PriceTable
	if err := json.Unmarshal(raw, &t); err != nil {
		return nil, fmt.Errorf("price table %s: want {\"model\": {\"input\": USD per 1M tokens, \"output\": ...}}: %w", path, err)
	}
	out := PriceTable{}
	for k, v := range DefaultPrices {
		out[k] = v
	}
	for k, v := range t {
		if v.Input < 0 || v.Output < 0 {
			return nil, fmt.Errorf("price table %s: %s has a negative price", path, k)
		}
		out[k] = v
	}
	return out, nil
}

// Cost is the estimated cost of usage on model: the exact name's price,
// else the longest name that is a prefix of it followed by "-".
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
	return (float64(u.PromptTokens)*p.Input + float64(u.CompletionTokens)*p.Output) / 1e6, true
}
