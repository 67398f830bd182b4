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

func TestServeGitLabConfig(t *testing.T) {
	t.Parallel()
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte("from-file\n"), 0o600))
	for _, tc := range []struct {
		name      string
		env       map[string]string
		args      []string
		wantErr   string
		wantOff   bool
		wantToken string
		wantRepos map[string]string
		wantAllow []string
	}{
		{name: "none: off", wantOff: true},
		{name: "flags", env: map[string]string{EnvGitLabWebhookToken: "t"}, args: []string{"--gitlab-allow-user", "alice", "--gitlab-project", "Acme/Tools/App=app"},
			wantToken: "t", wantRepos: map[string]string{"acme/tools/app": "app"}, wantAllow: []string{"alice"}},
		{name: "environment", env: map[string]string{EnvGitLabWebhookTokenFile: tokenFile, EnvServeGitLabAllow: "alice, bob", EnvServeGitLabProjects: "acme/app, acme/lib=lib"},
			wantToken: "from-file", wantRepos: map[string]string{"acme/app": ".", "acme/lib": "lib"}, wantAllow: []string{"alice", "bob"}},
		{name: "file flag", args: []string{"--gitlab-token-file", tokenFile, "--gitlab-allow-user", "alice", "--gitlab-project", "acme/app"}, wantToken: "from-file"},
		{name: "no token", args: []string{"--gitlab-allow-user", "alice", "--gitlab-project", "acme/app"}, wantErr: "no GitLab webhook token"},
		{name: "token file missing", args: []string{"--gitlab-token-file", "/nonexistent/t", "--gitlab-allow-user", "alice", "--gitlab-project", "acme/app"}, wantErr: "--gitlab-token-file"},
		{name: "no allowlist", env: map[string]string{EnvGitLabWebhookToken: "t"}, args: []string{"--gitlab-project", "acme/app"}, wantErr: "--gitlab-allow-user"},
		{name: "no project", env: map[string]string{EnvGitLabWebhookToken: "t"}, args: []string{"--gitlab-allow-user", "alice"}, wantErr: "--gitlab-project"},
		{name: "bad project", env: map[string]string{EnvGitLabWebhookToken: "t"}, args: []string{"--gitlab-allow-user", "alice", "--gitlab-project", "app=x"}, wantErr: "GROUP/NAME"},
		{name: "empty group", env: map[string]string{EnvGitLabWebhookToken: "t"}, args: []string{"--gitlab-allow-user", "alice", "--gitlab-project", "a//b=x"}, wantErr: "GROUP/NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := flag.NewFlagSet("serve", flag.ContinueOnError)
			g := bindGitLabServeFlags(fs)
			require.NoError(t, fs.Parse(tc.args))
			cfg, err := g.config(func(k string) string { return tc.env[k] }, "")
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			if tc.wantOff {
				require.Empty(t, cfg.Repos)
				require.Empty(t, cfg.Secret)
				return
			}
			require.Equal(t, tc.wantToken, string(cfg.Secret))
			require.Equal(t, forge.DefaultLabel, cfg.Label)
			if tc.wantRepos != nil {
				require.Equal(t, tc.wantRepos, cfg.Repos)
			}
			if tc.wantAllow != nil {
				require.Equal(t, tc.wantAllow, cfg.Allow)
			}
		})
	}
	// GitHub's settings stay required once one is given.
	none := func(string) string { return "" }
	require.False(t, wantsGitHub(none, "", nil, nil))
	require.True(t, wantsGitHub(none, "", []string{"alice"}, nil))
	require.True(t, wantsGitHub(func(k string) string { return map[string]string{EnvWebhookSecret: "s"}[k] }, "", nil, nil))
}

const gitLabToken = "glhook-token-0123"

// gitLabFixture is serve's handler with GitHub's and GitLab's settings
// in front of a fake client; its url is /gitlab's.
func gitLabFixture(t *testing.T) hookFixture {
	t.Helper()
	var log bytes.Buffer
	fc := &fakeClient{}
	a := &app{stdout: io.Discard, stderr: &log, getenv: func(string) string { return "" }}
	a.cfg = a.defaultConfig()
	sf := bindSessionFlags(flag.NewFlagSet("serve", flag.ContinueOnError))
	sf.in.Profile = "auto"
	sf.idle = serveIdle
	gh := forge.HookConfig{Secret: []byte(hookSecret), Allow: []string{"alice"}, Label: forge.DefaultLabel, Repos: map[string]string{"acme/app": "app"}}
	gl := forge.HookConfig{Secret: []byte(gitLabToken), Allow: []string{"gina"}, Label: forge.DefaultLabel, Repos: map[string]string{"acme/tools/app": "app"}}
	h := &hookServer{a: a, c: fc, cfg: gh, gl: gl, sf: sf, maxBody: 64 << 10}
	policy, err := hostcheck.New("127.0.0.1:0", nil, "--allowed-host")
	require.NoError(t, err)
	srv := httptest.NewServer(hostcheck.Wrap(policy.Logging(h.logHost), h.handler()))
	t.Cleanup(srv.Close)
	return hookFixture{url: srv.URL + "/gitlab", fc: fc, log: &log}
}

