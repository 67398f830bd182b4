package forge_test

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/forge"
	"github.com/longrun/longrun/forge/forgetest"
)

func TestVerify(t *testing.T) {
	t.Parallel()
	secret, body := []byte("s3cret"), []byte(`{"action":"labeled"}`)
	good := "sha256=" + hex.EncodeToString(forge.Sign(secret, body))
	for _, tc := range []struct {
		name, header string
		secret, body []byte
		ok           bool
	}{
		{"good", good, secret, body, true},
		{"missing", "", secret, body, false},
		{"sha1 only", "sha1=" + hex.EncodeToString(forge.Sign(secret, body)[:20]), secret, body, false},
		{"other secret", good, []byte("other"), body, false},
		{"body changed", good, secret, []byte(`{"action":"labeled" }`), false},
		{"not hex", "sha256=zz" + good[9:], secret, body, false},
		{"short", good[:len(good)-2], secret, body, false},
		{"upper case prefix", "SHA256=" + good[7:], secret, body, false},
		{"no secret configured", good, nil, body, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := forge.Verify(tc.secret, tc.body, tc.header)
			if tc.ok {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, forge.ErrBadSignature)
		})
	}
}

func TestSessionNames(t *testing.T) {
	t.Parallel()
	require.Equal(t, "gh-acme_app-7", forge.SessionFor("Acme/App", 7))
	require.Equal(t, "gh-acme_my.app-7", forge.SessionFor("acme/my.app", 7))
	require.NotEqual(t, forge.SessionFor("acme/app-x", 7), forge.SessionFor("acme-app/x", 7))
	require.NotEqual(t, forge.SessionFor("acme/app-7", 3), forge.SessionFor("acme/app", 73))
	for head, want := range map[string]string{
		"longrun/gh-acme_app-7":  "gh-acme_app-7",
		"longrun/session-1":      "session-1",
		"main":                   "",
		"longrun/":               "",
		"longrun/a/b":            "",
		"longrun/x..y":           "",
		"longrun/--force":        "",
		"feature/longrun/x":      "",
		"longrun/a\nb":           "",
		"longrun/gh-acme_app-7 ": "",
	} {
		require.Equal(t, want, forge.SessionOfBranch(head), "%q", head)
	}
}

