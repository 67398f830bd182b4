package untrusted

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestVisible(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, in, want string }{
		{"plain", "go test ./...", "go test ./..."},
		{"CR and erase line after a comment", "touch x #\r\x1b[2Kgo test ./...", `touch x #\r\x1b[2Kgo test ./...`},
		{"OSC 52 clipboard", "\x1b]52;c;YXBwcm92ZQ==\x07", `\x1b]52;c;YXBwcm92ZQ==\x07`},
		{"OSC 8 link", "\x1b]8;;http://evil/\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;http://evil/\x1b\click\x1b]8;;\x1b\`},
		{"C1 CSI", "a\u009b2Jb", "a⟨U+009B⟩2Jb"},
		{"bidi override", "echo hi \u202e; touch x", "echo hi ⟨U+202E⟩; touch x"},
		{"isolates and marks", "\u2066\u2069\u200e\u200f\u061c", "⟨U+2066⟩⟨U+2069⟩⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩"},
		{"zero width", "c\u200ba\u200cl\u200dl\u2060\ufeff", "c⟨U+200B⟩a⟨U+200C⟩l⟨U+200D⟩l⟨U+2060⟩⟨U+FEFF⟩"},
		{"tags", "a\U000E0041b", "a⟨U+E0041⟩b"},
		{"not UTF-8", "a\xffb", `a\xffb`},
		{"DEL", "a\x7fb", `a\x7fb`},
		{"lines and tabs kept", "a\n\tb\r\nc", "a\n\tb\nc"},
		{"a tail after spaces", "go test" + strings.Repeat(" ", 21000) + "; touch x", "go test⟨21,000 spaces⟩; touch x"},
		{"a tail after newlines", "go test" + strings.Repeat("\n", 150) + "touch x", "go test\n⟨149 empty lines⟩\ntouch x"},
		{"a few newlines stay", "a\n\n\nb", "a\n\n\nb"},
		{"homoglyph host", "https://gооgle.com/x", "https://gооgle.com ⟨xn--ggle-55da.com⟩/x"},
		{"ascii host", "https://google.com/x", "https://google.com/x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, Visible(tc.in))
		})
	}
}

func TestLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, `a ↵ b\tc`, Line("  a\nb\tc\n"))
	require.Equal(t, "a ↵ ⟨149 empty lines⟩ ↵ b", Line("a"+strings.Repeat("\n", 150)+"b"))
	require.Equal(t, " c1\\x1b ", Token(" c1\x1b "))
}

func TestHead(t *testing.T) {
	t.Parallel()
	s := "line1\nline2\nline3\n"
	h, c := Head(s, 0, 2)
	require.Equal(t, "line1\nline2", h)
	require.Equal(t, Cut{Bytes: 7, Lines: 2}, c)
	require.Equal(t, "… 7 more bytes, 2 more lines hidden; see x", c.Note("see x"))
	h, c = Head("héllo", 2, 0)
	require.Equal(t, "h", h)
	require.Equal(t, 5, c.Bytes)
	h, c = Head(s, 100, 5)
	require.Equal(t, s, h)
	require.True(t, c.None())
	require.Equal(t, "", c.Note("x"))
	long := "go test ./..." + strings.Repeat(" ", 21000) + "; touch x"
	require.Equal(t, "go test ./... … 21,002 more bytes hidden; longrun pending --full s", Preview(long, 20, "longrun pending --full s"))
	require.Equal(t, "21,034", Count(21034))
	require.Equal(t, "1,000,000", Count(1000000))
	require.Equal(t, "999", Count(999))
}

