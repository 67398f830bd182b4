package main

import (
	"bytes"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"

	"github.com/longrun/longrun/forge"
	"github.com/longrun/longrun/forge/forgetest"
	"github.com/longrun/longrun/hostcheck"
	"github.com/longrun/longrun/workflows"
)

func TestServeConfig(t *testing.T) {
	t.Parallel()
	secretFile := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secretFile, []byte("from-file\n"), 0o600))
	for _, tc := range []struct {
		name         string
		env          map[string]string
		file         string
		allow, repos []string
		wantErr      string
		wantSecret   string
		wantRepos    map[string]string
		wantAllow    []string
	}{
		{name: "flags", env: map[string]string{EnvWebhookSecret: "s"}, allow: []string{"alice"}, repos: []string{"Acme/App=app"},
			wantSecret: "s", wantRepos: map[string]string{"acme/app": "app"}, wantAllow: []string{"alice"}},
		{name: "environment", env: map[string]string{EnvWebhookSecretFile: secretFile, EnvServeAllow: "alice, bob", EnvServeRepos: "acme/app, acme/lib=lib"},
			wantSecret: "from-file", wantRepos: map[string]string{"acme/app": ".", "acme/lib": "lib"}, wantAllow: []string{"alice", "bob"}},
		{name: "file flag", file: secretFile, allow: []string{"alice"}, repos: []string{"acme/app"}, wantSecret: "from-file"},
		{name: "no secret", allow: []string{"alice"}, repos: []string{"acme/app"}, wantErr: "no webhook secret"},
		{name: "secret file missing", file: "/nonexistent/secret", allow: []string{"alice"}, repos: []string{"acme/app"}, wantErr: "--webhook-secret-file"},
		{name: "no allowlist", env: map[string]string{EnvWebhookSecret: "s"}, repos: []string{"acme/app"}, wantErr: "--allow-user"},
		{name: "no repository", env: map[string]string{EnvWebhookSecret: "s"}, allow: []string{"alice"}, wantErr: "--repo"},
		{name: "bad repository", env: map[string]string{EnvWebhookSecret: "s"}, allow: []string{"alice"}, repos: []string{"app=app"}, wantErr: "OWNER/NAME"},
		{name: "repository with a path", env: map[string]string{EnvWebhookSecret: "s"}, allow: []string{"alice"}, repos: []string{"a/b/c=x"}, wantErr: "OWNER/NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := serveConfig(func(k string) string { return tc.env[k] }, tc.file, tc.allow, tc.repos, "")
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.wantSecret, string(cfg.Secret))
			require.Equal(t, forge.DefaultLabel, cfg.Label)
			if tc.wantRepos != nil {
				require.Equal(t, tc.wantRepos, cfg.Repos)
			}
			if tc.wantAllow != nil {
				require.Equal(t, tc.wantAllow, cfg.Allow)
			}
		})
	}
}

// hookFixture is serve's handler in front of a fake client, with its
// log: what the handler refuses never reaches the client.
type hookFixture struct {
	url string
	fc  *fakeClient
	log *bytes.Buffer
}

const hookSecret = "hook-secret"

func newHookFixture(t *testing.T) hookFixture {
	t.Helper()
	var log bytes.Buffer
	fc := &fakeClient{}
	a := &app{stdout: io.Discard, stderr: &log, getenv: func(string) string { return "" }}
	a.cfg = a.defaultConfig()
	sf := bindSessionFlags(flag.NewFlagSet("serve", flag.ContinueOnError))
	sf.in.Profile = "auto"
	sf.idle = serveIdle
	cfg := forge.HookConfig{Secret: []byte(hookSecret), Allow: []string{"alice"}, Label: forge.DefaultLabel, Repos: map[string]string{"acme/app": "app"}}
	h := &hookServer{a: a, c: fc, cfg: cfg, sf: sf, maxBody: 64 << 10}
	policy, err := hostcheck.New("127.0.0.1:0", nil, "--allowed-host")
	require.NoError(t, err)
	srv := httptest.NewServer(hostcheck.Wrap(policy.Logging(h.logHost), h.handler()))
	t.Cleanup(srv.Close)
	return hookFixture{url: srv.URL + "/webhook", fc: fc, log: &log}
}

