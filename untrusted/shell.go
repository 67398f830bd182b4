package untrusted

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ShellQuote quotes s for bash or zsh as $'...' with every control, hidden
// or non-UTF-8 character written as an escape (\x1b, \u202e), when s holds
// any: the command a person copies is exact, and reads as it runs. ok is
// false when s holds none and the caller's own quoting fits.
func ShellQuote(s string) (quoted string, ok bool) {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, Hidden) {
		return "", false
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x80 && Hidden(r):
			fmt.Fprintf(&b, `\x%02x`, r)
		case Hidden(r) && r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		case Hidden(r):
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteString("'")
	return b.String(), true
}

// plainWord is a word a shell reads as it is, unquoted.
var plainWord = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// ShellWord quotes s as one word for a POSIX shell when it needs it: as
// it is when plain, in single quotes otherwise, and as bash's $'...' with
// escapes (ShellQuote) when it holds a control or hidden character, so
// the command a person copies reads as it runs. The notifications and
// the session's details in the Web UI print commands with it.
func ShellWord(s string) string {
	if q, ok := ShellQuote(s); ok {
		return q
	}
	if plainWord.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
