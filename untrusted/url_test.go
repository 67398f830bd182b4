package untrusted

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWebURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   string
		want bool
	}{
		{"https", "https://github.com/acme/app/pull/7", true},
		{"http with a port", "http://127.0.0.1:8080/acme/app/pull/1", true},
		{"javascript", "javascript:alert(1)", false},
		{"javascript upper case", "JAVASCRIPT:alert(1)", false},
		{"data", "data:text/html,<script>alert(1)</script>", false},
		{"no host", "https:///x", false},
		{"relative", "/acme/app/pull/7", false},
		{"user info", "https://github.com@evil.example/pull/7", false},
		{"newline", "https://x/)\n# Approve", false},
		{"space", "https://x/ y", false},
		{"escape sequence", "https://x/\x1b]8;;http://evil/\x1b\\", false},
		{"bidi control", "https://x/\u202Ecod.exe", false},
		{"homoglyph host", "https://gіthub.com/acme/app/pull/7", false},
		{"empty", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, WebURL(tc.in), "%q", tc.in)
		})
	}
}

func TestMarkdownLink(t *testing.T) {
	t.Parallel()
	require.Equal(t, "[https://github.com/acme/app/pull/7](https://github.com/acme/app/pull/7)",
		MarkdownLink("https://github.com/acme/app/pull/7"))
	require.Equal(t, "[http://x/a\\_b?q=1\\&r=2](http://x/a_b?q=1&r=2)", MarkdownLink("http://x/a_b?q=1&r=2"))

	// Shown, not linked: no link, no line of its own, no markup.
	for _, in := range []string{"javascript:alert(1)", "https://x/)\n# Approve", "https://x/\x1b[2K\rok", "[a](javascript:alert(1))"} {
		got := MarkdownLink(in)
		require.Equal(t, MarkdownText(in), got, "%q", in)
		require.NotContains(t, got, "\n")
		require.NotContains(t, got, "\x1b")
		require.NotRegexp(t, `(^|[^\\])\]\(`, got, "no unescaped link")
	}
	require.Equal(t, `https://x/) ↵ \# Approve`, MarkdownLink("https://x/)\n# Approve"))

	// A web URL whose characters would end the destination or make
	// markup: they are encoded there, escaped in the text.
	got := MarkdownLink("https://x/)[Approve](javascript:alert(1))<b>`c`")
	require.Equal(t, `[https://x/)\[Approve\](javascript:alert(1))\<b\>\`+"`c\\`"+`](https://x/%29%5BApprove%5D%28javascript:alert%281%29%29%3Cb%3E%60c%60)`, got)
	dest := got[strings.LastIndex(got, "](")+2 : len(got)-1]
	require.NotContains(t, dest, ")")
	require.NotContains(t, dest, "(")
}