// TestServeGitLabRefuses: every GitLab delivery that must start nothing
// starts nothing, gets the status that says why, and leaves the reason
// in the log; the token is never in it.
func TestServeGitLabRefuses(t *testing.T) {
	t.Parallel()
	issue := forgetest.GitLabIssue{IID: 7, Project: "acme/tools/app", Title: "Fix it", Description: "--in-place", Author: "mallory"}
	for _, tc := range []struct {
		name   string
		make   func(d *forgetest.GitLabDelivery)
		status int
		log    string
	}{
		{"wrong token", func(d *forgetest.GitLabDelivery) { d.Token = "guessed" }, 401, "is not the configured token"},
		{"token with a suffix", func(d *forgetest.GitLabDelivery) { d.Token = gitLabToken + "x" }, 401, "is not the configured token"},
		{"no token", func(d *forgetest.GitLabDelivery) { d.Token = "" }, 401, "no X-Gitlab-Token header"},
		{"GitHub's secret as the token", func(d *forgetest.GitLabDelivery) { d.Token = hookSecret }, 401, "is not the configured token"},
		{"form-encoded", func(d *forgetest.GitLabDelivery) { d.ContentType = "application/x-www-form-urlencoded" }, 415, "application/json"},
		{"oversized body", func(d *forgetest.GitLabDelivery) {
			d.Body = append(d.Body[:len(d.Body)-1], []byte(`,"pad":"`+strings.Repeat("x", 70<<10)+`"}`)...)
		}, 413, "--max-body"},
		{"user not on the allowlist", func(d *forgetest.GitLabDelivery) {
			ev, p := forgetest.GitLabLabeled(issue, "longrun", "mallory")
			*d = forgetest.NewGitLabDelivery(t, d.URL, gitLabToken, ev, p)
		}, 403, `user "mallory"`},
		{"GitHub's allowed login is not GitLab's", func(d *forgetest.GitLabDelivery) {
			ev, p := forgetest.GitLabLabeled(issue, "longrun", "alice")
			*d = forgetest.NewGitLabDelivery(t, d.URL, gitLabToken, ev, p)
		}, 403, `user "alice"`},
		{"project not configured", func(d *forgetest.GitLabDelivery) {
			other := issue
			other.Project = "acme/app" // GitHub's, not GitLab's
			ev, p := forgetest.GitLabLabeled(other, "longrun", "gina")
			*d = forgetest.NewGitLabDelivery(t, d.URL, gitLabToken, ev, p)
		}, 403, "not configured"},
		{"call id with a newline", func(d *forgetest.GitLabDelivery) {
			ev, p := forgetest.GitLabIssueNote(issue, "/approve --all\nc1", "gina")
			*d = forgetest.NewGitLabDelivery(t, d.URL, gitLabToken, ev, p)
		}, 400, "not a call id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := gitLabFixture(t)
			ev, p := forgetest.GitLabLabeled(issue, "longrun", "gina")
			d := forgetest.NewGitLabDelivery(t, f.url, gitLabToken, ev, p)
			tc.make(&d)
			status, body := d.Send(t)
			require.Equal(t, tc.status, status, body)
			require.Empty(t, f.fc.started, "nothing started")
			require.Empty(t, f.fc.signals, "nothing sent")
			require.Contains(t, f.log.String(), "refused ("+strconv.Itoa(tc.status)+")")
			require.Contains(t, f.log.String(), tc.log)
			require.NotContains(t, f.log.String(), gitLabToken)
		})
	}
	t.Run("GitLab's token on GitHub's path", func(t *testing.T) {
		t.Parallel()
		f := gitLabFixture(t)
		ev, p := forgetest.GitLabLabeled(issue, "longrun", "gina")
		d := forgetest.NewGitLabDelivery(t, strings.TrimSuffix(f.url, "/gitlab")+"/webhook", gitLabToken, ev, p)
		status, body := d.Send(t)
		require.Equal(t, http.StatusUnauthorized, status, body)
		require.Empty(t, f.fc.started)
	})
	t.Run("GitLab off", func(t *testing.T) {
		t.Parallel()
		f := newHookFixture(t) // GitHub's settings only
		ev, p := forgetest.GitLabLabeled(issue, "longrun", "gina")
		d := forgetest.NewGitLabDelivery(t, strings.TrimSuffix(f.url, "/webhook")+"/gitlab", "", ev, p)
		status, body := d.Send(t)
		require.Equal(t, http.StatusUnauthorized, status, body)
		require.Contains(t, f.log.String(), "no GitLab webhook token configured")
		require.Empty(t, f.fc.started)
	})
}

