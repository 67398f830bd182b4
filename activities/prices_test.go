package activities

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
)

func TestPriceTable(t *testing.T) {
	t.Parallel()
	u := conversation.Usage{PromptTokens: 1_000_000, CompletionTokens: 500_000}
	cost, ok := DefaultPrices.Cost("gpt-4.1", u)
	require.True(t, ok)
	require.InDelta(t, 2+4, cost, 1e-9)
	// A dated name takes its family's price, the longest prefix first.
	cost, ok = DefaultPrices.Cost("gpt-4.1-mini-2025-04-14", u)
	require.True(t, ok)
	require.InDelta(t, 0.4+0.8, cost, 1e-9)
	_, ok = DefaultPrices.Cost("llama3.1:8b", u)
	require.False(t, ok, "an unknown model has no cost, not a made-up one")
	_, ok = DefaultPrices.Cost("gpt-4.1x", u)
	require.False(t, ok)

	path := filepath.Join(t.TempDir(), "prices.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"llama3.1:8b": {"input": 0.1, "output": 0.2}, "gpt-4.1": {"input": 1, "output": 1}}`), 0o644))
	tab, err := LoadPrices(path)
	require.NoError(t, err)
	cost, _ = tab.Cost("llama3.1:8b", u)
	require.InDelta(t, 0.1+0.1, cost, 1e-9)
	cost, _ = tab.Cost("gpt-4.1", u)
	require.InDelta(t, 1.5, cost, 1e-9)
	_, ok = tab.Cost("gpt-4o", u)
	require.True(t, ok, "defaults stay")

	// Cached prompt tokens: at cached_input when the table says, else at
	// the full input price (the estimate that never understates).
	cu := conversation.Usage{PromptTokens: 1_000_000, CachedTokens: 750_000, CompletionTokens: 500_000}
	require.NoError(t, os.WriteFile(path, []byte(`{"free-cache": {"input": 1, "output": 2, "cached_input": 0}, "no-cached-price": {"input": 1, "output": 2}}`), 0o644))
	tab, err = LoadPrices(path)
	require.NoError(t, err)
	cost, _ = tab.Cost("free-cache", cu)
	require.InDelta(t, 0.25+1, cost, 1e-9)
	cost, _ = tab.Cost("no-cached-price", cu)
	require.InDelta(t, 1+1, cost, 1e-9)
	cost, _ = DefaultPrices.Cost("gpt-4o-2024-08-06", cu)
	require.InDelta(t, 0.25*2.5+0.75*1.25+0.5*10, cost, 1e-9)
	require.NoError(t, os.WriteFile(path, []byte(`{"m": {"input": 1, "output": 1, "cached_input": -1}}`), 0o644))
	_, err = LoadPrices(path)
	require.ErrorContains(t, err, "negative")

	require.NoError(t, os.WriteFile(path, []byte(`{"x": 1}`), 0o644))
	_, err = LoadPrices(path)
	require.ErrorContains(t, err, "want {")
}
