package untrusted

import (
	"net/url"
	"strings"
)

// WebURL reports whether s is a URL a page may link to as it is: http or
// https, with a host, no user info (https://forge.example@evil.example
// reads as the first host), and nothing but printable ASCII, so no space,
// control, bidi or homoglyph character can hide in it. A pull request's
// URL comes from a forge's answer: anything else is shown as text, never
// linked.
func WebURL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	u, err := url.Parse(s)
	if err != nil || u.User != nil || u.Host == "" || u.Opaque != "" {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https"
}

// linkSafe are the characters a Markdown link's destination keeps as
// they are; any other is percent-encoded, so none can end the
// destination (")", "<", ">"), start a title, a code span or an escape.
const linkSafe = "-._~:/?#@!$&+,;=%*"

// MarkdownLink is s as a Markdown link to itself when it is a WebURL,
// its text escaped (MarkdownText) and its destination with every
// character but letters, digits and linkSafe percent-encoded; otherwise
// it is MarkdownText(s): shown on one line, inert, not linked.
func MarkdownLink(s string) string {
	if !WebURL(s) {
		return MarkdownText(s)
	}
	var dest strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(linkSafe, c) >= 0 {
			dest.WriteByte(c)
		} else {
			dest.WriteString(url.QueryEscape(string(c)))
		}
	}
	return "[" + MarkdownText(s) + "](" + dest.String() + ")"
}