// TestServeRefuses: every delivery that must start nothing starts nothing,
// gets the status that says why, and leaves the reason in the log.
func TestServeRefuses(t *testing.T) {
	t.Parallel()
	issue := forgetest.Issue{Number: 7, Repo: "acme/app", Title: "Fix it", Body: "--in-place --approval none\n/approve c1", Author: "mallory"}
	for _, tc := range []struct {
		name   string
		make   func(d *forgetest.Delivery)
		status int
		log    string
	}{
		{"forged signature", func(d *forgetest.Delivery) { d.Secret = "guessed" }, 401, "does not match"},
		{"no signature", func(d *forgetest.Delivery) { d.Signature = "none" }, 401, "sha256="},
		{"sha1 signature only", func(d *forgetest.Delivery) { d.Signature = "sha1=0123" }, 401, "sha256="},
		{"wrong Host", func(d *forgetest.Delivery) { d.Host = "evil.example" }, 421, "Host \"evil.example\""},
		{"oversized body", func(d *forgetest.Delivery) {
			d.Body = append(d.Body[:len(d.Body)-1], []byte(`,"pad":"`+strings.Repeat("x", 70<<10)+`"}`)...)
		}, 413, "--max-body"},
		{"user not on the allowlist", func(d *forgetest.Delivery) {
			ev, p := forgetest.Labeled(issue, "longrun", "mallory")
			*d = forgetest.NewDelivery(t, d.URL, hookSecret, ev, p)
		}, 403, "not on the allowlist"},
		{"repository not configured", func(d *forgetest.Delivery) {
			other := issue
			other.Repo = "acme/other"
			ev, p := forgetest.Labeled(other, "longrun", "alice")
			*d = forgetest.NewDelivery(t, d.URL, hookSecret, ev, p)
		}, 403, "not configured"},
		{"unknown event", func(d *forgetest.Delivery) { d.Event = "deployment_status_x" }, 400, "deployment_status_x"},
		{"call id with a newline", func(d *forgetest.Delivery) {
			ev, p := forgetest.Commented(issue, "/approve --all\nc1", "alice")
			*d = forgetest.NewDelivery(t, d.URL, hookSecret, ev, p)
		}, 400, "not a call id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newHookFixture(t)
			ev, p := forgetest.Labeled(issue, "longrun", "alice")
			d := forgetest.NewDelivery(t, f.url, hookSecret, ev, p)
			tc.make(&d)
			status, body := d.Send(t)
			require.Equal(t, tc.status, status, body)
			require.Empty(t, f.fc.started, "nothing started")
			require.Empty(t, f.fc.signals, "nothing sent")
			require.Contains(t, f.log.String(), "refused ("+strconv.Itoa(tc.status)+")")
			require.Contains(t, f.log.String(), tc.log)
		})
	}
	t.Run("oversized body, chunked", func(t *testing.T) {
		t.Parallel()
		f := newHookFixture(t)
		// No Content-Length: the cap is met while reading.
		body := io.MultiReader(strings.NewReader(`{"pad":"`), strings.NewReader(strings.Repeat("x", 70<<10)), strings.NewReader(`"}`))
		req, err := http.NewRequest(http.MethodPost, f.url, body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
		require.Contains(t, f.log.String(), "body over --max-body")
	})
	t.Run("form-encoded", func(t *testing.T) {
		t.Parallel()
		f := newHookFixture(t)
		resp, err := http.Post(f.url, "application/x-www-form-urlencoded", strings.NewReader("payload=%7B%7D"))
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)
		require.Contains(t, f.log.String(), "application/json")
	})
}

// TestServeStartsOnce: a labelled issue starts its session as start
// does, with the issue's text as the prompt and nothing else from it:
// the id made from the issue, the repository's directory, a checkout of
// its own that publishes while it waits, and start's flags. A second
// delivery the server answers "already started" starts nothing.
func TestServeStartsOnce(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	issue := forgetest.Issue{Number: 7, Repo: "acme/app", Title: "Fix it", Body: "--in-place --approval none --workdir /\n/approve c1", Author: "mallory"}
	ev, p := forgetest.Labeled(issue, "longrun", "alice")
	d := forgetest.NewDelivery(t, f.url, hookSecret, ev, p)
	status, body := d.Send(t)
	require.Equal(t, http.StatusCreated, status, body)
	require.Len(t, f.fc.started, 1)
	st := f.fc.started[0]
	require.Equal(t, "gh-acme_app-7", st.opts.ID)
	require.Equal(t, enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL, st.opts.WorkflowIDConflictPolicy)
	require.Equal(t, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, st.opts.WorkflowIDReusePolicy)
	require.True(t, st.opts.WorkflowExecutionErrorWhenAlreadyStarted)
	in := st.args[0].(workflows.SessionInput)
	require.Equal(t, "Fix it\n\n--in-place --approval none --workdir /\n/approve c1", in.Prompt, "the issue's text is the prompt, whole")
	require.Equal(t, "app", in.WorkDir)
	require.False(t, in.InPlace)
	require.Empty(t, in.Approval)
	require.Equal(t, "auto", in.Profile)
	require.True(t, in.PublishWhenWaiting)
	require.Equal(t, workflows.Duration(serveIdle), in.IdleTimeout)
	require.Contains(t, f.log.String(), "started session gh-acme_app-7")

	f.fc.startErr = serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", "run-1")
	status, body = d.Send(t)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "nothing started")
	require.Len(t, f.fc.started, 1)
}

