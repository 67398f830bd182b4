package main

import (
	"context"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/workflows"
)

// hostile is model-controlled text that would run if a page trusted it.
const hostile = `<script>alert("pwned")</script><img src=x onerror=alert(1)>`

// consoleFake is a session "s1" waiting on two calls: an edit (shown as a
// diff) and a shell command whose arguments and reason carry hostile
// markup, with a conversation that carries it too.
func consoleFake(t *testing.T) *fakeClient {
	return &fakeClient{
		list: func(*workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
			return &workflowservice.ListWorkflowExecutionsResponse{Executions: []*workflowpb.WorkflowExecutionInfo{
				execution(t, "s1", workflows.PhaseWaitingApproval, 2, 2),
			}}, nil
		},
		describe: func(int) (enumspb.WorkflowExecutionStatus, error) {
			return enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
		},
		query: func(name string, _ int) (any, error) {
			switch name {
			case workflows.QueryPendingApprovals:
				return []workflows.PendingApproval{
					{CallID: "c_edit", ID: "c_edit", Tool: "edit", Arguments: `{"path":"hello.txt","old_string":"hello world\n","new_string":"hello longrun\n"}`, Reason: "edit asks"},
					{CallID: "c_sh", ID: "c_sh", Tool: "shell", Arguments: `{"command":"echo '` + strings.ReplaceAll(hostile, `"`, `\"`) + `'"}`, Reason: "because " + hostile},
				}, nil
			case workflows.QueryStatus:
				return workflows.Status{Phase: workflows.PhaseWaitingApproval, Turn: 2, MaxTurns: 10, PendingApprovals: 2}, nil
			case workflows.QueryConversation:
				return []conversation.Message{
					{Role: conversation.RoleUser, Content: "please " + hostile},
					{Role: conversation.RoleAssistant, Content: "sure", ToolCalls: []conversation.ToolCall{{ID: "c_sh", Ref: "c_sh", Name: "shell", Arguments: `{"command":"x"}`}}},
				}, nil
			}
			return nil, errors.New("unexpected query " + name)
		},
	}
}

// consoleServer serves a console over f on an httptest server with the
// token "tok-123" (or the proxy header, with extra args) and returns it.
func consoleServer(t *testing.T, f *fakeClient, o consoleAuthOptions) (*httptest.Server, *consoleAuth) {
	t.Helper()
	if o.tokenFile == "" {
		o.tokenFile = filepath.Join(t.TempDir(), "token")
		require.NoError(t, os.WriteFile(o.tokenFile, []byte("tok-123\n"), 0o600))
	}
	if o.listen == "" {
		o.listen = "127.0.0.1:0"
	}
	auth, _, err := newConsoleAuth(o)
	require.NoError(t, err)
	a := &app{stdout: io.Discard, stderr: io.Discard, getenv: noEnv}
	a.cfg = a.defaultConfig()
	a.cfg.Namespace = "default"
	srv := httptest.NewServer(newConsole(a, f, auth).handler())
	t.Cleanup(srv.Close)
	return srv, auth
}

// browser is an http.Client with cookies that does not follow redirects,
// so a test sees each answer as it is.
func browser(t *testing.T) *http.Client {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func do(t *testing.T, c *http.Client, method, u string, form url.Values, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u, body)
	require.NoError(t, err)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header, string(b)
}

