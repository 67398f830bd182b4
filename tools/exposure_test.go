package tools

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEditToolsFor(t *testing.T) {
	t.Parallel()
	patchOnly := []string{EditName, WriteName} // hidden when the model gets apply_patch
	editWrite := []string{PatchName}           // hidden when the model gets edit and write
	cases := []struct {
		model string
		hide  []string
	}{
		{"gpt-5", patchOnly},
		{"gpt-5-codex", patchOnly},
		{"gpt-5.1-mini", patchOnly},
		{"openai/gpt-5", patchOnly},
		{"GPT-5", patchOnly},
		{"openrouter/openai/gpt-5-codex", patchOnly},
		{"gpt-4.1", editWrite},
		{"gpt-4o", editWrite},
		{"openai/gpt-4.1-mini", editWrite},
		{"gpt-oss-20b", editWrite},
		{"openai/gpt-oss-120b", editWrite},
		{"qwen3-coder", editWrite},
		{"llama3.1:8b", editWrite},
		{"claude-sonnet-4", editWrite},
		{"", editWrite},
		// The provider prefix is not part of the id: "gpt-4" in it must not
		// take apply_patch away from a gpt-5 behind it.
		{"gpt-4-proxy/gpt-5", patchOnly},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.hide, EditToolsFor(tc.model))
		})
	}
}
