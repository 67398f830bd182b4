package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/longrun/longrun/tools"
)

// webFlags are the flags of the web tools (web_fetch, web_search), kept
// as given until config reads them into a tools.WebConfig.
type webFlags struct {
	timeout, maxBytes, outputBytes, redirects string
	allow, proxy, searchURL                   string
	searchAPI, searchModel                    string
}

// bind registers the web flags, each defaulting to its LONGRUN_WEB_*
// variable. The search provider's key is read from the environment only
// (LONGRUN_WEB_SEARCH_KEY): a flag's value is visible to every user of the
// machine.
func (w *webFlags) bind(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&w.timeout, "web-timeout", or(getenv("LONGRUN_WEB_TIMEOUT"), tools.DefaultWebTimeout.String()), "longest one web_fetch or web_search may take, redirects and reading included (env LONGRUN_WEB_TIMEOUT)")
	fs.StringVar(&w.maxBytes, "web-max-bytes", or(getenv("LONGRUN_WEB_MAX_BYTES"), strconv.Itoa(tools.DefaultWebMaxBytes)), "most bytes of a page web_fetch reads; the rest is not downloaded (env LONGRUN_WEB_MAX_BYTES)")
	fs.StringVar(&w.outputBytes, "web-output-bytes", or(getenv("LONGRUN_WEB_OUTPUT_BYTES"), strconv.Itoa(tools.DefaultWebOutputLimit)), "most bytes of text one web_fetch or web_search returns to the model; it pages on with offset (env LONGRUN_WEB_OUTPUT_BYTES)")
	fs.StringVar(&w.redirects, "web-max-redirects", or(getenv("LONGRUN_WEB_MAX_REDIRECTS"), strconv.Itoa(tools.DefaultWebMaxRedirects)), "most redirects within one host web_fetch follows (env LONGRUN_WEB_MAX_REDIRECTS)")
	fs.StringVar(&w.allow, "web-allow", getenv("LONGRUN_WEB_ALLOW"), "non-public addresses web_fetch may connect to all the same, comma separated: networks (10.0.0.0/8), addresses (127.0.0.1) or address:port (127.0.0.1:8080) (env LONGRUN_WEB_ALLOW; default none)")
	fs.StringVar(&w.proxy, "web-proxy", getenv("LONGRUN_WEB_PROXY"), "http(s)://host:port of a proxy for the web tools; HTTP_PROXY and the like are never used (env LONGRUN_WEB_PROXY; default none)")
	fs.StringVar(&w.searchURL, "web-search-url", getenv("LONGRUN_WEB_SEARCH_URL"), "search provider of the web_search tool, a JSON API called as GET URL?q=QUERY&n=COUNT (bearer key from env LONGRUN_WEB_SEARCH_KEY); without it (and without --web-search-api openai) there is no web_search tool (env LONGRUN_WEB_SEARCH_URL)")
	fs.StringVar(&w.searchAPI, "web-search-api", or(getenv("LONGRUN_WEB_SEARCH_API"), tools.WebSearchJSON), "the provider's API: json (GET URL?q=&n=), or openai: an OpenAI-compatible Responses endpoint whose built-in web_search tool searches; --web-search-url is then its API base, by default the model's OPENAI_BASE_URL with OPENAI_API_KEY (env LONGRUN_WEB_SEARCH_API)")
	fs.StringVar(&w.searchModel, "web-search-model", getenv("LONGRUN_WEB_SEARCH_MODEL"), "model that searches with --web-search-api openai (default --model; env LONGRUN_WEB_SEARCH_MODEL)")
}