// login logs c in as a browser does after the login URL.
func login(t *testing.T, c *http.Client, base string) {
	t.Helper()
	code, hdr, body := do(t, c, "POST", base+"/login", url.Values{"token": {"tok-123"}}, map[string]string{"Origin": base})
	require.Equal(t, http.StatusSeeOther, code, body)
	require.Equal(t, "/", hdr.Get("Location"))
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// csrfOf reads the CSRF token from the page's forms.
func csrfOf(t *testing.T, page string) string {
	t.Helper()
	m := csrfField.FindStringSubmatch(page)
	require.NotNil(t, m, "no csrf field in the page:\n%s", page)
	return m[1]
}

func TestConsoleTokenAuth(t *testing.T) {
	t.Parallel()
	srv, _ := consoleServer(t, consoleFake(t), consoleAuthOptions{})
	c := browser(t)

	// No login: pages go to the login page, everything else is refused.
	code, hdr, _ := do(t, c, "GET", srv.URL+"/", nil, nil)
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "/login?next=%2F", hdr.Get("Location"))
	code, _, _ = do(t, c, "GET", srv.URL+"/session/live?id=s1", nil, nil)
	require.Equal(t, http.StatusUnauthorized, code)
	code, _, _ = do(t, c, "GET", srv.URL+"/", nil, map[string]string{"Authorization": "Bearer wrong"})
	require.Equal(t, http.StatusSeeOther, code)
	code, _, _ = do(t, c, "GET", srv.URL+"/", nil, map[string]string{"Cookie": consoleCookie + "=tok-123"})
	require.Equal(t, http.StatusSeeOther, code, "the token itself is not the cookie")

	// A wrong token at login is refused with the form again.
	code, _, body := do(t, c, "POST", srv.URL+"/login", url.Values{"token": {"nope"}}, map[string]string{"Origin": srv.URL})
	require.Equal(t, http.StatusUnauthorized, code)
	require.Contains(t, body, "not this console&#39;s token")

	// The bearer works for scripts; the login sets an HttpOnly,
	// SameSite=Strict cookie for browsers.
	code, _, body = do(t, c, "GET", srv.URL+"/", nil, map[string]string{"Authorization": "Bearer tok-123"})
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "c_edit")
	code, hdr, _ = do(t, c, "POST", srv.URL+"/login", url.Values{"token": {"tok-123"}}, map[string]string{"Origin": srv.URL})
	require.Equal(t, http.StatusSeeOther, code)
	setCookie := hdr.Get("Set-Cookie")
	require.Contains(t, setCookie, "HttpOnly")
	require.Contains(t, setCookie, "SameSite=Strict")
	require.NotContains(t, setCookie, "tok-123")
	code, hdr, body = do(t, c, "GET", srv.URL+"/", nil, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, hdr.Get("Content-Security-Policy"), "script-src 'self'")
	require.Contains(t, body, "s1")
}

// A link to a session (from a notification) opens it after the login,
// and the login never sends the browser to another site.
func TestConsoleLoginKeepsTheLinkedPage(t *testing.T) {
	t.Parallel()
	srv, _ := consoleServer(t, consoleFake(t), consoleAuthOptions{})
	c := browser(t)
	code, hdr, _ := do(t, c, "GET", srv.URL+"/session?id=s1", nil, nil)
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "/login?next=%2Fsession%3Fid%3Ds1", hdr.Get("Location"))
	_, _, body := do(t, c, "GET", srv.URL+hdr.Get("Location"), nil, nil)
	require.Contains(t, body, `name="next" value="/session?id=s1"`)
	code, hdr, _ = do(t, c, "POST", srv.URL+"/login", url.Values{"token": {"tok-123"}, "next": {"/session?id=s1"}}, map[string]string{"Origin": srv.URL})
	require.Equal(t, http.StatusSeeOther, code)
	require.Equal(t, "/session?id=s1", hdr.Get("Location"))
	for _, next := range []string{"//evil.example/x", "https://evil.example", `/\evil.example`, ""} {
		code, hdr, _ = do(t, browser(t), "POST", srv.URL+"/login", url.Values{"token": {"tok-123"}, "next": {next}}, map[string]string{"Origin": srv.URL})
		require.Equal(t, http.StatusSeeOther, code)
		require.Equal(t, "/", hdr.Get("Location"), next)
	}
}