func TestParse(t *testing.T) {
	t.Parallel()
	cfg := forge.HookConfig{Secret: []byte("x"), Allow: []string{"Alice", "bob"}, Repos: map[string]string{"acme/app": "app"}}
	issue := forgetest.Issue{Number: 7, Repo: "acme/app", Title: "Fix the greeting", Body: "It says hello.", Author: "mallory"}
	other := issue
	other.Repo = "acme/other"
	pull := forgetest.Pull{Number: 8, Repo: "acme/app", Head: "longrun/gh-acme_app-7", Base: "main", State: "open"}
	foreign := pull
	foreign.Head = "feature"
	crossed := pull
	crossed.Head = "longrun/gh-acme_app-x-7"
	prIssue := issue
	prIssue.Number = 8
	pr := issue
	type want struct {
		kind                forge.Kind
		session, text, call string
		status              int // of the refusal; 0 when an action
	}
	payload := func(event string, p any) (string, []byte) {
		b, err := json.Marshal(p)
		require.NoError(t, err)
		return event, b
	}
	for _, tc := range []struct {
		name  string
		event string
		body  []byte
		want  want
	}{
		{"labelled by an allowed user", "", nil, want{kind: forge.Start, session: "gh-acme_app-7", text: "Fix the greeting\n\nIt says hello."}},
		{"labelled, login in another case", "", nil, want{kind: forge.Start, session: "gh-acme_app-7"}},
		{"another label", "", nil, want{status: 202}},
		{"labelled by someone else", "", nil, want{status: 403}},
		{"repository not configured", "", nil, want{status: 403}},
		{"/longrun comment", "", nil, want{kind: forge.Start, session: "gh-acme_app-7", text: "Fix the greeting\n\nIt says hello.\n\nand add a test\nplease"}},
		{"plain comment", "", nil, want{status: 202}},
		{"command not first", "", nil, want{status: 202}},
		{"/approve", "", nil, want{kind: forge.Approve, session: "gh-acme_app-7", call: "c3"}},
		{"/deny with reason", "", nil, want{kind: forge.Deny, session: "gh-acme_app-7", call: "c3", text: "not that file\nuse b.txt"}},
		{"/deny without reason", "", nil, want{status: 400}},
		{"/approve a flag", "", nil, want{status: 400}},
		{"/approve nothing", "", nil, want{status: 400}},
		{"/approve id with newline", "", nil, want{kind: forge.Approve, session: "gh-acme_app-7", call: "c3"}},
		{"/approve by someone else", "", nil, want{status: 403}},
		{"review comment", "", nil, want{kind: forge.Message, session: "gh-acme_app-7", text: "Review comment on greeting.txt line 1:\n\nsay hi instead"}},
		{"review comment, /approve", "", nil, want{kind: forge.Approve, session: "gh-acme_app-7", call: "c9"}},
		{"review comment on a foreign branch", "", nil, want{status: 202}},
		{"review on another repository's session", "", nil, want{status: 403}},
		{"/approve in a pull request's conversation", "", nil, want{status: 202}},
		{"changes requested", "", nil, want{kind: forge.Message, session: "gh-acme_app-7", text: "Review (changes_requested):\n\nnot yet"}},
		{"approved, no text", "", nil, want{status: 202}},
		{"ping", "", nil, want{status: 200}},
		{"push event", "", nil, want{status: 202}},
		{"unknown event", "", nil, want{status: 400}},
		{"not json", "issues", []byte("{"), want{status: 400}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev, body := tc.event, tc.body
			switch tc.name {
			case "labelled by an allowed user":
				ev, body = payload(forgetest.Labeled(issue, "longrun", "alice"))
			case "labelled, login in another case":
				ev, body = payload(forgetest.Labeled(issue, "LongRun", "BOB"))
			case "another label":
				ev, body = payload(forgetest.Labeled(issue, "bug", "alice"))
			case "labelled by someone else":
				ev, body = payload(forgetest.Labeled(issue, "longrun", "mallory"))
			case "repository not configured":
				ev, body = payload(forgetest.Labeled(other, "longrun", "alice"))
			case "/longrun comment":
				ev, body = payload(forgetest.Commented(pr, "/longrun and add a test\nplease", "alice"))
			case "plain comment":
				ev, body = payload(forgetest.Commented(issue, "looks good", "alice"))
			case "command not first":
				ev, body = payload(forgetest.Commented(issue, "please /approve c3", "alice"))
			case "/approve":
				ev, body = payload(forgetest.Commented(issue, "/approve c3", "alice"))
			case "/deny with reason":
				ev, body = payload(forgetest.Commented(issue, "/deny c3 not that file\nuse b.txt", "alice"))
			case "/deny without reason":
				ev, body = payload(forgetest.Commented(issue, "/deny c3", "alice"))
			case "/approve a flag":
				ev, body = payload(forgetest.Commented(issue, "/approve --all", "alice"))
			case "/approve nothing":
				ev, body = payload(forgetest.Commented(issue, "/approve", "alice"))
			case "/approve id with newline":
				ev, body = payload(forgetest.Commented(issue, "/approve c3\nc4", "alice"))
			case "/approve by someone else":
				ev, body = payload(forgetest.Commented(issue, "/approve c3", "mallory"))
			case "review comment":
				ev, body = payload(forgetest.ReviewCommented(pull, "greeting.txt", 1, "say hi instead", "alice"))
			case "review comment, /approve":
				ev, body = payload(forgetest.ReviewCommented(pull, "greeting.txt", 1, "/approve c9", "alice"))
			case "review comment on a foreign branch":
				ev, body = payload(forgetest.ReviewCommented(foreign, "greeting.txt", 1, "say hi", "alice"))
			case "review on another repository's session":
				ev, body = payload(forgetest.Reviewed(crossed, "changes_requested", "x", "alice"))
			case "/approve in a pull request's conversation":
				_, p := forgetest.Commented(prIssue, "/approve c3", "alice")
				p.(map[string]any)["issue"].(map[string]any)["pull_request"] = map[string]any{"url": "https://api.github.com/repos/acme/app/pulls/8"}
				ev, body = payload("issue_comment", p)
			case "changes requested":
				ev, body = payload(forgetest.Reviewed(pull, "changes_requested", "not yet", "alice"))
			case "approved, no text":
				ev, body = payload(forgetest.Reviewed(pull, "approved", "", "alice"))
			case "ping":
				ev, body = "ping", []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`)
			case "push event":
				ev, body = "push", []byte(`{"ref":"refs/heads/main"}`)
			case "unknown event":
				ev, body = "no_such_event", []byte(`{}`)
			}
			a, err := cfg.Parse(ev, body)
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
			if tc.want.text != "" {
				require.Equal(t, tc.want.text, a.Text)
			}
		})
	}
}

// FuzzParse: no payload panics the parser, and whatever it accepts names
// a session a branch can hold and a call id of safe characters.
func FuzzParse(f *testing.F) {
	cfg := forge.HookConfig{Secret: []byte("x"), Allow: []string{"alice"}, Repos: map[string]string{"acme/app": "."}}
	is := forgetest.Issue{Number: 1, Repo: "acme/app", Title: "t", Body: "b"}
	for _, body := range []string{"/approve c1", "/deny c1 no", "/longrun go", "/approve c1\r\n--all"} {
		_, p := forgetest.Commented(is, body, "alice")
		b, _ := json.Marshal(p)
		f.Add("issue_comment", b)
	}
	f.Fuzz(func(t *testing.T, event string, body []byte) {
		a, err := cfg.Parse(event, body)
		if err != nil {
			return
		}
		require.NotEmpty(t, a.Session)
		require.Equal(t, a.Session, forge.SessionOfBranch("longrun/"+a.Session))
		require.NotContains(t, a.Call, "\n")
		require.NotContains(t, a.Call, " ")
	})
}
