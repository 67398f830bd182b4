package activities

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/respjson"
	"go.temporal.io/sdk/activity"

	"github.com/longrun/longrun/conversation"
)

// reasoningFields are the fields in which chat endpoints return a reply's
// reasoning, outside the OpenAI schema: DeepSeek, vLLM and llama.cpp send
// reasoning_content, some gateways (OpenRouter, LiteLLM) reasoning. The
// first one present wins.
var reasoningFields = []string{"reasoning_content", "reasoning"}

// reasoningOf reads the reasoning text from a message's or a stream
// delta's extra fields (openai-go keeps every field it does not know
// there, raw). A field that is null or not a string is no reasoning.
func reasoningOf(extra map[string]respjson.Field) string {
	for _, name := range reasoningFields {
		f, ok := extra[name]
		if !ok || f.Raw() == "" {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// sendsReasoningBack reports whether an assistant message goes to a chat
// endpoint with its reasoning as reasoning_content. DeepSeek's thinking
// mode requires it on assistant messages with tool calls (the model
// continues that reasoning after the results) and answers 400 without it;
// vLLM and llama.cpp ignore it. It is not sent on plain answers, which no
// provider needs and DeepSeek's older reasoner refused, nor for reasoning
// that came from the Responses API (ReasoningItems set): OpenAI's chat
// endpoint knows no such field.
func sendsReasoningBack(m conversation.Message) bool {
	return m.Reasoning != "" && len(m.ToolCalls) > 0 && len(m.ReasoningItems) == 0
}

// chatUsage is a chat completion's usage as our own struct, with the
// prompt tokens served from the provider's cache and the completion
// tokens spent on reasoning.
func chatUsage(u openai.CompletionUsage) conversation.Usage {
	return conversation.Usage{
		PromptTokens:     u.PromptTokens,
		CompletionTokens: u.CompletionTokens,
		TotalTokens:      u.TotalTokens,
		CachedTokens:     u.PromptTokensDetails.CachedTokens,
		ReasoningTokens:  u.CompletionTokensDetails.ReasoningTokens,
	}
}

// price sets usage's cost from the worker's price table: the name the
// reply gives, else the one the request asked for.
func (a *Activities) price(replied, requested string, usage *conversation.Usage) {
	prices := a.cfg.Model.Prices
	if prices == nil {
		prices = DefaultPrices
	}
	if cost, ok := prices.Cost(replied, *usage); ok {
		usage.CostUSD = cost
	} else if cost, ok := prices.Cost(requested, *usage); ok {
		usage.CostUSD = cost
	}
}

// Prompt cache key settings (ModelConfig.PromptCacheKey, the worker's
// LONGRUN_PROMPT_CACHE_KEY).
const (
	PromptCacheKeyAuto = "auto" // on for api.openai.com only
	PromptCacheKeyOn   = "on"
	PromptCacheKeyOff  = "off"
)

// promptCacheKey is the prompt_cache_key to send, or "" for none. OpenAI
// routes requests with the same key to the same cache, so a session's
// turns, which share their whole prefix, hit it more often; the key is the
// workflow id, the same across continue-as-new. Auto sends it only to
// api.openai.com: other OpenAI-compatible servers may refuse a field they
// do not know (Mistral answers 422), and none of them uses it.
func (a *Activities) promptCacheKey(ctx context.Context) string {
	switch a.cfg.Model.PromptCacheKey {
	case PromptCacheKeyOff:
		return ""
	case PromptCacheKeyOn:
	default:
		if !isOpenAI(a.cfg.Model.BaseURL) {
			return ""
		}
	}
	if !activity.IsActivity(ctx) {
		return ""
	}
	return activity.GetInfo(ctx).WorkflowExecution.ID
}

// isOpenAI reports whether baseURL is OpenAI's own API (empty: the client's
// default, which is).
func isOpenAI(baseURL string) bool {
	if baseURL == "" {
		return true
	}
	u, err := url.Parse(baseURL)
	return err == nil && strings.EqualFold(u.Hostname(), "api.openai.com")
}
