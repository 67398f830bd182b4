package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

// TestWebFlags: the web tools' defaults, their variables and flags, the
// key from the environment only, and a clear refusal of bad values.
func TestWebFlags(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Equal(t, tools.WebConfig{Timeout: 30 * time.Second, MaxBytes: 5 << 20, OutputLimit: 50 * 1024, MaxRedirects: 5}, m.Tools.Web)

	m, err = ParseFlags([]string{"--web-timeout", "5s", "--web-allow", "127.0.0.1:8080, 10.0.0.0/8"}, env(map[string]string{
		"LONGRUN_WEB_MAX_BYTES": "1000", "LONGRUN_WEB_OUTPUT_BYTES": "200", "LONGRUN_WEB_TIMEOUT": "1m",
		"LONGRUN_WEB_SEARCH_URL": "http://127.0.0.1:8888/search", "LONGRUN_WEB_SEARCH_KEY": "k",
		"LONGRUN_WEB_PROXY": "http://proxy:3128",
	}))
	require.NoError(t, err)
	require.Equal(t, tools.WebConfig{Timeout: 5 * time.Second, MaxBytes: 1000, OutputLimit: 200, MaxRedirects: 5,
		Allow: []string{"127.0.0.1:8080", "10.0.0.0/8"}, Proxy: "http://proxy:3128",
		Search: tools.WebSearchConfig{URL: "http://127.0.0.1:8888/search", Key: "k"}}, m.Tools.Web)

	// The OpenAI-compatible search: the model's endpoint and key by
	// default; a URL of its own never gets the model's key.
	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_WEB_SEARCH_API": "openai", "LONGRUN_MODEL": "gpt-5",
		"OPENAI_BASE_URL": "http://models.example/v1", "OPENAI_API_KEY": "sk-model"}))
	require.NoError(t, err)
	require.Equal(t, tools.WebSearchConfig{URL: "http://models.example/v1", Key: "sk-model", API: "openai", Model: "gpt-5"}, m.Tools.Web.Search)
	m, err = ParseFlags([]string{"--web-search-api", "openai", "--web-search-url", "https://search.example/v1", "--web-search-model", "s-1"},
		env(map[string]string{"OPENAI_API_KEY": "sk-model"}))
	require.NoError(t, err)
	require.Equal(t, tools.WebSearchConfig{URL: "https://search.example/v1", API: "openai", Model: "s-1"}, m.Tools.Web.Search)

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--web-timeout", "soon"}, "--web-timeout / LONGRUN_WEB_TIMEOUT \"soon\""},
		{[]string{"--web-max-bytes", "0"}, "--web-max-bytes / LONGRUN_WEB_MAX_BYTES \"0\": want a positive whole number"},
		{[]string{"--web-allow", "localhost"}, `web address exception "localhost"`},
		{[]string{"--web-proxy", "socks5://x:1"}, "want http://host:port"},
		{[]string{"--web-search-url", "search.example"}, "--web-search-url / LONGRUN_WEB_SEARCH_URL"},
		{[]string{"--web-search-api", "bing"}, `LONGRUN_WEB_SEARCH_API "bing": want json or openai`},
		{[]string{"--web-search-api", "openai"}, "no model to search with"},
	} {
		_, err := ParseFlags(bad.args, env(nil))
		require.ErrorContains(t, err, bad.want, bad.args)
	}
}
