package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities"
)

func TestModelAPIAndPromptCacheKeyFlags(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Equal(t, "", m.Model.API, "automatic by default")
	require.Equal(t, activities.PromptCacheKeyAuto, m.Model.PromptCacheKey)

	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_MODEL_API": "responses", "LONGRUN_PROMPT_CACHE_KEY": "on"}))
	require.NoError(t, err)
	require.Equal(t, activities.ModelAPIResponses, m.Model.API)
	require.Equal(t, activities.PromptCacheKeyOn, m.Model.PromptCacheKey)

	m, err = ParseFlags([]string{"--model-api", "chat", "--prompt-cache-key", "off"}, env(map[string]string{"LONGRUN_MODEL_API": "responses"}))
	require.NoError(t, err)
	require.Equal(t, activities.ModelAPIChat, m.Model.API, "the flag wins over the environment")
	require.Equal(t, activities.PromptCacheKeyOff, m.Model.PromptCacheKey)

	_, err = ParseFlags(nil, env(map[string]string{"LONGRUN_MODEL_API": "completions"}))
	require.ErrorContains(t, err, "LONGRUN_MODEL_API")
	_, err = ParseFlags(nil, env(map[string]string{"LONGRUN_PROMPT_CACHE_KEY": "sometimes"}))
	require.ErrorContains(t, err, "want auto, on or off")
}