func TestConsoleCSRF(t *testing.T) {
	t.Parallel()
	f := consoleFake(t)
	srv, _ := consoleServer(t, f, consoleAuthOptions{})
	c := browser(t)
	login(t, c, srv.URL)
	_, _, page := do(t, c, "GET", srv.URL+"/", nil, nil)
	csrf := csrfOf(t, page)
	// Each login has its own token.
	other := browser(t)
	login(t, other, srv.URL)
	_, _, page = do(t, other, "GET", srv.URL+"/", nil, nil)
	otherCSRF := csrfOf(t, page)
	require.NotEqual(t, csrf, otherCSRF)
	form := func(token string) url.Values {
		return url.Values{"csrf": {token}, "session": {"s1"}, "id": {"c_edit"}, "decision": {"approve"}}
	}
	for _, tc := range []struct {
		name string
		form url.Values
		hdr  map[string]string
		want string
	}{
		{"no csrf token", form(""), map[string]string{"Origin": srv.URL}, "CSRF token is missing or stale"},
		{"a made-up token", form(strings.Repeat("0", 64)), map[string]string{"Origin": srv.URL}, "CSRF token is missing or stale"},
		{"another login's token", form(otherCSRF), map[string]string{"Origin": srv.URL}, "CSRF token is missing or stale"},
		{"another origin", form(csrf), map[string]string{"Origin": "http://evil.example"}, "comes from http://evil.example"},
		{"origin null", form(csrf), map[string]string{"Origin": "null"}, "names no origin"},
		{"no origin nor referer", form(csrf), nil, "names no origin"},
		{"referer of another site", form(csrf), map[string]string{"Referer": "http://evil.example/x"}, "comes from http://evil.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, body := do(t, c, "POST", srv.URL+"/decide", tc.form, tc.hdr)
			require.Equal(t, http.StatusForbidden, code, body)
			require.Contains(t, body, tc.want)
		})
	}
	require.Empty(t, f.signals, "a refused form must send nothing")

	// The page's own form, from its own origin, sends the approve update.
	code, hdr, body := do(t, c, "POST", srv.URL+"/decide", form(csrf), map[string]string{"Origin": srv.URL})
	require.Equal(t, http.StatusSeeOther, code, body)
	require.Equal(t, "/", hdr.Get("Location"))
	require.Len(t, f.signals, 1)
	require.Equal(t, workflows.UpdateApprove, f.signals[0].name)
	require.Equal(t, workflows.Approval{ID: "c_edit", Decision: workflows.DecisionApprove, Author: localAuthor()}, f.signals[0].arg,
		"a decision with the console's token carries the login of the user running the console")
	_, _, page = do(t, c, "GET", srv.URL+"/", nil, nil)
	require.Contains(t, page, "approved c_edit in s1")

	// A script with the bearer needs no CSRF token (a browser never sends
	// a bearer on its own) and no origin.
	code, _, body = do(t, browser(t), "POST", srv.URL+"/decide",
		url.Values{"session": {"s1"}, "id": {"c_sh"}, "decision": {"deny"}, "feedback": {"not that"}},
		map[string]string{"Authorization": "Bearer tok-123"})
	require.Equal(t, http.StatusSeeOther, code, body)
	require.Equal(t, workflows.Approval{ID: "c_sh", Decision: workflows.DecisionDeny, Feedback: "not that", Author: localAuthor()}, f.signals[1].arg)
}

func TestConsoleDecisions(t *testing.T) {
	t.Parallel()
	f := consoleFake(t)
	srv, _ := consoleServer(t, f, consoleAuthOptions{})
	c := browser(t)
	login(t, c, srv.URL)
	_, _, page := do(t, c, "GET", srv.URL+"/session?id=s1", nil, nil)
	csrf := csrfOf(t, page)
	post := func(v url.Values) string {
		t.Helper()
		v.Set("csrf", csrf)
		v.Set("session", "s1")
		v.Set("back", "session")
		code, hdr, body := do(t, c, "POST", srv.URL+"/decide", v, map[string]string{"Origin": srv.URL})
		require.Equal(t, http.StatusSeeOther, code, body)
		require.Equal(t, "/session?id=s1", hdr.Get("Location"))
		_, _, page := do(t, c, "GET", srv.URL+"/session?id=s1", nil, nil)
		return page
	}

	// A denial without feedback is refused before anything is sent.
	page = post(url.Values{"id": {"c_sh"}, "decision": {"deny"}, "feedback": {"  "}})
	require.Contains(t, page, "write feedback telling the model why")
	page = post(url.Values{"id": {"c_sh"}, "decision": {"approve"}, "pattern": {"echo *"}})
	require.Contains(t, page, "a pattern counts only with")
	require.Empty(t, f.signals)

	post(url.Values{"id": {"c_sh"}, "decision": {"remember"}, "pattern": {"echo *"}})
	post(url.Values{"id": {"c_edit"}, "decision": {"deny"}, "feedback": {"use docs/ instead"}})
	require.Equal(t, []any{
		workflows.Approval{ID: "c_sh", Decision: workflows.DecisionApprove, Remember: workflows.RememberSession, Pattern: "echo *", Author: localAuthor()},
		workflows.Approval{ID: "c_edit", Decision: workflows.DecisionDeny, Feedback: "use docs/ instead", Author: localAuthor()},
	}, []any{f.signals[0].arg, f.signals[1].arg})

	// The session's refusal (decided meanwhile) is shown, not lost.
	f.updateErr = func(any) error { return errors.New("call c_edit is not waiting for approval") }
	page = post(url.Values{"id": {"c_edit"}, "decision": {"approve"}})
	require.Contains(t, page, "refused the approve of c_edit")
	require.Contains(t, page, "not waiting for approval")
}

