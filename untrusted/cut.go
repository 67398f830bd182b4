package untrusted

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Cut is what a surface that cannot show all of a text left out of it.
type Cut struct {
	Bytes int `json:"bytes"` // bytes of the original text not shown
	Lines int `json:"lines"` // of them, the lines (newlines) not shown
}

// Plus is c and d together: a text cut twice (where it was recorded, then
// where it is shown) hides both.
func (c Cut) Plus(d Cut) Cut { return Cut{Bytes: c.Bytes + d.Bytes, Lines: c.Lines + d.Lines} }

// None reports whether nothing was left out.
func (c Cut) None() bool { return c.Bytes == 0 }

// String says how much is hidden: "21,034 more bytes, 150 more lines
// hidden"; "" when nothing is.
func (c Cut) String() string {
	switch {
	case c.Bytes == 0:
		return ""
	case c.Lines == 0:
		return fmt.Sprintf("%s more %s hidden", Count(c.Bytes), plural(c.Bytes, "byte"))
	}
	return fmt.Sprintf("%s more %s, %s more %s hidden", Count(c.Bytes), plural(c.Bytes, "byte"), Count(c.Lines), plural(c.Lines, "line"))
}

// Note is the line a surface shows where it cut: "… 21,034 more bytes,
// 150 more lines hidden; see: longrun show --full s1", hint being where
// the whole text is; "" when nothing was cut.
func (c Cut) Note(hint string) string {
	if c.None() {
		return ""
	}
	if hint == "" {
		return "… " + c.String()
	}
	return "… " + c.String() + "; " + hint
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Head keeps at most maxBytes bytes of s (ending on a character) and at
// most maxLines lines (0: no bound on either), and says what it left out.
// It cuts the original text, so the count is of what the text really
// holds, before any rendering.
func Head(s string, maxBytes, maxLines int) (string, Cut) {
	n := len(s)
	if maxLines > 0 {
		at, lines := 0, 0
		for at < len(s) && lines < maxLines {
			i := strings.IndexByte(s[at:], '\n')
			if i < 0 {
				at = len(s)
				break
			}
			at += i + 1
			lines++
		}
		n = min(n, at)
		if lines == maxLines && n > 0 && s[n-1] == '\n' {
			n-- // the last kept line's newline goes with the cut
		}
	}
	if maxBytes > 0 && n > maxBytes {
		n = maxBytes
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
	}
	if n >= len(s) {
		return s, Cut{}
	}
	rest := s[n:]
	return s[:n], Cut{Bytes: len(rest), Lines: strings.Count(rest, "\n")}
}

// Preview is s on one line (Line), cut to about maxBytes of the original
// with the count of what is hidden and hint after it.
func Preview(s string, maxBytes int, hint string) string {
	head, c := Head(strings.TrimSpace(s), maxBytes, 0)
	if c.None() {
		return Line(head)
	}
	return Line(head) + " " + c.Note(hint)
}
