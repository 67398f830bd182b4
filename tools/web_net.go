package tools

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// WebConfig configures web_fetch and web_search; the worker fills it from
// its flags (--web-*) and environment (LONGRUN_WEB_*).
type WebConfig struct {
	// Timeout bounds one fetch: connecting, every redirect and reading
	// the body. Zero is DefaultWebTimeout.
	Timeout time.Duration
	// MaxBytes is the most bytes of a response body read; the rest is
	// never downloaded. Zero is DefaultWebMaxBytes.
	MaxBytes int64
	// OutputLimit is the most bytes of text (Markdown, plain text, JSON)
	// one call returns to the model; the model pages on with offset.
	// Zero is DefaultWebOutputLimit, the read tool's cap.
	OutputLimit int
	// MaxRedirects is how many redirects within one host a fetch follows.
	// Zero is DefaultWebMaxRedirects.
	MaxRedirects int
	// Allow lists the exceptions to the address rule: networks ("10.0.0.0/8"),
	// single addresses ("127.0.0.1") or one address and port
	// ("127.0.0.1:8080", "[::1]:8080") the tools may connect to although
	// they are private, loopback or otherwise not public. Checked with
	// ParseWebAllow by the worker.
	Allow []string
	// Proxy is an http:// or https:// proxy every request goes through;
	// empty means none. The environment's HTTP_PROXY is never used: a
	// proxy nobody configured for Longrun would see every page.
	Proxy string
	// Search configures web_search; without a URL the tool is absent.
	Search WebSearchConfig

	// hosts, in tests, resolves names to addresses before dialing, as
	// /etc/hosts would: the address rule then judges the address a name
	// leads to, which is what a rebinding DNS server would hand out.
	hosts map[string]string
}

// Defaults of WebConfig.
const (
	DefaultWebTimeout      = 30 * time.Second
	DefaultWebMaxBytes     = 5 << 20
	DefaultWebOutputLimit  = readMaxOutput
	DefaultWebMaxRedirects = 5
)

// withDefaults fills the zero fields.
func (c WebConfig) withDefaults() WebConfig {
	if c.Timeout <= 0 {
		c.Timeout = DefaultWebTimeout
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultWebMaxBytes
	}
	if c.OutputLimit <= 0 {
		c.OutputLimit = DefaultWebOutputLimit
	}
	if c.MaxRedirects <= 0 {
		c.MaxRedirects = DefaultWebMaxRedirects
	}
	return c
}

// addrPolicy is the address rule: which IP addresses the web tools may
// connect to. It is applied to the address each connection is actually
// made to (net.Dialer.ControlContext), after name resolution, so a name
// that resolves to a private address, or is rebound to one between two
// lookups, is refused like the address itself.
type addrPolicy struct {
	nets  []netip.Prefix
	ports []netip.AddrPort
}

// ParseWebAllow checks the address rule's exceptions (WebConfig.Allow)
// and returns the first bad entry's error.
func ParseWebAllow(entries []string) error {
	_, err := newAddrPolicy(entries)
	return err
}

