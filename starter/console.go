package main

import (
	"context"
	"embed"
	"flag"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/longrun/longrun/hostcheck"
	"github.com/longrun/longrun/untrusted"
)

// EnvConsoleTokenFile names the console's token file when --token-file is
// not given.
const EnvConsoleTokenFile = "LONGRUN_CONSOLE_TOKEN_FILE"

// consoleFiles are the console's templates, script and style sheet.
//
//go:embed console
var consoleFiles embed.FS

// consoleTemplates parses the page templates once. html/template escapes
// every value by its context: tool arguments, results and messages are
// the model's text, hostile by assumption, and must never become markup.
// Escaping is not enough for what a person reads: "line" (untrusted.Token)
// shows an id, a tool's name or a reason on one line with its control,
// bidi and zero-width characters visible; the views do the same for
// longer text (untrusted.Visible). "weburl" (untrusted.WebURL) says
// whether a URL a worker reported (a pull request's) may be an href: an
// http(s) URL of printable ASCII; any other is shown as text.
var consoleTemplates = template.Must(template.New("").Funcs(template.FuncMap{"form": newCallForm, "line": untrusted.Token, "weburl": untrusted.WebURL}).ParseFS(consoleFiles, "console/*.html"))

// callForm is what the template of one waiting call needs: the call, the
// session it waits in, the page's CSRF token, and which page to go back to.
type callForm struct {
	CSRF, Session, Back string
	Call                pendingView
}

func newCallForm(csrf, session, back string, p pendingView) callForm {
	return callForm{CSRF: csrf, Session: session, Back: back, Call: p}
}

// Bounds on the console's calls to Temporal, so a page loads in seconds
// even when a session's worker is down (its queries then time out).
const (
	consoleQueryTimeout = 5 * time.Second
	consoleMaxSessions  = 100 // most waiting sessions the inbox lists
	consoleMaxMessages  = 200 // most recent messages a session page shows
	consolePollInterval = 2 * time.Second
	consoleFlashCookie  = "longrun_flash"
	consoleMaxForm      = 1 << 20
)

// cmdConsole serves the approval inbox: every session waiting for a
// person, its calls with their edits and patches as diffs, buttons that
// decide them through the approve update, and each session's
// conversation, live. It uses the same Temporal settings (and payload
// keys) as every other command.
func (a *app) cmdConsole(ctx context.Context, fs *flag.FlagSet, args []string) error {
	listen := fs.String("listen", "127.0.0.1:8082", "address to serve on (a non-loopback address needs a token)")
	tokenFile := fs.String("token-file", a.getenv(EnvConsoleTokenFile), "file holding the token (default: a new one, printed at start; env "+EnvConsoleTokenFile+")")
	proxyHeader := fs.String("trusted-proxy-header", "", "trust this header, set by a reverse proxy in front, as the authenticated person (e.g. X-Forwarded-User); only on loopback unless --token-file is given too")
	var origins stringList
	fs.Var(&origins, "origin", "another origin forms may be posted from, e.g. a proxy's https://longrun.example.com (repeatable); its host is allowed as with --allowed-host")
	var hosts stringList
	fs.Var(&hosts, "allowed-host", "a host name the console answers to besides localhost and loopback addresses, as browsers send it in Host (e.g. longrun.example.com; repeatable): any other is refused, so DNS rebinding cannot reach it")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	auth, generated, err := newConsoleAuth(consoleAuthOptions{tokenFile: *tokenFile, proxyHeader: *proxyHeader, origins: origins, listen: *listen})
	if err != nil {
		return err
	}
	policy, err := consoleHosts(*listen, hosts, origins)
	if err != nil {
		return usagef("%v", err)
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", *listen, err)
	}
	srv := &http.Server{Handler: hostcheck.Wrap(policy, newConsole(a, c, auth).handler()), ReadHeaderTimeout: 10 * time.Second}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(a.stdout, "console on %s (Temporal %s, namespace %s)\n", base, a.cfg.Address, a.cfg.Namespace)
	switch {
	case auth.proxyHeader != "":
		fmt.Fprintf(a.stdout, "trusting %s from the reverse proxy in front", auth.proxyHeader)
		if auth.token != "" {
			fmt.Fprintf(a.stdout, ", with the token of %s as its bearer", *tokenFile)
		}
		fmt.Fprintln(a.stdout)
	case generated != "":
		fmt.Fprintf(a.stdout, "open %s/login#token=%s\n(a new token each start; give --token-file to keep one)\n", base, generated)
	default:
		fmt.Fprintf(a.stdout, "open %s/login and give the token in %s (or open %s/login#token=TOKEN)\n", base, *tokenFile, base)
	}
	return serveUntil(ctx, srv, ln, "console")
}

// consoleHosts is the Host policy of a console on listen: loopback names,
// the --allowed-host names, and the hosts of --origin, which name where a
// proxy in front publishes the console.
func consoleHosts(listen string, hosts, origins []string) (hostcheck.Policy, error) {
	allowed := slices.Clone(hosts)
	for _, o := range origins {
		if u, err := url.Parse(o); err == nil && u.Host != "" {
			allowed = append(allowed, u.Host)
		}
	}
	return hostcheck.New(listen, allowed, "--allowed-host")
}

