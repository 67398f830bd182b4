// Package hostcheck is the one Host-header check in front of every HTTP
// service Longrun runs (the console, the codec server, the worker's
// metrics, the embedded server's Web UI and its API).
//
// A service on loopback is not out of a browser's reach: a page the person
// visits can make its own host name resolve to 127.0.0.1 (DNS rebinding),
// and its scripts then talk to the service as a same-origin page. What
// such a request cannot forge is the Host header: the browser sends the
// attacker's name. So a service answers only requests addressed to a
// name it knows as its own: a loopback name or address, the address it
// listens on, or a host the operator configured. Everything else gets 421
// Misdirected Request with a body that says how to allow a host.
//
// It is its own module, with the standard library only, because the
// devserver module cannot import Longrun's main module (their Temporal
// API versions differ) and there must be one check, not two copies.
package hostcheck

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Policy says which Host values a service answers. Its zero value allows
// loopback names and addresses only.
type Policy struct {
	// allowed are the configured hosts, lower case; a port of "" matches
	// any port.
	allowed []hostPort
	// anyIP allows a Host that is an IP literal: set when the service
	// listens on every interface, where machines address it by IP. An IP
	// literal cannot come from DNS rebinding, which needs a name.
	anyIP bool
	// flag names the option that allows another host, for the refusal.
	flag string
	// refused, when set, is told of each request Wrap refuses.
	refused func(*http.Request)
}

// Logging returns the policy with f told of each request Wrap refuses,
// before the refusal is written: a service whose every refusal must be
// in its log says so there.
func (p Policy) Logging(f func(*http.Request)) Policy {
	p.refused = f
	return p
}

type hostPort struct{ host, port string }

// New returns the policy of a service listening on listen (host:port)
// with the configured hosts allowed (each "name" or "name:port", as a
// browser sends it in Host; a bare name allows every port). flag is the
// option an operator gives to allow another host (e.g. "--allowed-host"),
// named in the refusal. The listen address's own host is allowed; a
// wildcard listen address (":8081", "0.0.0.0", "[::]") allows any IP
// literal, since other machines then reach the service by its addresses.
func New(listen string, allowed []string, flag string) (Policy, error) {
	p := Policy{flag: flag}
	for _, a := range allowed {
		hp, err := parseAllowed(a)
		if err != nil {
			return Policy{}, fmt.Errorf("%s %q: %w", flag, a, err)
		}
		p.allowed = append(p.allowed, hp)
	}
	if listen != "" {
		host, _, err := net.SplitHostPort(listen)
		if err != nil {
			return Policy{}, fmt.Errorf("listen address %q: %w", listen, err)
		}
		if ip, err := netip.ParseAddr(host); host == "" || err == nil && ip.IsUnspecified() {
			p.anyIP = true
		} else if host != "" {
			p.allowed = append(p.allowed, hostPort{host: strings.ToLower(host)})
		}
	}
	return p, nil
}

// parseAllowed reads one configured host: a name or address, optionally
// with a port, never a URL (a scheme or path is a mistake worth saying).
func parseAllowed(s string) (hostPort, error) {
	if s == "" || strings.ContainsAny(s, "/@ ") {
		return hostPort{}, fmt.Errorf("want a host name as a browser sends it in Host, e.g. longrun.example.com or longrun.example.com:8443, not a URL")
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		host, port = strings.Trim(s, "[]"), ""
	}
	if host == "" {
		return hostPort{}, fmt.Errorf("no host name")
	}
	return hostPort{host: strings.ToLower(host), port: port}, nil
}

// Allows reports whether a request with this Host header is addressed to
// the service.
func (p Policy) Allows(hostHeader string) bool {
	host, port, err := net.SplitHostPort(hostHeader)
	if err != nil {
		host, port = hostHeader, ""
	}
	host = strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if host == "" {
		return false
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap() // [::ffff:127.0.0.1] is 127.0.0.1
		if ip.Zone() != "" {
			return false
		}
		if ip.IsLoopback() || p.anyIP {
			return true
		}
	} else if host == "localhost" {
		// Any port: an ssh -L forward or a proxy on this machine changes
		// the port the browser sees, and a rebinding page cannot send
		// "localhost" as its Host.
		return true
	}
	for _, a := range p.allowed {
		if a.host == host && (a.port == "" || a.port == port) {
			return true
		}
	}
	return false
}

// Wrap answers only requests whose Host the policy allows; any other gets
// 421 Misdirected Request and a body naming the host and the fix.
func Wrap(p Policy, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.Allows(r.Host) {
			if p.refused != nil {
				p.refused(r)
			}
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(http.StatusMisdirectedRequest)
			fmt.Fprintf(w, "refused: this service does not answer to the host %q (a page that rebinds its own name to this machine's address sends such a host); "+
				"open it as localhost or 127.0.0.1, or start it with %s NAME to allow that name\n", r.Host, p.flagName())
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (p Policy) flagName() string {
	if p.flag == "" {
		return "--allowed-host"
	}
	return p.flag
}
