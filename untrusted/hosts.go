package untrusted

import (
	"fmt"
	"regexp"
	"strings"

	"golang.org/x/net/idna"
)

// urlHost finds the host of a URL in rendered text: the scheme, "://",
// any user info, and the host up to a port, path, query or the end. It
// runs on rendered text, so a hidden character in a host is already shown
// as ⟨U+…⟩ and only letters that look alike are left to unmask.
var urlHost = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@\s]*@)?([^/?#:\s\[\]"'<>\x60]+)`)

// annotateHosts puts the punycode of every host that is not ASCII beside
// it: "https://gооgle.com/x" reads "https://gооgle.com ⟨xn--ggle-55da.com⟩/x",
// so Cyrillic o's cannot pass for Latin ones.
func annotateHosts(s string) string {
	if isASCII(s) {
		return s
	}
	ms := urlHost.FindAllStringSubmatchIndex(s, -1)
	if ms == nil {
		return s
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		host := s[m[2]:m[3]]
		if isASCII(host) {
			continue
		}
		b.WriteString(s[last:m[3]])
		b.WriteString(" ⟨" + Punycode(host) + "⟩")
		last = m[3]
	}
	b.WriteString(s[last:])
	return b.String()
}

// Punycode is host as DNS sees it (its IDNA ASCII form); a host IDNA
// refuses is shown letter by letter as code points, which is at least
// unambiguous.
func Punycode(host string) string {
	if a, err := idna.Lookup.ToASCII(host); err == nil && a != "" {
		return a
	}
	if a, err := idna.Punycode.ToASCII(host); err == nil && a != "" {
		return a
	}
	var b strings.Builder
	for _, r := range host {
		if r < 0x80 {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "⟨U+%04X⟩", r)
		}
	}
	return b.String()
}

// Host is a host as a person should read it: itself when ASCII, else its
// Unicode form (made visible) with its punycode beside it.
func Host(host string) string {
	if isASCII(host) {
		return Line(host)
	}
	return render(host, line) + " ⟨" + Punycode(host) + "⟩"
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
