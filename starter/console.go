package main

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/longrun/longrun/workflows"
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
var consoleTemplates = template.Must(template.New("").Funcs(template.FuncMap{"form": newCallForm}).ParseFS(consoleFiles, "console/*.html"))

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
	fs.Var(&origins, "origin", "another origin forms may be posted from, e.g. a proxy's https://longrun.example.com (repeatable)")
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
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", *listen, err)
	}
	srv := &http.Server{Handler: newConsole(a, c, auth).handler(), ReadHeaderTimeout: 10 * time.Second}
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
	mux.HandleFunc("POST /decide", s.authed(s.decide))
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
		h(w, r, request{who: id.who, csrf: s.auth.csrfToken(id.login)})
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

// inboxEntry is one waiting session in the inbox.
type inboxEntry struct {
	Row     sessionRow
	Pending []pendingView
	Err     string
}

// waitingSessions finds the sessions waiting for a person through the
// visibility store (as `list --waiting` does) and asks each for its
// pending calls, all at once, each bounded: one session without a worker
// must not hold up the page.
func (s *console) waitingSessions(ctx context.Context) ([]inboxEntry, error) {
	rows, err := s.a.listSessions(ctx, s.c, listQuery(listOptions{waiting: true}), consoleMaxSessions)
	if err != nil {
		return nil, err
	}
	out := make([]inboxEntry, len(rows))
	var wg sync.WaitGroup
	for i, row := range rows {
		out[i].Row = row
		wg.Go(func() {
			qctx, cancel := context.WithTimeout(ctx, consoleQueryTimeout)
			defer cancel()
			p, err := s.a.queryPending(qctx, s.c, row.ID)
			if err != nil {
				out[i].Err = err.Error()
				return
			}
			out[i].Pending = pendingViews(p)
		})
	}
	wg.Wait()
	// A session whose calls were decided since the visibility store was
	// written has nothing left to show.
	kept := out[:0]
	for _, e := range out {
		if len(e.Pending) > 0 || e.Err != "" {
			kept = append(kept, e)
		}
	}
	return kept, nil
}

func (s *console) inbox(w http.ResponseWriter, r *http.Request, rq request) {
	flash, isErr := s.takeFlash(w, r)
	entries, err := s.waitingSessions(r.Context())
	p := page{Title: "inbox", CSRF: rq.csrf, Who: rq.who, Flash: flash, FlashErr: isErr}
	if err != nil {
		p.Flash, p.FlashErr = err.Error(), true
	}
	p.Data = struct {
		Entries []inboxEntry
		Keys    string
	}{entries, pendingKeyList(entries)}
	s.render(w, http.StatusOK, "inbox.html", p)
}