// Model-controlled text (arguments, reasons, messages) is escaped on every
// page: the browser shows it, never runs it.
func TestConsoleEscapesModelText(t *testing.T) {
	t.Parallel()
	srv, _ := consoleServer(t, consoleFake(t), consoleAuthOptions{})
	c := browser(t)
	login(t, c, srv.URL)
	for _, path := range []string{"/", "/session?id=s1", "/session/live?id=s1"} {
		code, _, body := do(t, c, "GET", srv.URL+path, nil, nil)
		require.Equal(t, http.StatusOK, code, body)
		require.NotContains(t, body, "<script>alert", path)
		require.NotContains(t, body, "<img src=x", path)
		require.NotContains(t, body, "<script>", path)
	}
	_, _, body := do(t, c, "GET", srv.URL+"/", nil, nil)
	require.Contains(t, body, `&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;`)
	require.Contains(t, body, `because &lt;script&gt;`)
	_, _, body = do(t, c, "GET", srv.URL+"/session/live?id=s1", nil, nil)
	require.Contains(t, body, `please &lt;script&gt;`)
	// The only scripts are the console's own file.
	_, _, body = do(t, c, "GET", srv.URL+"/session?id=s1", nil, nil)
	require.Equal(t, 1, strings.Count(body, "<script"), body)
	require.Contains(t, body, `<script src="/static/console.js" defer></script>`)
}

// An edit's old and new strings show as one diff; a patch as its lines.
func TestConsoleRendersEditAsDiff(t *testing.T) {
	t.Parallel()
	srv, _ := consoleServer(t, consoleFake(t), consoleAuthOptions{})
	c := browser(t)
	login(t, c, srv.URL)
	_, _, body := do(t, c, "GET", srv.URL+"/", nil, nil)
	require.Contains(t, body, `<span class="l del">-hello world</span>`)
	require.Contains(t, body, `<span class="l add">&#43;hello longrun</span>`)
	require.Contains(t, body, `<span class="l file">--- a/hello.txt</span>`)
	require.Contains(t, body, "edit asks")

	f := argumentFields("apply_patch", `{"patch":"*** Begin Patch\n*** Update File: a.go\n@@\n-old\n+new\n ctx\n*** End Patch"}`, 0)
	require.Len(t, f, 1)
	require.Equal(t, []lineView{{diffFile, "*** Begin Patch"}, {diffFile, "*** Update File: a.go"}, {diffHunk, "@@"},
		{diffDel, "-old"}, {diffAdd, "+new"}, {diffContext, " ctx"}, {diffFile, "*** End Patch"}}, f[0].Diff)
	require.Equal(t, []fieldView{{Key: "arguments", Text: "not json"}}, argumentFields("shell", "not json", 0))
}

func TestConsoleTrustedProxyHeader(t *testing.T) {
	t.Parallel()
	f := consoleFake(t)
	// The proxy sends the token as its bearer (tok-123, consoleServer's)
	// and the person it authenticated in the header.
	proxy := func(user string) map[string]string {
		return map[string]string{"X-Forwarded-User": user, "Authorization": "Bearer tok-123"}
	}
	srv, _ := consoleServer(t, f, consoleAuthOptions{proxyHeader: "x-forwarded-user"})
	c := browser(t)
	code, _, body := do(t, c, "GET", srv.URL+"/", nil, map[string]string{"Authorization": "Bearer tok-123"})
	require.Equal(t, http.StatusUnauthorized, code)
	require.Contains(t, body, "X-Forwarded-User")
	code, _, body = do(t, c, "GET", srv.URL+"/", nil, proxy("alice"))
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "signed in: alice")
	csrf := csrfOf(t, body)

	// The header is a browser's login like a cookie: POSTs need the CSRF
	// token, and it is alice's own.
	v := url.Values{"csrf": {csrf}, "session": {"s1"}, "id": {"c_edit"}, "decision": {"approve"}}
	withOrigin := func(h map[string]string) map[string]string { h["Origin"] = srv.URL; return h }
	code, _, _ = do(t, c, "POST", srv.URL+"/decide", v, withOrigin(proxy("mallory")))
	require.Equal(t, http.StatusForbidden, code)
	code, _, _ = do(t, c, "POST", srv.URL+"/decide", v, withOrigin(proxy("alice")))
	require.Equal(t, http.StatusSeeOther, code)
	require.Len(t, f.signals, 1)
	require.Equal(t, "alice", f.signals[0].arg.(workflows.Approval).Author, "the decision carries the person the proxy authenticated")

	// The header counts only with the proxy's bearer, on any address.
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("proxy-secret"), 0o600))
	srv2, _ := consoleServer(t, f, consoleAuthOptions{proxyHeader: "X-Forwarded-User", tokenFile: tokenFile, listen: "0.0.0.0:0"})
	code, _, _ = do(t, c, "GET", srv2.URL+"/", nil, map[string]string{"X-Forwarded-User": "alice"})
	require.Equal(t, http.StatusUnauthorized, code)
	code, _, _ = do(t, c, "GET", srv2.URL+"/", nil, map[string]string{"X-Forwarded-User": "alice", "Authorization": "Bearer proxy-secret"})
	require.Equal(t, http.StatusOK, code)
}

