// Package untrusted is the one renderer for text a person did not write:
// the model's text, a call's arguments and id, tool output, file contents,
// hosts. Every surface that shows such text to a person (the CLI on a
// terminal, the console's pages, the Web UI's details, Slack, a webhook,
// the guardian's evidence) renders it here, so what a person sees is what
// runs: a control sequence cannot move the cursor, erase a line, set the
// title, write the clipboard or plant a link; a bidi control cannot
// reorder a command; a zero-width character cannot hide in a name; a
// homoglyph host shows its punycode; Markdown and Slack formatting cannot
// be forged; and nothing is cut without saying how much is hidden.
//
// Plain Go with no Temporal import: the workflow renders the Web UI's
// details with it, deterministically.
package untrusted

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Runs of whitespace at least this long are shown as a count: a tail after
// 21,000 spaces or 150 newlines must still be on the screen.
const (
	minSpaceRun   = 32
	minNewlineRun = 6
)

// mode is what a rendering keeps of the text's layout.
type mode int

const (
	block mode = iota // newlines and tabs kept
	line              // everything on one line
)

// Visible is s with every character a screen would not show as itself made
// visible, keeping its lines and tabs: C0 and C1 controls, DEL and bytes
// that are not UTF-8 as `\x1b`, `\r`, `\x9b`; bidi controls, zero-width
// and other invisible format characters as `⟨U+202E⟩`; long runs of spaces
// or empty lines as their count. A CR before a newline is dropped (it
// moves nothing a newline does not). Hosts in URLs that are not ASCII get
// their punycode beside them. The result is valid UTF-8 with no control
// character but newline and tab: safe on a terminal, and for a page or a
// message once escaped for it.
func Visible(s string) string { return render(s, block) }

// Line is Visible on one line: a newline shows as " ↵ ", a tab as `\t`,
// and leading and trailing white space is trimmed (it hides nothing). For
// a listing's cell, an id, a title: nothing in it can start a new line or
// a column.
func Line(s string) string {
	return render(strings.Trim(s, " \t\r\n"), line)
}

// Token is s on one line, like Line but untrimmed: for an id, which is
// shown between brackets, so spaces at its ends show.
func Token(s string) string { return render(s, line) }

func spaces(n int) string { return fmt.Sprintf("⟨%s spaces⟩", Count(n)) }

func render(s string, m mode) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' && m == block:
			n := whitespaceRun(s[i:], m == block)
			if n >= minSpaceRun {
				b.WriteString(spaces(n))
			} else {
				b.WriteString(s[i : i+n])
			}
			i += n
			continue
		case c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			i++ // the newline is shown next
			continue
		case c == '\n':
			nl := "\n"
			if m == line {
				nl = " ↵ "
			}
			if n := newlineRun(s[i:]); n.lines >= minNewlineRun {
				fmt.Fprintf(&b, "%s⟨%s empty lines⟩%s", nl, Count(n.lines-1), nl)
				i += n.bytes
				continue
			}
			b.WriteString(nl)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c < utf8.RuneSelf:
			b.WriteByte(c)
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				fmt.Fprintf(&b, `\x%02x`, c)
				i++
				continue
			}
			if Hidden(r) {
				fmt.Fprintf(&b, "⟨U+%04X⟩", r)
			} else {
				b.WriteString(s[i : i+size])
			}
			i += size
			continue
		}
		i++
	}
	return annotateHosts(b.String())
}

// whitespaceRun is the length of the run of spaces (and tabs, with tabs)
// s starts with.
func whitespaceRun(s string, tabs bool) int {
	n := 0
	for n < len(s) && (s[n] == ' ' || tabs && s[n] == '\t') {
		n++
	}
	return n
}

type run struct{ lines, bytes int }

// newlineRun counts the newlines s starts with, and the blank lines after
// them (spaces, tabs and CRs only), as one run.
func newlineRun(s string) run {
	r := run{}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\n':
			r.lines++
			r.bytes = i + 1
		case ' ', '\t', '\r':
		default:
			return r
		}
	}
	return r
}

// Hidden reports whether r is a character a screen does not show as
// itself: a control (C0, DEL, C1), a format character (bidi controls
// U+202A–202E and U+2066–2069, the marks U+200E, U+200F and U+061C,
// zero-width U+200B–200D, U+2060, U+FEFF, soft hyphen, tags), a line or
// paragraph separator, or a filler that draws as blank (U+115F, U+1160,
// U+3164, U+FFA0). Newline and tab are controls too: Visible keeps them.
func Hidden(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x115f, r == 0x1160, r == 0x3164, r == 0xffa0:
		return true
	}
	return unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp) ||
		r >= 0xfff9 && r <= 0xfffb || r >= 0xe0000 && r <= 0xe007f
}

// Count writes n with thousands separators: 21,034.
func Count(n int) string {
	s := fmt.Sprint(n)
	if n < 0 {
		return s
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