// TestServeGitLabStartsOnce: a GitLab issue given the label starts its
// session as GitHub's do: the id made from the project and the iid, the
// issue's text the prompt, start's flags; a redelivery starts nothing.
// A note on its merge request is its next message, sent once per
// delivery; /approve on the issue decides its call.
func TestServeGitLabStartsOnce(t *testing.T) {
	t.Parallel()
	f := gitLabFixture(t)
	issue := forgetest.GitLabIssue{IID: 7, Project: "acme/tools/app", Title: "Fix it", Description: "--in-place --approval none\n/approve c1", Author: "mallory"}
	id := forge.GitLabSessionFor("acme/tools/app", 7)
	ev, p := forgetest.GitLabLabeled(issue, "longrun", "gina")
	d := forgetest.NewGitLabDelivery(t, f.url, gitLabToken, ev, p)
	status, body := d.Send(t)
	require.Equal(t, http.StatusCreated, status, body)
	require.Len(t, f.fc.started, 1)
	st := f.fc.started[0]
	require.Equal(t, id, st.opts.ID)
	require.Equal(t, enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL, st.opts.WorkflowIDConflictPolicy)
	require.Equal(t, enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, st.opts.WorkflowIDReusePolicy)
	in := st.args[0].(workflows.SessionInput)
	require.Equal(t, "Fix it\n\n--in-place --approval none\n/approve c1", in.Prompt, "the issue's text is the prompt, whole")
	require.Equal(t, "app", in.WorkDir)
	require.False(t, in.InPlace)
	require.Empty(t, in.Approval)
	require.True(t, in.PublishWhenWaiting)
	require.Contains(t, f.log.String(), "started session "+id)

	f.fc.startErr = serviceerror.NewWorkflowExecutionAlreadyStarted("started", "", "run-1")
	status, body = d.Send(t)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "nothing started")
	require.Len(t, f.fc.started, 1)

	mr := forgetest.MergeRequest{IID: 1, Project: "acme/tools/app", SourceBranch: "longrun/" + id, TargetBranch: "main", State: "opened"}
	ev, p = forgetest.GitLabMergeRequestNote(mr, "greeting.txt", 2, "say hi", "gina")
	note := forgetest.NewGitLabDelivery(t, f.url, gitLabToken, ev, p)
	status, body = note.Send(t)
	require.Equal(t, http.StatusOK, status, body)
	status, body = note.Send(t) // GitLab's retry: the same idempotency key
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "nothing sent")
	require.Equal(t, []signalCall{{id, workflows.SignalUserMessage, workflows.UserMessage{Text: "Review comment on greeting.txt line 2:\n\nsay hi", Delivery: "gitlab:" + note.ID}}}, f.fc.signals,
		"the message carries its delivery id, so the session takes it once across serve's restarts")
}

// TestServeGitLabDecides: /approve in a note on the issue decides the
// session's waiting call as `longrun approve` does; by a user not on
// GitLab's allowlist it decides nothing.
func TestServeGitLabDecides(t *testing.T) {
	t.Parallel()
	f := gitLabFixture(t)
	pending := withDigests(pendingCalls("c3"))
	f.fc.query = pendingQuery(pending)
	issue := forgetest.GitLabIssue{IID: 7, Project: "acme/tools/app", Title: "Fix it"}
	id := forge.GitLabSessionFor("acme/tools/app", 7)
	ev, p := forgetest.GitLabIssueNote(issue, "/approve c3", "mallory")
	status, body := forgetest.NewGitLabDelivery(t, f.url, gitLabToken, ev, p).Send(t)
	require.Equal(t, http.StatusForbidden, status, body)
	require.Empty(t, f.fc.signals)
	ev, p = forgetest.GitLabIssueNote(issue, "/approve c3", "gina")
	status, body = forgetest.NewGitLabDelivery(t, f.url, gitLabToken, ev, p).Send(t)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "approved c3")
	require.Equal(t, []signalCall{{id, workflows.UpdateApprove, workflows.Approval{ID: "c3", Decision: "approve", Digest: pending[0].Digest, Author: "gina"}}}, f.fc.signals)
}