// A console on loopback trusting a proxy's header with no token would let
// any local process, or a page that rebinds its name to 127.0.0.1, send
// the header and approve calls (issue 28, finding 5): it does not start.
func TestConsoleTrustedProxyHeaderNeedsATokenOnLoopback(t *testing.T) {
	t.Parallel()
	code, _, stderr := runFake(t, &fakeClient{}, "console", "--trusted-proxy-header", "X-Forwarded-User", "--listen", "127.0.0.1:0")
	require.NotEqual(t, exitOK, code)
	require.Contains(t, stderr, "--trusted-proxy-header X-Forwarded-User on 127.0.0.1:0 without --token-file")
	require.Contains(t, stderr, "give --token-file F and have the proxy send 'Authorization: Bearer <the token in F>'")
}

// The console answers the hosts of its --origin (where a proxy publishes
// it) and of --allowed-host, and loopback names; no other.
func TestConsoleHosts(t *testing.T) {
	t.Parallel()
	p, err := consoleHosts("127.0.0.1:8082", []string{"inbox.example.com"}, []string{"https://longrun.example.com"})
	require.NoError(t, err)
	for host, want := range map[string]bool{
		"127.0.0.1:8082": true, "localhost:8082": true, "longrun.example.com": true, "inbox.example.com:8443": true,
		"rebind.test:8082": false, "example.com": false,
	} {
		require.Equal(t, want, p.Allows(host), host)
	}
	code, _, stderr := runFake(t, &fakeClient{}, "console", "--allowed-host", "https://x.example.com")
	require.NotEqual(t, exitOK, code)
	require.Contains(t, stderr, `--allowed-host "https://x.example.com": want a host name`)
}

// The flags refuse what would leave the console open: a non-loopback
// address trusting a header anyone could send, and typos.
func TestConsoleCommandRefusesUnsafeSetups(t *testing.T) {
	t.Parallel()
	empty := filepath.Join(t.TempDir(), "empty")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"console", "--trusted-proxy-header", "X-User", "--listen", "0.0.0.0:0"}, "without --token-file: anyone who connects directly"},
		{[]string{"console", "--trusted-proxy-header", "X-User:"}, "is not a header name"},
		{[]string{"console", "--origin", "example.com"}, "want scheme://host[:port]"},
		{[]string{"console", "--token-file", empty}, "is empty"},
		{[]string{"console", "extra"}, "unexpected arguments"},
	} {
		code, _, stderr := runFake(t, &fakeClient{}, tc.args...)
		require.NotEqual(t, exitOK, code, tc.args)
		require.Contains(t, stderr, tc.want, tc.args)
	}
}