// config checks the flags and returns the web tools' configuration;
// model is the worker's default model, the OpenAI search's default.
func (w *webFlags) config(getenv func(string) string, model string) (tools.WebConfig, error) {
	var c tools.WebConfig
	d, err := time.ParseDuration(w.timeout)
	if err != nil || d <= 0 {
		return c, fmt.Errorf("--web-timeout / LONGRUN_WEB_TIMEOUT %q: want a positive duration such as 30s", w.timeout)
	}
	c.Timeout = d
	for _, n := range []struct {
		flag, env, v string
		into         func(int64)
	}{
		{"--web-max-bytes", "LONGRUN_WEB_MAX_BYTES", w.maxBytes, func(v int64) { c.MaxBytes = v }},
		{"--web-output-bytes", "LONGRUN_WEB_OUTPUT_BYTES", w.outputBytes, func(v int64) { c.OutputLimit = int(v) }},
		{"--web-max-redirects", "LONGRUN_WEB_MAX_REDIRECTS", w.redirects, func(v int64) { c.MaxRedirects = int(v) }},
	} {
		v, err := strconv.ParseInt(n.v, 10, 32)
		if err != nil || v <= 0 {
			return c, fmt.Errorf("%s / %s %q: want a positive whole number", n.flag, n.env, n.v)
		}
		n.into(v)
	}
	for _, a := range strings.Split(w.allow, ",") {
		if a = strings.TrimSpace(a); a != "" {
			c.Allow = append(c.Allow, a)
		}
	}
	if err := tools.ParseWebAllow(c.Allow); err != nil {
		return c, fmt.Errorf("--web-allow / LONGRUN_WEB_ALLOW: %w", err)
	}
	if c.Proxy = w.proxy; c.Proxy != "" && !strings.HasPrefix(c.Proxy, "http://") && !strings.HasPrefix(c.Proxy, "https://") {
		return c, fmt.Errorf("--web-proxy / LONGRUN_WEB_PROXY %q: want http://host:port or https://host:port", c.Proxy)
	}
	c.Search.URL = w.searchURL
	switch w.searchAPI {
	case tools.WebSearchJSON:
	case tools.WebSearchOpenAI:
		c.Search.API, c.Search.Model = tools.WebSearchOpenAI, or(w.searchModel, model)
		if c.Search.Model == "" {
			return c, errors.New("--web-search-api openai: no model to search with: set --web-search-model (LONGRUN_WEB_SEARCH_MODEL) or --model")
		}
		if c.Search.URL == "" {
			// The model's own endpoint, with its own key: the key goes
			// only where it already goes.
			c.Search.URL = or(getenv("OPENAI_BASE_URL"), "https://api.openai.com/v1")
			if err := tools.CheckWebSearchURL(c.Search.URL); err != nil {
				return c, fmt.Errorf("--web-search-api openai: OPENAI_BASE_URL: %w", err)
			}
			c.Search.Key = or(getenv("LONGRUN_WEB_SEARCH_KEY"), getenv("OPENAI_API_KEY"))
			return c, nil
		}
	default:
		return c, fmt.Errorf("--web-search-api / LONGRUN_WEB_SEARCH_API %q: want json or openai", w.searchAPI)
	}
	if c.Search.URL = w.searchURL; c.Search.URL != "" {
		if err := tools.CheckWebSearchURL(c.Search.URL); err != nil {
			return c, fmt.Errorf("--web-search-url / LONGRUN_WEB_SEARCH_URL: %w", err)
		}
		c.Search.Key = getenv("LONGRUN_WEB_SEARCH_KEY")
	}
	return c, nil
}

// logWeb says at start what the web tools can reach, so an operator sees
// the exceptions to the address rule and where searches go.
func logWeb(logger *slog.Logger, c tools.WebConfig) {
	attrs := []any{"timeout", c.Timeout, "max_bytes", c.MaxBytes}
	if len(c.Allow) > 0 {
		attrs = append(attrs, "allow", strings.Join(c.Allow, ","))
	}
	if c.Proxy != "" {
		attrs = append(attrs, "proxy", c.Proxy)
	}
	logger.Info("web_fetch asks a person unless a rule allows the host, and connects to no private, loopback or link-local address but the allowed ones", attrs...)
	if c.Search.URL == "" {
		logger.Info("no web_search: no search provider (--web-search-url)")
		return
	}
	logger.Info("web_search asks the configured provider", "url", redactQuery(c.Search.URL), "key", c.Search.Key != "")
}

// redactQuery drops a URL's query string, which may hold a key.
func redactQuery(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.RawQuery != "" {
		u.RawQuery = "…"
		return u.String()
	}
	return raw
}