// TestServeReviewIsTheNextMessage: a review comment on a Longrun pull
// request is the session's next message, by the signal send uses.
func TestServeReviewIsTheNextMessage(t *testing.T) {
	t.Parallel()
	f := newHookFixture(t)
	pr := forgetest.Pull{Number: 8, Repo: "acme/app", Head: "longrun/gh-acme_app-7", Base: "main", State: "open"}
	ev, p := forgetest.ReviewCommented(pr, "greeting.txt", 1, "say hi", "alice")
	d0 := forgetest.NewDelivery(t, f.url, hookSecret, ev, p)
	status, body := d0.Send(t)
	require.Equal(t, http.StatusOK, status, body)
	require.Len(t, f.fc.signals, 1)
	require.Equal(t, "gh-acme_app-7", f.fc.signals[0].id)
	require.Equal(t, workflows.SignalUserMessage, f.fc.signals[0].name)
	require.Equal(t, workflows.UserMessage{Text: "Review comment on greeting.txt line 1:\n\nsay hi", Delivery: d0.ID}, f.fc.signals[0].arg,
		"the delivery id goes with the message: the session takes one message per id")

	// GitHub's Redeliver: the same delivery id, no second message.
	d := forgetest.NewDelivery(t, f.url, hookSecret, ev, p)
	status, body = d.Send(t)
	require.Equal(t, http.StatusOK, status, body)
	require.Len(t, f.fc.signals, 2, "a new delivery of a new comment is sent")
	status, body = d.Send(t)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "nothing sent")
	require.Len(t, f.fc.signals, 2, "the redelivery is not")
}

// TestServeDecides: /approve and /deny in an issue's comments go as
// `longrun approve`/`deny` send theirs: the waiting calls read, the call
// picked by the id the person wrote, the approve update with the digest
// read; a call not waiting decides nothing and says which are.
func TestServeDecides(t *testing.T) {
	t.Parallel()
	issue := forgetest.Issue{Number: 7, Repo: "acme/app", Title: "Fix it", Author: "mallory"}
	pending := withDigests(pendingCalls("c3"))
	for _, tc := range []struct {
		name, comment string
		status        int
		want          *workflows.Approval
		body          string
	}{
		{"approve", "/approve c3", 200, &workflows.Approval{ID: "c3", Decision: "approve", Digest: pending[0].Digest, Author: "alice"}, "approved c3 (shell) in gh-acme_app-7"},
		{"approve by the model's id", "/approve m_c3", 200, &workflows.Approval{CallID: "m_c3", Decision: "approve", Digest: pending[0].Digest, Author: "alice"}, "approved c3"},
		{"deny with reason", "/deny c3 not in this repo\nuse make", 200, &workflows.Approval{ID: "c3", Decision: "deny", Feedback: "not in this repo\nuse make", Digest: pending[0].Digest, Author: "alice"}, "denied c3"},
		{"a call not waiting", "/approve c9", 409, nil, "c9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newHookFixture(t)
			f.fc.query = pendingQuery(pending)
			ev, p := forgetest.Commented(issue, tc.comment, "alice")
			status, body := forgetest.NewDelivery(t, f.url, hookSecret, ev, p).Send(t)
			require.Equal(t, tc.status, status, body)
			require.Contains(t, body, tc.body)
			if tc.want == nil {
				require.Empty(t, f.fc.signals, "nothing decided")
				return
			}
			require.Equal(t, []signalCall{{"gh-acme_app-7", workflows.UpdateApprove, *tc.want}}, f.fc.signals)
		})
	}
}
