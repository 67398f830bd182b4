package forge_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/forge"
	"github.com/longrun/longrun/forge/forgetest"
)

func TestVerifyGitLab(t *testing.T) {
	t.Parallel()
	secret := []byte("glsec-0123")
	for _, tc := range []struct {
		name, header string
		secret       []byte
		ok           bool
	}{
		{"good", "glsec-0123", secret, true},
		{"missing", "", secret, false},
		{"prefix of it", "glsec-012", secret, false},
		{"longer", "glsec-01234", secret, false},
		{"other case", "GLSEC-0123", secret, false},
		{"no token configured", "", nil, false},
		{"no token configured, any header", "glsec-0123", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := forge.VerifyGitLab(tc.secret, tc.header)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, forge.ErrBadToken)
			require.NotContains(t, err.Error(), string(secret), "the reason never shows the token")
		})
	}
}

func TestGitLabSessionNames(t *testing.T) {
	t.Parallel()
	id := forge.GitLabSessionFor("Acme/Tools/App", 7)
	require.Equal(t, id, forge.GitLabSessionFor("acme/tools/app", 7), "paths compare without case")
	require.True(t, strings.HasPrefix(id, "gl-acme_tools_app-"), id)
	require.True(t, strings.HasSuffix(id, "-7"), id)
	require.Equal(t, id, forge.SessionOfBranch("longrun/"+id), "a branch can hold it")
	require.NotEqual(t, forge.GitLabSessionFor("a_b/c", 7), forge.GitLabSessionFor("a/b_c", 7), "names with _ stay apart")
	require.NotEqual(t, forge.GitLabSessionFor("acme/app", 73), forge.GitLabSessionFor("acme/app-7", 3))
	long := forge.GitLabSessionFor(strings.Repeat("g", 90)+"/app", 12)
	require.True(t, strings.HasSuffix(long, "-12"), long)
	require.Equal(t, long, forge.SessionOfBranch("longrun/"+long))
}