// The console prints a login URL with a fresh token, which logs in.
func TestConsoleCommandPrintsLoginURL(t *testing.T) {
	t.Parallel()
	f := consoleFake(t)
	var out syncBuffer
	a := &app{stdout: &out, stderr: io.Discard, getenv: noEnv,
		dial: func(context.Context, config) (sessionClient, error) { return f, nil }}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- a.run(ctx, []string{"console", "--listen", "127.0.0.1:0"}) }()
	var loginURL string
	require.Eventually(t, func() bool {
		m := regexp.MustCompile(`open (http://\S+/login)#token=([0-9a-f]{48})`).FindStringSubmatch(out.String())
		if m != nil {
			loginURL = m[1] + "\x00" + m[2]
		}
		return m != nil
	}, 10*time.Second, 10*time.Millisecond)
	u, token, _ := strings.Cut(loginURL, "\x00")
	base := strings.TrimSuffix(u, "/login")
	c := browser(t)
	code, _, body := do(t, c, "POST", u, url.Values{"token": {token}}, map[string]string{"Origin": base})
	require.Equal(t, http.StatusSeeOther, code, body)
	code, _, body = do(t, c, "GET", base+"/", nil, nil)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "c_edit")
	cancel()
	require.Equal(t, exitOK, <-done)
}

// A call waiting in a sub-agent is listed once, under the session it works
// for; a session whose calls were decided meanwhile is not listed; one
// that could not be asked is, with why.
func TestConsoleInboxKeepsWhatWaits(t *testing.T) {
	t.Parallel()
	entries := []inboxEntry{
		{Row: sessionRow{ID: "parent"}, Pending: []pendingView{{PendingApproval: workflows.PendingApproval{ID: "parent-task/c1", Session: "parent-task"}}}},
		{Row: sessionRow{ID: "parent-task"}, Pending: []pendingView{{PendingApproval: workflows.PendingApproval{ID: "c1"}}}},
		{Row: sessionRow{ID: "decided"}},
		{Row: sessionRow{ID: "no-worker"}, Err: "timed out"},
	}
	var ids []string
	for _, e := range keepWaiting(entries) {
		ids = append(ids, e.Row.ID)
	}
	require.Equal(t, []string{"parent", "no-worker"}, ids)
}

// A long conversation shows its last messages and says how many are not.
func TestConsoleSessionPageShowsRecentMessages(t *testing.T) {
	t.Parallel()
	f := consoleFake(t)
	base := f.query
	f.query = func(name string, n int) (any, error) {
		if name != workflows.QueryConversation {
			return base(name, n)
		}
		var msgs []conversation.Message
		for i := range consoleMaxMessages + 5 {
			msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: "message " + strconv.Itoa(i)})
		}
		return msgs, nil
	}
	srv, _ := consoleServer(t, f, consoleAuthOptions{})
	_, _, body := do(t, browser(t), "GET", srv.URL+"/session/live?id=s1", nil, map[string]string{"Authorization": "Bearer tok-123"})
	require.Contains(t, body, "5 earlier messages are not shown")
	require.NotContains(t, body, "message 4<")
	require.Contains(t, body, "message 5<")
	require.Contains(t, body, "message "+strconv.Itoa(consoleMaxMessages+4)+"<")
}

// A waiting call is shown whole and visibly: escape sequences, bidi and
// zero-width characters as text, a tail after 21,000 spaces on the page,
// an id's newline as ↵; and a cut text in the conversation says how much
// it hides.
func TestConsoleShowsUntrustedTextVisibly(t *testing.T) {
	t.Parallel()
	args := `{"command":"go test ./... #\r\u001b[2K\u001b]52;c;eA==\u0007\u202e` + strings.Repeat(" ", 21000) + `; touch pwned\u200b"}`
	p := workflows.PendingApproval{CallID: "c1\n### Reviewed: safe", ID: "c1\n### Reviewed: safe", Tool: "shell", Arguments: args, Reason: "asks\u202e"}
	var b strings.Builder
	require.NoError(t, consoleTemplates.ExecuteTemplate(&b, "call", newCallForm("tok", "s1", "inbox", pendingViews([]workflows.PendingApproval{p})[0])))
	out := b.String()
	for _, raw := range []string{"\x1b", "\r", "\u202e", "\u200b", "\a"} {
		require.NotContains(t, out, raw)
	}
	shown := html.UnescapeString(out)
	require.Contains(t, shown, `go test ./... #\r\x1b[2K\x1b]52;c;eA==\x07⟨U+202E⟩⟨21,000 spaces⟩; touch pwned⟨U+200B⟩`)
	require.Contains(t, shown, `[c1 ↵ ### Reviewed: safe]`)
	require.Contains(t, shown, `asks because: asks⟨U+202E⟩`)

	fetch := argumentFields("web_fetch", `{"url":"https://gооgle.com/login"}`, 0)
	require.Equal(t, "https://gооgle.com ⟨xn--ggle-55da.com⟩/login", fetch[0].Text, "a homoglyph host shows its punycode")

	long := conversation.Message{Role: conversation.RoleAssistant, Content: strings.Repeat("x", maxConsoleText) + strings.Repeat("\n", 150) + "tail"}
	v := messageViews([]conversation.Message{long})[0]
	require.Equal(t, "… 154 more bytes, 150 more lines hidden; "+consoleMore, v.Hidden)
}

