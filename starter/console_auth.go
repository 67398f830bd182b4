package main

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
)

// consoleCookie holds a browser's login: a random login id and its MAC
// under the token (consoleAuth.loginCookie), never the token itself, so a
// leaked cookie is not the bearer token scripts use, each login has its
// own CSRF token, and a console restarted with the same --token-file keeps
// its browsers logged in.
const consoleCookie = "longrun_console"

// How a request proved who it is. A bearer header is never sent by a
// browser on its own, so a bearer request cannot be a forged cross-site
// form post and needs no CSRF token; a cookie or a proxy's header is sent
// with any request the browser makes, so those POSTs need one.
type authVia int

const (
	viaNone authVia = iota
	viaBearer
	viaCookie
	viaProxy
)

// consoleAuth decides who may use the console. Either a token (every
// request carries it as a bearer, or a cookie the login page set from it),
// or a header a reverse proxy in front sets to the person it authenticated
// (--trusted-proxy-header), optionally with the token as well, so that a
// connection that bypasses the proxy cannot forge the header.
type consoleAuth struct {
	token       string   // never empty
	proxyHeader string   // canonical header name; empty: token auth
	origins     []string // extra origins a POST may come from (behind a proxy)
	// key signs the CSRF tokens: random per process, so a form from before
	// a restart is refused and reloading the page gives a fresh one.
	key []byte
}

// consoleAuthOptions are the console's auth flags.
type consoleAuthOptions struct {
	tokenFile   string
	proxyHeader string
	origins     []string
	listen      string
}

// newConsoleAuth checks the auth flags and returns the auth they ask for,
// and the token when this console generated it (the caller prints it).
// A console on an address other machines reach always has a token: a
// proxy header alone is forged by anyone who connects directly.
func newConsoleAuth(o consoleAuthOptions) (au *consoleAuth, generated string, err error) {
	au = &consoleAuth{key: make([]byte, 32)}
	_, _ = rand.Read(au.key) // crypto/rand.Read never fails on supported platforms
	for _, org := range o.origins {
		if !strings.HasPrefix(org, "http://") && !strings.HasPrefix(org, "https://") || strings.HasSuffix(org, "/") {
			return nil, "", usagef("--origin %q: want scheme://host[:port] as the browser sends it, e.g. https://longrun.example.com", org)
		}
	}
	au.origins = o.origins
	if o.tokenFile != "" {
		if au.token, err = readTokenFile(o.tokenFile); err != nil {
			return nil, "", err
		}
	}
	if o.proxyHeader != "" {
		if !validHeaderName(o.proxyHeader) {
			return nil, "", usagef("--trusted-proxy-header %q is not a header name", o.proxyHeader)
		}
		au.proxyHeader = textproto.CanonicalMIMEHeaderKey(o.proxyHeader)
		// Without a token the header alone is the login, and anything
		// that reaches the port sends it: another machine on a public
		// address, any local process (or a page that rebinds a name to
		// this machine) on loopback.
		if au.token == "" {
			where := "on loopback any local process, or a web page the person visits that rebinds its name to 127.0.0.1, could send it"
			if !loopback(o.listen) {
				where = "anyone who connects directly could send it"
			}
			return nil, "", usagef("--trusted-proxy-header %s on %s without --token-file: %s; give --token-file F and have the proxy send "+
				"'Authorization: Bearer <the token in F>' with every request", au.proxyHeader, o.listen, where)
		}
		return au, "", nil
	}
	if au.token == "" {
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		au.token = hex.EncodeToString(b)
		generated = au.token
	}
	return au, generated, nil
}

// validHeaderName accepts an HTTP token (RFC 9110), so a typo such as a
// trailing colon is caught at start, not as every request refused.
func validHeaderName(s string) bool {
	return s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r))
	}) < 0
}

// identity is who sent a request and how they proved it.
type identity struct {
	who string // for the page and the log: the proxy's user, or "token"
	// login tells one login from another for the CSRF token: the
	// cookie's login id, or the proxy's user.
	login string
	via   authVia
}