func TestParseGitLab(t *testing.T) {
	t.Parallel()
	cfg := forge.HookConfig{Secret: []byte("x"), Allow: []string{"Alice", "bob"}, Repos: map[string]string{"acme/tools/app": "app"}}
	issue := forgetest.GitLabIssue{IID: 7, Project: "acme/tools/app", Title: "Fix the greeting", Description: "It says hello.", Author: "mallory"}
	other := issue
	other.Project = "acme/other"
	session := forge.GitLabSessionFor("acme/tools/app", 7)
	mr := forgetest.MergeRequest{IID: 3, Project: "acme/tools/app", SourceBranch: "longrun/" + session, TargetBranch: "main", State: "opened"}
	foreign := mr
	foreign.SourceBranch = "feature"
	crossed := mr
	crossed.SourceBranch = "longrun/" + forge.GitLabSessionFor("acme/other", 7)
	github := mr
	github.SourceBranch = "longrun/gh-acme_app-7"
	byHand := mr
	byHand.SourceBranch = "longrun/s1"
	type want struct {
		kind                forge.Kind
		session, text, call string
		status              int // of the refusal; 0 when an action
	}
	for _, tc := range []struct {
		name string
		hook func() (string, any)
		want want
	}{
		{"label added by an allowed user", func() (string, any) { return forgetest.GitLabLabeled(issue, "longrun", "alice") },
			want{kind: forge.Start, session: session, text: "Fix the greeting\n\nIt says hello."}},
		{"opened with the label, user in another case", func() (string, any) { return forgetest.GitLabOpenedWith(issue, "LongRun", "BOB") },
			want{kind: forge.Start, session: session}},
		{"confidential issue", func() (string, any) {
			_, p := forgetest.GitLabLabeled(issue, "longrun", "alice")
			return "Confidential Issue Hook", p
		}, want{kind: forge.Start, session: session}},
		{"another label", func() (string, any) { return forgetest.GitLabLabeled(issue, "bug", "alice") }, want{status: 202}},
		{"an edit of an issue that had the label", func() (string, any) {
			ev, p := forgetest.GitLabLabeled(issue, "longrun", "alice")
			p.(map[string]any)["changes"] = map[string]any{"title": map[string]any{"previous": "a", "current": "b"}}
			return ev, p
		}, want{status: 202}},
		{"label added by someone else", func() (string, any) { return forgetest.GitLabLabeled(issue, "longrun", "mallory") }, want{status: 403}},
		{"project not configured", func() (string, any) { return forgetest.GitLabLabeled(other, "longrun", "alice") }, want{status: 403}},
		{"/longrun note", func() (string, any) {
			return forgetest.GitLabIssueNote(issue, "/longrun and add a test\nplease", "alice")
		},
			want{kind: forge.Start, session: session, text: "Fix the greeting\n\nIt says hello.\n\nand add a test\nplease"}},
		{"plain note on the issue", func() (string, any) { return forgetest.GitLabIssueNote(issue, "looks good", "alice") }, want{status: 202}},
		{"/approve on the issue", func() (string, any) { return forgetest.GitLabIssueNote(issue, "/approve c3", "alice") },
			want{kind: forge.Approve, session: session, call: "c3"}},
		{"/deny with reason", func() (string, any) {
			return forgetest.GitLabIssueNote(issue, "/deny c3 not that file\nuse b.txt", "alice")
		},
			want{kind: forge.Deny, session: session, call: "c3", text: "not that file\nuse b.txt"}},
		{"/deny without reason", func() (string, any) { return forgetest.GitLabIssueNote(issue, "/deny c3", "alice") }, want{status: 400}},
		{"/approve a flag", func() (string, any) { return forgetest.GitLabIssueNote(issue, "/approve --all", "alice") }, want{status: 400}},
		{"/approve by someone else", func() (string, any) { return forgetest.GitLabIssueNote(issue, "/approve c3", "mallory") }, want{status: 403}},
		{"note on the merge request", func() (string, any) { return forgetest.GitLabMergeRequestNote(mr, "", 0, "say hi instead", "alice") },
			want{kind: forge.Message, session: session, text: "Comment on the merge request:\n\nsay hi instead"}},
		{"note on the diff", func() (string, any) {
			return forgetest.GitLabMergeRequestNote(mr, "greeting.txt", 1, "say hi instead", "alice")
		}, want{kind: forge.Message, session: session, text: "Review comment on greeting.txt line 1:\n\nsay hi instead"}},
		{"/approve on the merge request", func() (string, any) { return forgetest.GitLabMergeRequestNote(mr, "", 0, "/approve c9", "alice") },
			want{kind: forge.Approve, session: session, call: "c9"}},
		{"/longrun on the merge request", func() (string, any) { return forgetest.GitLabMergeRequestNote(mr, "", 0, "/longrun more", "alice") }, want{status: 202}},
		{"note by someone else on the merge request", func() (string, any) { return forgetest.GitLabMergeRequestNote(mr, "", 0, "rm -rf", "mallory") }, want{status: 403}},
		{"merge request of a foreign branch", func() (string, any) { return forgetest.GitLabMergeRequestNote(foreign, "", 0, "say hi", "alice") }, want{status: 202}},
		{"merge request of another project's session", func() (string, any) {
			return forgetest.GitLabMergeRequestNote(crossed, "", 0, "say hi", "alice")
		}, want{status: 403}},
		{"merge request of a GitHub issue's session", func() (string, any) {
			return forgetest.GitLabMergeRequestNote(github, "", 0, "say hi", "alice")
		}, want{status: 403}},
		{"merge request of a session started by hand", func() (string, any) {
			return forgetest.GitLabMergeRequestNote(byHand, "", 0, "say hi", "alice")
		}, want{kind: forge.Message, session: "s1"}},
		{"an edited note", func() (string, any) {
			ev, p := forgetest.GitLabMergeRequestNote(mr, "", 0, "say hi", "alice")
			p.(map[string]any)["object_attributes"].(map[string]any)["action"] = "update"
			return ev, p
		}, want{status: 202}},
		{"note on a commit", func() (string, any) {
			ev, p := forgetest.GitLabIssueNote(issue, "/longrun", "alice")
			p.(map[string]any)["object_attributes"].(map[string]any)["noteable_type"] = "Commit"
			return ev, p
		}, want{status: 202}},
		{"an issue iid of 0", func() (string, any) {
			is := issue
			is.IID = 0
			return forgetest.GitLabLabeled(is, "longrun", "alice")
		}, want{status: 400}},
		{"push hook", func() (string, any) { return "Push Hook", map[string]any{"object_kind": "push"} }, want{status: 202}},
		{"an issue under the Note Hook header", func() (string, any) {
			_, p := forgetest.GitLabLabeled(issue, "longrun", "alice")
			return "Note Hook", p
		}, want{kind: forge.Start, session: session}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, p := tc.hook()
			body, err := json.Marshal(p)
			require.NoError(t, err)
			a, err := cfg.ParseGitLab(ev, body)
			if tc.want.status != 0 {
				var r *forge.Refusal
				require.True(t, errors.As(err, &r), "want a refusal, got %v (%+v)", err, a)
				require.Equal(t, tc.want.status, r.Status, r.Reason)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want.kind, a.Kind)
			require.Equal(t, tc.want.session, a.Session)
			require.Equal(t, tc.want.call, a.Call)
			require.Equal(t, "app", a.WorkDir)
			require.Equal(t, "acme/tools/app", a.Repo)
			if tc.want.text != "" {
				require.Equal(t, tc.want.text, a.Text)
			}
		})
	}
	_, err := cfg.ParseGitLab("Issue Hook", []byte("{"))
	var r *forge.Refusal
	require.True(t, errors.As(err, &r))
	require.Equal(t, 400, r.Status)
}