// TestConsoleApplyAndDiscardPassTheChecks: the review buttons change a
// person's checkout, so they are behind the same login, CSRF token and
// Origin checks as a decision; a form that passes reaches the session's
// page with the outcome.
func TestConsoleApplyAndDiscardPassTheChecks(t *testing.T) {
	t.Parallel()
	f := consoleFake(t)
	srv, _ := consoleServer(t, f, consoleAuthOptions{})
	c := browser(t)
	login(t, c, srv.URL)
	_, _, page := do(t, c, "GET", srv.URL+"/", nil, nil)
	csrf := csrfOf(t, page)
	for _, action := range []string{"/apply", "/discard"} {
		for _, tc := range []struct {
			name   string
			client *http.Client
			form   url.Values
			hdr    map[string]string
			code   int
			want   string
		}{
			{"not logged in", browser(t), url.Values{"csrf": {csrf}, "session": {"s1"}}, map[string]string{"Origin": srv.URL}, http.StatusUnauthorized, "not logged in"},
			{"no csrf token", c, url.Values{"session": {"s1"}}, map[string]string{"Origin": srv.URL}, http.StatusForbidden, "CSRF token is missing or stale"},
			{"another origin", c, url.Values{"csrf": {csrf}, "session": {"s1"}}, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden, "comes from http://evil.example"},
		} {
			t.Run(action+" "+tc.name, func(t *testing.T) {
				code, _, body := do(t, tc.client, "POST", srv.URL+action, tc.form, tc.hdr)
				require.Equal(t, tc.code, code, body)
				require.Contains(t, body, tc.want)
			})
		}
		code, hdr, body := do(t, c, "POST", srv.URL+action, url.Values{"csrf": {csrf}, "session": {"s1"}}, map[string]string{"Origin": srv.URL})
		require.Equal(t, http.StatusSeeOther, code, body)
		require.Equal(t, "/session?id=s1", hdr.Get("Location"), "back to the session's page, with the outcome")
	}
}

// TestConsoleSaysWhatASessionWasAskedAndWhere: each inbox card and
// session page names the session's task (escaped, on one line), its
// repository and its branch, as the checkout query tells them.
func TestConsoleSaysWhatASessionWasAskedAndWhere(t *testing.T) {
	t.Parallel()
	f := consoleFake(t)
	inner := f.query
	f.query = func(name string, n int) (any, error) {
		if name == workflows.QueryCheckout {
			return &session.Checkout{Info: checkout.Info{Repo: "/src/app", Name: "s1", Branch: "longrun/session-s1", Base: "0123456789abcdef0123"}}, nil
		}
		return inner(name, n)
	}
	srv, _ := consoleServer(t, f, consoleAuthOptions{})
	c := browser(t)
	login(t, c, srv.URL)
	_, _, inbox := do(t, c, "GET", srv.URL+"/", nil, nil)
	_, _, page := do(t, c, "GET", srv.URL+"/session?id=s1", nil, nil)
	for _, p := range []string{inbox, page} {
		require.Contains(t, p, `repository <code>/src/app</code>`)
		require.Contains(t, p, `branch <code>longrun/session-s1</code> <span class="dim">from 0123456789ab</span>`)
	}
	// The page falls back on the first user message when the session has
	// no static summary; the model's or a paste's markup stays text.
	require.Contains(t, page, `asked: <q>please &lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;`)
	require.NotContains(t, page, hostile)

	// A session in place says so, and has no branch.
	f.query = func(name string, n int) (any, error) {
		if name == workflows.QueryCheckout {
			return (*session.Checkout)(nil), nil
		}
		return inner(name, n)
	}
	_, _, page = do(t, c, "GET", srv.URL+"/session?id=s1", nil, nil)
	require.Contains(t, page, "in place, in the worker's workspace (no branch of its own)")
}
