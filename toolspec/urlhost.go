package toolspec

import (
	"net/url"
	"strings"

	"golang.org/x/net/idna"
)

// URLHost is the permission subject of a URL: its host in lower case, in
// its ASCII (punycode) form, without port, brackets or trailing dot. A
// string with no host is returned as it is, so a rule remembered from it
// matches only it.
func URLHost(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || u.Hostname() == "" {
		return raw
	}
	return NormalHost(u.Hostname())
}

// NormalHost is a host name as the address rules match it: lower case,
// ASCII (punycode), without a trailing dot.
func NormalHost(h string) string {
	h = strings.TrimRight(strings.ToLower(h), ".")
	if a, err := idna.Lookup.ToASCII(h); err == nil {
		h = a
	}
	return h
}