func TestMarkdown(t *testing.T) {
	t.Parallel()
	id := "c1`\n### ✅ Reviewed by security: safe\n[Approve in one click](http://evil/) <!channel>"
	got := MarkdownText(id)
	require.NotContains(t, got, "\n")
	require.Contains(t, got, `\#\#\# ✅ Reviewed by security: safe`)
	require.Contains(t, got, `\[Approve in one click\](http://evil/) \<\!channel\>`)
	require.Equal(t, "``c1` ↵ x``", MarkdownCode("c1`\nx"))
	require.Equal(t, "`a`", MarkdownCode("a"))
	b := MarkdownBlock("x\n```\n# not a heading", "sh")
	require.Equal(t, "\n````sh\nx\n```\n# not a heading\n````\n", b)
	s := SlackCode(id)
	require.NotContains(t, s, "<")
	require.NotContains(t, s, "\n")
	require.Equal(t, 2, strings.Count(s, "`"), "only the span's own backticks")
	require.Contains(t, s, "&lt;!channel&gt;")
	sb := SlackBlock("```\n*bold* <!here>")
	require.Equal(t, "```⟨U+0060⟩⟨U+0060⟩⟨U+0060⟩\n*bold* &lt;!here&gt;```", sb)
}

func TestHost(t *testing.T) {
	t.Parallel()
	require.Equal(t, "example.com", Host("example.com"))
	require.Equal(t, "gооgle.com ⟨xn--ggle-55da.com⟩", Host("gооgle.com"))
	require.Equal(t, "https://user@bücher.de ⟨xn--bcher-kva.de⟩:8080/", Visible("https://user@bücher.de:8080/"))
}

// FuzzVisible: whatever the text, the terminal forms are valid UTF-8 and
// hold no control character (but newline and tab in Visible) and no
// hidden character, so no escape sequence, bidi control or zero-width
// character reaches a screen; the Markdown and Slack forms stay on one
// line.
func FuzzVisible(f *testing.F) {
	for _, s := range []string{"", "a\x1b[2Jb", "\x1b]52;c;eA==\x07", "x\u202ey", "\xff\xfe", "http://gооgle.com/", "a\r\nb", strings.Repeat(" ", 40) + "x", "`a``b`", "\n\n\n\n\n\n\nz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, out := range map[string]string{"Visible": Visible(s), "Line": Line(s), "Token": Token(s), "MarkdownCode": MarkdownCode(s), "SlackCode": SlackCode(s), "MarkdownText": MarkdownText(s)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%s(%q) = %q: not UTF-8", name, s, out)
			}
			for _, r := range out {
				if Hidden(r) && !(name == "Visible" && (r == '\n' || r == '\t')) {
					t.Fatalf("%s(%q) = %q holds %U", name, s, out, r)
				}
			}
		}
		if h, c := Head(s, 10, 2); len(h)+c.Bytes != len(s) || !strings.HasPrefix(s, h) {
			t.Fatalf("Head(%q) = %q, %+v: does not account for the text", s, h, c)
		}
	})
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	_, ok := ShellQuote("go test ./...")
	require.False(t, ok)
	q, ok := ShellQuote("c1\x1b[2J'\u202e\xff")
	require.True(t, ok)
	require.Equal(t, `$'c1\x1b[2J\'\u202e\xff'`, q)
	out, err := exec.Command("bash", "-c", "printf %s "+q).Output()
	require.NoError(t, err)
	require.Equal(t, "c1\x1b[2J'\u202e\xff", string(out), "bash reads back the exact string")
}

func TestShellWord(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"s-1/c17":        "s-1/c17",
		"it's here":      `'it'\''s here'`,
		"":               "''",
		"c1\x1b[2J":      `$'c1\x1b[2J'`,
		"a\u202eb c":     `$'a\u202eb c'`,
		"localhost:7233": "localhost:7233",
	} {
		q := ShellWord(in)
		require.Equal(t, want, q, "ShellWord(%q)", in)
		out, err := exec.Command("bash", "-c", "printf %s "+q).Output()
		require.NoError(t, err)
		require.Equal(t, in, string(out), "bash reads back %q as one exact word", in)
	}
}

func TestJSON(t *testing.T) {
	t.Parallel()
	in := map[string]string{"a": "x\u202ey\u009b\U000E0041\u200b é"}
	raw, err := json.Marshal(in)
	require.NoError(t, err)
	got := JSON(raw)
	require.Equal(t, `{"a":"x\u202ey\u009b\udb40\udc41\u200b é"}`, string(got))
	var back map[string]string
	require.NoError(t, json.Unmarshal(got, &back))
	require.Equal(t, in, back, "the same value")
}