// A GitHub pull request's branch cannot name a GitLab issue's session.
func TestParseRefusesAGitLabSessionFromGitHub(t *testing.T) {
	t.Parallel()
	cfg := forge.HookConfig{Secret: []byte("x"), Allow: []string{"alice"}, Repos: map[string]string{"acme/app": "app"}}
	pull := forgetest.Pull{Number: 8, Repo: "acme/app", Head: "longrun/" + forge.GitLabSessionFor("acme/app", 7), Base: "main", State: "open"}
	ev, p := forgetest.ReviewCommented(pull, "a.txt", 1, "x", "alice")
	body, err := json.Marshal(p)
	require.NoError(t, err)
	_, err = cfg.Parse(ev, body)
	var r *forge.Refusal
	require.True(t, errors.As(err, &r), "%v", err)
	require.Equal(t, 403, r.Status)
}

// FuzzParseGitLab: no payload panics the parser, and whatever it accepts
// names a session a branch can hold, of a configured project, and a call
// id of safe characters.
func FuzzParseGitLab(f *testing.F) {
	cfg := forge.HookConfig{Secret: []byte("x"), Allow: []string{"alice"}, Repos: map[string]string{"acme/app": "."}}
	is := forgetest.GitLabIssue{IID: 1, Project: "acme/app", Title: "t", Description: "b"}
	mr := forgetest.MergeRequest{IID: 2, Project: "acme/app", SourceBranch: "longrun/" + forge.GitLabSessionFor("acme/app", 1)}
	add := func(ev string, p any) {
		b, _ := json.Marshal(p)
		f.Add(ev, b)
	}
	for _, note := range []string{"/approve c1", "/deny c1 no", "/longrun go", "/approve c1\r\n--all"} {
		add(forgetest.GitLabIssueNote(is, note, "alice"))
		add(forgetest.GitLabMergeRequestNote(mr, "a.go", 3, note, "alice"))
	}
	add(forgetest.GitLabLabeled(is, "longrun", "alice"))
	add(forgetest.GitLabOpenedWith(is, "longrun", "alice"))
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		a, err := cfg.ParseGitLab(event, body)
		if err != nil {
			var r *forge.Refusal
			require.True(t, errors.As(err, &r), "every error is a refusal: %v", err)
			return
		}
		require.NotEmpty(t, a.Session)
		require.Equal(t, a.Session, forge.SessionOfBranch("longrun/"+a.Session))
		require.True(t, strings.EqualFold(a.Repo, "acme/app"), a.Repo)
		require.Equal(t, "alice", a.Sender)
		require.NotContains(t, a.Call, "\n")
		require.NotContains(t, a.Call, " ")
	})
}