func newAddrPolicy(entries []string) (addrPolicy, error) {
	var p addrPolicy
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if pre, err := netip.ParsePrefix(e); err == nil {
			p.nets = append(p.nets, pre.Masked())
			continue
		}
		if a, err := netip.ParseAddr(e); err == nil {
			p.nets = append(p.nets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		if ap, err := netip.ParseAddrPort(e); err == nil {
			p.ports = append(p.ports, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
			continue
		}
		return p, fmt.Errorf("web address exception %q: want a network (10.0.0.0/8), an address (127.0.0.1) or an address and port (127.0.0.1:8080, [::1]:8080)", e)
	}
	return p, nil
}

// allowed reports whether the policy lets a connection to ap through.
func (p addrPolicy) allowed(ap netip.AddrPort) bool {
	a := ap.Addr().Unmap()
	for _, x := range p.ports {
		if x.Addr() == a && x.Port() == ap.Port() {
			return true
		}
	}
	for _, n := range p.nets {
		if n.Contains(a) {
			return true
		}
	}
	return nonPublic(a) == ""
}

// nonPublicNets are ranges that are not the public internet besides those
// netip classifies (loopback, private, link-local, multicast,
// unspecified): shared address space (CGNAT), IETF protocol assignments,
// documentation and benchmarking ranges, reserved and broadcast, and
// their IPv6 counterparts.
var nonPublicNets = []struct {
	net  netip.Prefix
	what string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "a \"this network\" address"},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("192.0.2.0/24"), "a documentation address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("198.51.100.0/24"), "a documentation address"},
	{netip.MustParsePrefix("203.0.113.0/24"), "a documentation address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved address"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "a local NAT64 address"},
	{netip.MustParsePrefix("100::/64"), "a discard address"},
	{netip.MustParsePrefix("2001:db8::/32"), "a documentation address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
}

// nonPublic says what kind of non-public address a is, or "" for a
// public one. An IPv6 address that embeds an IPv4 one (mapped, NAT64,
// 6to4) is judged by the IPv4 address it leads to.
func nonPublic(a netip.Addr) string {
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case netip.MustParsePrefix("64:ff9b::/96").Contains(a):
			return nonPublic(netip.AddrFrom4([4]byte(b[12:16])))
		case netip.MustParsePrefix("2002::/16").Contains(a):
			return nonPublic(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address (cloud metadata services live there)"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsMulticast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast():
		return "a multicast address"
	case a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "the broadcast address"
	}
	for _, n := range nonPublicNets {
		if n.net.Contains(a) {
			return n.what
		}
	}
	return ""
}

// AddrRefusedError is a connection the address rule refused.
type AddrRefusedError struct {
	Addr netip.AddrPort
	What string // "a loopback address", ...
}

func (e *AddrRefusedError) Error() string {
	return fmt.Sprintf("%s is %s, which the web tools do not connect to (the worker's --web-allow can make an exception)", e.Addr.Addr(), e.What)
}

// control is the dialer's ControlContext: it runs after the name is
// resolved, on the very address about to be connected to.
func (p addrPolicy) control(_ context.Context, network, address string, _ syscall.RawConn) error {
	if !strings.HasPrefix(network, "tcp") {
		return fmt.Errorf("web: network %s refused: only TCP", network)
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("web: connect to %s: not an IP address and port", address)
	}
	if p.allowed(ap) {
		return nil
	}
	return &AddrRefusedError{Addr: ap, What: nonPublic(ap.Addr())}
}

// webTransport is the HTTP transport of the web tools: connections
// checked by the address rule, no proxy from the environment, HTTP/2 where
// the server offers it.
func webTransport(cfg WebConfig) (*http.Transport, error) {
	policy, err := newAddrPolicy(cfg.Allow)
	if err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, ControlContext: policy.control}
	dial := d.DialContext
	if cfg.hosts != nil {
		dial = func(ctx context.Context, network, address string) (net.Conn, error) {
			if h, port, err := net.SplitHostPort(address); err == nil && cfg.hosts[h] != "" {
				address = net.JoinHostPort(cfg.hosts[h], port)
			}
			return d.DialContext(ctx, network, address)
		}
	}
	t := &http.Transport{
		DialContext:           dial,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: cfg.Timeout,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
	}
	if cfg.Proxy != "" {
		u, err := url.Parse(cfg.Proxy)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("web proxy %q: want http://host:port or https://host:port", cfg.Proxy)
		}
		// Every connection then goes to the proxy the person named, so
		// the dialer checks nothing; the proxy connects to the pages,
		// and the address rule is its to enforce (see checkURL for what
		// Longrun still refuses).
		t.Proxy = http.ProxyURL(u)
		t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	return t, nil
}

// checkURL refuses what is never fetched: a scheme other than http and
// https, no host, credentials in the URL, and (for a proxy, which the
// dialer cannot check) a host that is a non-public IP address.
func checkURL(u *url.URL, policy addrPolicy, proxied bool) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("only http and https URLs are fetched, not %q", u.Scheme+":")
	}
	if u.Hostname() == "" {
		return errors.New("the URL has no host")
	}
	if u.User != nil {
		return errors.New("the URL carries a user name or password; they are not sent: leave them out")
	}
	if a, err := netip.ParseAddr(u.Hostname()); err == nil && proxied {
		port := uint64(80)
		if u.Scheme == "https" {
			port = 443
		}
		if p, err := strconv.ParseUint(u.Port(), 10, 16); err == nil {
			port = p
		}
		ap := netip.AddrPortFrom(a.Unmap(), uint16(port))
		if !policy.allowed(ap) {
			return &AddrRefusedError{Addr: ap, What: nonPublic(a)}
		}
	}
	return nil
}
