package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// A chat endpoint that returns reasoning_content (DeepSeek, vLLM,
// llama.cpp) and reports cached prompt tokens: the reasoning is kept on
// the assistant message, shown by `starter watch`, and sent back with the
// tool call it led to; the cached tokens are counted in usage and priced
// at the price table's cached_input.
func TestChatReasoningAndCachedTokens(t *testing.T) {
	t.Parallel()
	const thinking = "The user wants the notes. I should read notes.txt first."
	e := newEnvWorkerEnv(t, nil,
		sm.Reply{Reasoning: thinking, ToolCalls: []sm.Call{{ID: "c_read", Name: "read", Arguments: `{"path": "notes.txt"}`}},
			Usage: &sm.Usage{PromptTokens: 1_000_000, CompletionTokens: 100_000, CachedTokens: 900_000, ReasoningTokens: 40_000}},
		sm.Reply{Text: "The notes say hello.", Reasoning: "The file says hello.",
			Usage: &sm.Usage{PromptTokens: 1_000_000, CompletionTokens: 0}},
	)
	require.NoError(t, os.WriteFile(filepath.Join(e.configDir, "prices.json"),
		[]byte(`{"scripted-test": {"input": 1, "output": 2, "cached_input": 0.1}}`), 0o644))
	e.stopWorker() // the price table is read at start
	e.startWorker()
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "notes.txt"), []byte("hello\n"), 0o644))

	id := e.start(workflows.SessionInput{Prompt: "what do the notes say?"})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)

	// Usage: both turns summed; the first turn's 900k cached tokens at
	// $0.1, its other 100k at $1, 100k out at $2; the second turn 1M at $1.
	require.Equal(t, int64(900_000), r.Usage.CachedTokens)
	require.Equal(t, int64(40_000), r.Usage.ReasoningTokens)
	require.InDelta(t, 0.09+0.1+0.2+1, r.Usage.CostUSD, 1e-9)

	msgs := e.checkSession(id)
	var assistants []conversation.Message
	for _, m := range msgs {
		if m.Role == conversation.RoleAssistant {
			assistants = append(assistants, m)
		}
	}
	require.Len(t, assistants, 2)
	require.Equal(t, thinking, assistants[0].Reasoning)
	require.Equal(t, "The file says hello.", assistants[1].Reasoning)

	reqs := e.model.Requests()
	require.Len(t, reqs, 2)
	var sent string
	for _, m := range reqs[1].Messages {
		if m.Role == "assistant" {
			sent = m.ReasoningContent
		}
	}
	require.Equal(t, thinking, sent, "reasoning_content goes back with the tool call it led to")
	require.Empty(t, reqs[0].PromptCacheKey, "no prompt_cache_key to an endpoint that is not OpenAI's")

	out, err := e.starter("watch", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "thinking: "+thinking)
	require.Contains(t, out, "thinking: The file says hello.")
	require.Less(t, strings.Index(out, "thinking: The file says hello."), strings.Index(out, "assistant: The notes say hello."),
		"the reasoning comes above the answer")
	require.Contains(t, out, "900000 of the prompt cached, 40000 of the completion reasoning), ~$1.3900")
}