// pendingKeys answers the inbox's script with the waiting calls as one
// line, so the page reloads when they change and not otherwise (a
// reload would lose feedback being typed).
func (s *console) pendingKeys(w http.ResponseWriter, r *http.Request, _ request) {
	entries, err := s.waitingSessions(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = io.WriteString(w, pendingKeyList(entries))
}

func pendingKeyList(entries []inboxEntry) string {
	var keys []string
	for _, e := range entries {
		for _, p := range e.Pending {
			keys = append(keys, e.Row.ID+"/"+p.CallID)
		}
	}
	return strings.Join(keys, " ")
}

// sessionData is a session page: its state, its waiting calls and its
// conversation.
type sessionData struct {
	ID         string
	Status     statusView
	Pending    []pendingView
	PendingErr string
	Keys       string
	Messages   []messageView
	MessageErr string
	Done       bool // the execution has closed: nothing more will come
	Every      int  // milliseconds between refreshes
}

func (s *console) sessionData(ctx context.Context, id string) sessionData {
	d := sessionData{ID: id, Every: int(consolePollInterval / time.Millisecond)}
	qctx, cancel := context.WithTimeout(ctx, consoleQueryTimeout)
	defer cancel()
	if desc, err := s.c.DescribeWorkflowExecution(qctx, id, ""); err != nil {
		d.Status.Err = sessionError(err, "describe", id, s.a.cfg.Namespace).Error()
	} else {
		st := desc.GetWorkflowExecutionInfo().GetStatus().String()
		d.Status.Execution = statusName(st)
		d.Done = d.Status.Execution != "running"
	}
	if d.Status.Err == "" {
		if st, err := s.a.queryStatus(qctx, s.c, id); err != nil {
			d.Status.Err = err.Error()
		} else {
			d.Status.Status = &st
		}
	}
	if p, err := s.a.queryPending(qctx, s.c, id); err != nil {
		d.PendingErr = err.Error()
	} else {
		d.Pending = pendingViews(p)
		var keys []string
		for _, c := range p {
			keys = append(keys, id+"/"+c.CallID)
		}
		d.Keys = strings.Join(keys, " ")
	}
	if msgs, err := s.a.queryConversation(qctx, s.c, id); err != nil {
		d.MessageErr = err.Error()
	} else {
		d.Messages = messageViews(msgs)
	}
	return d
}

func (s *console) session(w http.ResponseWriter, r *http.Request, rq request) {
	id := r.URL.Query().Get("id")
	if id == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	flash, isErr := s.takeFlash(w, r)
	d := s.sessionData(r.Context(), id)
	s.render(w, http.StatusOK, "session.html", page{Title: id, CSRF: rq.csrf, Who: rq.who, Flash: flash, FlashErr: isErr, Data: d})
}

// live is the part of a session page its script refreshes: the state and
// the conversation. The waiting calls go in a header: the page reloads
// when they change rather than replace forms a person may be typing in.
func (s *console) live(w http.ResponseWriter, r *http.Request, rq request) {
	id := r.URL.Query().Get("id")
	d := s.sessionData(r.Context(), id)
	w.Header().Set("X-Longrun-Pending", d.Keys)
	if d.Done {
		w.Header().Set("X-Longrun-Done", "1")
	}
	s.render(w, http.StatusOK, "live", page{CSRF: rq.csrf, Data: d})
}

// Decisions the console's buttons send: approve and deny as the CLI's, and
// remember, which approves and allows the same again for the session.
const decisionRemember = "remember"

// decide sends one decision through the approve update, exactly the
// JSON `approve`/`deny` send, then goes back to the page it came from
// with the outcome.
func (s *console) decide(w http.ResponseWriter, r *http.Request, rq request) {
	id := r.PostFormValue("session")
	callID := r.PostFormValue("call_id")
	decision := r.PostFormValue("decision")
	feedback := strings.TrimSpace(r.PostFormValue("feedback"))
	pattern := strings.TrimSpace(r.PostFormValue("pattern"))
	back := "/"
	if r.PostFormValue("back") == "session" {
		back = "/session?id=" + url.QueryEscape(id)
	}
	ap, err := approvalFromForm(callID, decision, feedback, pattern)
	if err == nil && id == "" {
		err = errors.New("the form names no session")
	}
	if err != nil {
		s.setFlash(w, err.Error(), true)
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	if err := s.a.sendDecision(ctx, s.c, id, ap); err != nil {
		fmt.Fprintf(s.a.stderr, "console: %s's %s of %s in %s: %v\n", rq.who, ap.Decision, callID, id, err)
		s.setFlash(w, err.Error(), true)
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	verb := map[string]string{workflows.DecisionApprove: "approved", workflows.DecisionDeny: "denied", decisionRemember: "approved and remembered"}[decision]
	// The log is the audit trail of who decided what from the console.
	fmt.Fprintf(s.a.stderr, "console: %s %s %s in %s\n", rq.who, verb, callID, id)
	s.setFlash(w, fmt.Sprintf("%s %s in %s", verb, callID, id), false)
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// approvalFromForm checks a decision form the way `approve` and `deny`
// check their flags: a denial needs feedback for the model, a pattern
// counts only when remembered.
func approvalFromForm(callID, decision, feedback, pattern string) (workflows.Approval, error) {
	ap := workflows.Approval{CallID: callID, Feedback: feedback}
	if callID == "" {
		return ap, errors.New("the form names no call")
	}
	switch decision {
	case workflows.DecisionApprove:
		ap.Decision = workflows.DecisionApprove
	case decisionRemember:
		ap.Decision, ap.Remember, ap.Pattern = workflows.DecisionApprove, workflows.RememberSession, pattern
	case workflows.DecisionDeny:
		if feedback == "" {
			return ap, fmt.Errorf("nothing sent: to deny %s, write feedback telling the model why, so it can try something else", callID)
		}
		ap.Decision = workflows.DecisionDeny
	default:
		return ap, fmt.Errorf("unknown decision %q", decision)
	}
	if pattern != "" && decision != decisionRemember {
		return ap, fmt.Errorf("nothing sent: a pattern counts only with \"approve and remember\" (%s was given the pattern %q)", callID, pattern)
	}
	return ap, nil
}

// setFlash keeps a one-line outcome for the next page; a cookie rather
// than a query parameter, so a link cannot make the page say anything.
func (s *console) setFlash(w http.ResponseWriter, msg string, isErr bool) {
	v := "ok:"
	if isErr {
		v = "err:"
	}
	http.SetCookie(w, &http.Cookie{Name: consoleFlashCookie, Value: url.QueryEscape(v + cut(msg, 1000)), Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: 60})
}

// takeFlash reads and clears the outcome setFlash kept.
func (s *console) takeFlash(w http.ResponseWriter, r *http.Request) (string, bool) {
	c, err := r.Cookie(consoleFlashCookie)
	if err != nil {
		return "", false
	}
	http.SetCookie(w, &http.Cookie{Name: consoleFlashCookie, Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	v, err := url.QueryUnescape(c.Value)
	if err != nil {
		return "", false
	}
	if m, ok := strings.CutPrefix(v, "err:"); ok {
		return m, true
	}
	m, _ := strings.CutPrefix(v, "ok:")
	return m, false
}