// console is the web app: the app for its settings and decisions, one
// Temporal client, and the auth in front of every page.
type console struct {
	a    *app
	c    sessionClient
	auth *consoleAuth
}

func newConsole(a *app, c sessionClient, auth *consoleAuth) *console {
	return &console{a: a, c: c, auth: auth}
}

// handler routes the console's pages, each behind authentication.
func (s *console) handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(consoleFiles, "console") // the embedded directory exists
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	mux.HandleFunc("GET /login", s.loginPage)
	mux.HandleFunc("POST /login", s.login)
	mux.HandleFunc("GET /{$}", s.authed(s.inbox))
	mux.HandleFunc("GET /pending", s.authed(s.pendingKeys))
	mux.HandleFunc("GET /session", s.authed(s.session))
	mux.HandleFunc("GET /session/live", s.authed(s.live))
	mux.HandleFunc("GET /session/events", s.authed(s.sessionEvents))
	mux.HandleFunc("POST /decide", s.authed(s.decide))
	mux.HandleFunc("POST /apply", s.authed(s.apply))
	mux.HandleFunc("POST /discard", s.authed(s.discard))
	return securityHeaders(mux)
}

// securityHeaders keeps the pages to their own script and style (a
// hostile string that slipped past escaping still could not run), out of
// frames, and their forms posting only here.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("X-Frame-Options", "DENY")
		// same-origin, not no-referrer: with no-referrer a browser sends
		// "Origin: null" on a form post and the origin check could not
		// tell our own forms from anyone's.
		hd.Set("Referrer-Policy", "same-origin")
		hd.Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

// request is what an authenticated page handler gets: who asked and the
// CSRF token its forms carry.
type request struct {
	who  string
	csrf string
	// author is the name a decision from this request carries
	// (Approval.Author, shown under "Approved" in a pull request): the
	// person the reverse proxy authenticated, or with the console's token
	// the login of the user running the console, whose token it is.
	author string
}

// authed lets authenticated requests through: a page without a login
// goes to the login page, anything else is refused; every POST passes the
// CSRF checks.
func (s *console) authed(h func(w http.ResponseWriter, r *http.Request, rq request)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		id := s.auth.identify(r)
		if id.via == viaNone {
			if s.auth.proxyHeader != "" {
				http.Error(w, fmt.Sprintf("not authenticated: this console trusts %s from its reverse proxy, and this request came without it (or without the proxy's token)", s.auth.proxyHeader), http.StatusUnauthorized)
				return
			}
			if r.Method == http.MethodGet && (r.URL.Path == "/" || r.URL.Path == "/session") {
				// Back here after the login: a notification's link
				// to a session opens that session.
				http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusSeeOther)
				return
			}
			w.Header().Set("WWW-Authenticate", `Bearer realm="longrun console"`)
			http.Error(w, "not logged in: open the login URL the console printed, or send 'Authorization: Bearer TOKEN'", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost {
			r.Body = http.MaxBytesReader(w, r.Body, consoleMaxForm)
			if err := s.auth.checkPost(r, id); err != nil {
				http.Error(w, "refused: "+err.Error(), http.StatusForbidden)
				return
			}
		}
		author := localAuthor()
		if id.via == viaProxy {
			author = id.who
		}
		h(w, r, request{who: id.who, csrf: s.auth.csrfToken(id.login), author: author})
	}
}

// page is what every page template gets.
type page struct {
	Title     string
	Namespace string
	CSRF      string
	Who       string
	Flash     string
	FlashErr  bool
	Data      any
}

func (s *console) render(w http.ResponseWriter, status int, name string, p page) {
	p.Namespace = s.a.cfg.Namespace
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := consoleTemplates.ExecuteTemplate(w, name, p); err != nil {
		// Headers are gone; say so in the page and in the log.
		fmt.Fprintf(s.a.stderr, "console: render %s: %v\n", name, err)
		_, _ = io.WriteString(w, "\n<p>error rendering this page; see the console's log</p>")
	}
}

func (s *console) loginPage(w http.ResponseWriter, r *http.Request) {
	if s.auth.proxyHeader != "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	s.render(w, http.StatusOK, "login.html", page{Title: "log in", Data: localPath(r.URL.Query().Get("next"))})
}

// localPath is next when it is a path on this console, else "/": the
// login must never send a browser to another site.
func localPath(next string) string {
	if !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

// login exchanges the token for the login cookie. The login URL carries
// the token after '#', which the browser never sends nor logs: the page's
// script posts it here.
func (s *console) login(w http.ResponseWriter, r *http.Request) {
	if s.auth.proxyHeader != "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, consoleMaxForm)
	if err := s.auth.checkOrigin(r); err != nil {
		http.Error(w, "refused: "+err.Error(), http.StatusForbidden)
		return
	}
	if !equalSecret(strings.TrimSpace(r.PostFormValue("token")), s.auth.token) {
		s.render(w, http.StatusUnauthorized, "login.html", page{Title: "log in", Flash: "that is not this console's token", FlashErr: true,
			Data: localPath(r.PostFormValue("next"))})
		return
	}
	s.auth.setLoginCookie(w, r)
	http.Redirect(w, r, localPath(r.PostFormValue("next")), http.StatusSeeOther)
}
