package untrusted

import (
	"fmt"
	"strings"
)

// MarkdownText is s as Markdown text that means only itself: rendered on
// one line (Line), so it cannot start a line of its own (no heading, list,
// quote or fence), with every character that makes structure within a
// line backslash escaped: emphasis, code, links and images, HTML and
// entities, strikethrough, table cells, math.
func MarkdownText(s string) string {
	return escapePunct(Line(s))
}

func escapePunct(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.IndexByte("\\`*_[]<>!&~|#$", c) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// MarkdownCode is s as an inline code span, on one line, whose fence is
// longer than any run of backticks in it: nothing in it is Markdown, and
// it cannot end the span.
func MarkdownCode(s string) string {
	v := Line(s)
	fence := strings.Repeat("`", longestRun(v, '`')+1)
	if v == "" || v[0] == '`' || v[len(v)-1] == '`' || v[0] == ' ' && v[len(v)-1] == ' ' {
		v = " " + v + " " // CommonMark strips one space each side
	}
	return fence + v + fence
}

// MarkdownBlock is s as a fenced code block (with info, e.g. "sh"), made
// visible (Visible), whose fence is longer than any run of backticks in
// it, so no line of s can close it. It starts and ends on lines of its own.
func MarkdownBlock(s, info string) string {
	v := strings.TrimRight(Visible(s), "\n")
	fence := strings.Repeat("`", max(3, longestRun(v, '`')+1))
	return fmt.Sprintf("\n%s%s\n%s\n%s\n", fence, info, v, fence)
}

func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}

// Slack's mrkdwn has no escape but for &, < and >, which make links and
// mentions (<!channel>, <@U1>, <http://x|label>): those are always
// escaped. A backtick is shown as ⟨U+0060⟩ inside code, since it would
// end the code and let the rest be formatted.
var slackReplacer = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "`", "⟨U+0060⟩")

// SlackCode is s as inline code in Slack's mrkdwn, on one line: no
// mention, link or formatting can come of it.
func SlackCode(s string) string {
	v := Line(s)
	if v == "" {
		return "` `"
	}
	return "`" + slackReplacer.Replace(v) + "`"
}

// SlackBlock is s as a preformatted block in Slack's mrkdwn, made visible.
func SlackBlock(s string) string {
	return "```" + slackReplacer.Replace(strings.TrimRight(Visible(s), "\n")) + "```"
}