// identify says who sent r; via is viaNone when the request is not
// authenticated.
func (au *consoleAuth) identify(r *http.Request) identity {
	bearer := au.token != "" && bearerMatches(r.Header.Get("Authorization"), au.token)
	if au.proxyHeader != "" {
		user := strings.TrimSpace(r.Header.Get(au.proxyHeader))
		if user == "" || au.token != "" && !bearer {
			return identity{}
		}
		return identity{who: user, login: "proxy\x00" + user, via: viaProxy}
	}
	if bearer {
		return identity{who: "token", via: viaBearer}
	}
	if c, err := r.Cookie(consoleCookie); err == nil {
		id, mac, ok := strings.Cut(c.Value, ".")
		if ok && id != "" && equalSecret(mac, au.cookieMAC(id)) {
			return identity{who: "token", login: "cookie\x00" + id, via: viaCookie}
		}
	}
	return identity{}
}

// bearerMatches compares "Bearer TOKEN" with token in constant time.
func bearerMatches(header, token string) bool {
	got, ok := strings.CutPrefix(header, "Bearer ")
	return ok && equalSecret(strings.TrimSpace(got), token)
}

// equalSecret compares in constant time, so a secret cannot be guessed a
// byte at a time from response times.
func equalSecret(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// cookieMAC proves a login id was issued by a console holding the token.
func (au *consoleAuth) cookieMAC(id string) string {
	return hexMAC([]byte(au.token), "longrun console login\x00"+id)
}

// csrfToken is the token every form of a login's pages carries: a MAC of
// the login (the cookie's id, the proxied person), so it is per session
// and a page on another site can neither read nor compute it.
func (au *consoleAuth) csrfToken(login string) string {
	return hexMAC(au.key, "csrf\x00"+login)
}

func hexMAC(key []byte, msg string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// checkPost refuses a state-changing request a browser could have been
// tricked into sending: it must come from this console's own origin (the
// Origin header, or the Referer when a browser sends no Origin) and, unless
// it carried the bearer token, carry the CSRF token of who sent it. The
// error says which, for the page.
func (au *consoleAuth) checkPost(r *http.Request, id identity) error {
	if id.via == viaBearer {
		return nil
	}
	if err := au.checkOrigin(r); err != nil {
		return err
	}
	if !equalSecret(r.PostFormValue("csrf"), au.csrfToken(id.login)) {
		return fmt.Errorf("the form's CSRF token is missing or stale: reload the page and try again")
	}
	return nil
}

// checkOrigin accepts a POST whose Origin (or Referer) is this console as
// the browser addressed it, or one of --origin.
func (au *consoleAuth) checkOrigin(r *http.Request) error {
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		ref, err := url.Parse(r.Header.Get("Referer"))
		if err != nil || ref.Host == "" {
			return fmt.Errorf("the request names no origin (no Origin or Referer header); a browser always sends one, a script should use the bearer token")
		}
		origin = ref.Scheme + "://" + ref.Host
	}
	if slices.Contains(au.origins, origin) {
		return nil
	}
	u, err := url.Parse(origin)
	if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host == r.Host {
		return nil
	}
	return fmt.Errorf("the request comes from %s, not from this console (%s); behind a proxy that changes the host, start the console with --origin", origin, r.Host)
}

// setLoginCookie logs the browser in: the cookie is sent only to this
// console (SameSite strict), never readable by scripts, and only over
// TLS when the console is served over TLS.
func (au *consoleAuth) setLoginCookie(w http.ResponseWriter, r *http.Request) {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	id := hex.EncodeToString(b)
	http.SetCookie(w, &http.Cookie{
		Name:     consoleCookie,
		Value:    id + "." + au.cookieMAC(id),
		Path:     "/",
		HttpOnly: true,
		Secure:   r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https",
		SameSite: http.SameSiteStrictMode,
		MaxAge:   30 * 24 * 3600,
	})
}
