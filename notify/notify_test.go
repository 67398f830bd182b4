package notify

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/untrusted"
)

func waiting() Event {
	return Event{
		Key: "s1/run-1/waiting/1.1", Event: EventWaiting, Session: "s1", Turn: 1,
		Pending: []Call{
			{CallID: "call_w", ID: "c1", Digest: "0123456789abcdef", Tool: "write", Arguments: `{"path":"NOTES.md","content":"it's <b>"}`, Reason: "write changes the workspace"},
			{CallID: "task-1/call_s", ID: "task-1/c2", Tool: "shell", Arguments: `{"command":"go test ./..."}`, Reason: "shell asks", Session: "s1/task-1"},
		},
	}
}

func TestBodyCarriesPendingCallsAndCommands(t *testing.T) {
	t.Parallel()
	raw, err := NewBody(waiting(), Render{ConsoleURL: "http://inbox.example/", Address: "temporal.example:7233", Namespace: "team"}).Marshal()
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, "waiting", got["event"])
	require.Equal(t, "s1", got["session"])
	require.Equal(t, "s1/run-1/waiting/1.1", got["idempotency_key"])
	require.Equal(t, "http://inbox.example/", got["inbox_url"])
	require.Equal(t, "http://inbox.example/session?id=s1#call-c1", got["session_url"], "the console's link to the session, at its first waiting call")
	require.Equal(t, "Session s1 is waiting for approval of 2 tool call(s).", got["text"])
	pending := got["pending"].([]any)
	require.Len(t, pending, 2)
	p := pending[0].(map[string]any)
	require.Equal(t, "call_w", p["call_id"])
	require.Equal(t, "write", p["tool"])
	require.Equal(t, `{"path":"NOTES.md","content":"it's <b>"}`, p["arguments"])
	require.Equal(t, "write changes the workspace", p["reason"])
	require.Equal(t, map[string]any{
		"approve":        "longrun --address temporal.example:7233 --namespace team approve s1 c1",
		"deny":           "longrun --address temporal.example:7233 --namespace team deny s1 c1 --feedback 'why'",
		"approve_signal": `temporal workflow signal --address temporal.example:7233 --namespace team --workflow-id s1 --name approval --input '{"id":"c1","digest":"0123456789abcdef","decision":"approve"}'`,
		"deny_signal":    `temporal workflow signal --address temporal.example:7233 --namespace team --workflow-id s1 --name approval --input '{"id":"c1","digest":"0123456789abcdef","decision":"deny","feedback":"why"}'`,
	}, p["commands"])
	require.Equal(t, "s1/task-1", pending[1].(map[string]any)["session"])
}

func TestBodyOfEndEventsHasAnEmptyPendingList(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		ev   Event
		text string
	}{
		{"completed", Event{Key: "k", Event: EventCompleted, Session: "s", Status: "completed", Turn: 3, FinalText: "done"}, "Session s completed after 3 turn(s)."},
		{"failed", Event{Key: "k", Event: EventFailed, Session: "s", Status: "failed", Error: "turn 1: model call failed"}, "Session s failed: turn 1: model call failed"},
		{"budget", Event{Key: "k", Event: EventBudget, Session: "s", Status: "budget", Error: "30 tokens used"}, "Session s stopped on its budget: 30 tokens used"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			raw, err := NewBody(tt.ev, Render{}).Marshal()
			require.NoError(t, err)
			var got map[string]any
			require.NoError(t, json.Unmarshal(raw, &got))
			require.Equal(t, tt.name, got["event"])
			require.Equal(t, tt.text, got["text"])
			require.Equal(t, []any{}, got["pending"], "pending is always a list")
			require.NotContains(t, got, "inbox_url")
		})
	}
}

func TestCommandsQuoteForTheShell(t *testing.T) {
	t.Parallel()
	c := Render{}.commands("my session", Call{ID: "c'1", CallID: "model's", Digest: "0123456789abcdef"})
	require.Equal(t, `longrun approve 'my session' 'c'\''1'`, c.Approve)
	require.Equal(t, `temporal workflow signal --workflow-id 'my session' --name approval --input '{"id":"c'\''1","digest":"0123456789abcdef","decision":"approve"}'`, c.ApproveSignal)
}

// TestSignature: the signature is the HMAC-SHA256 of the documented text
// (computed here by hand), and Verify refuses a post whose timestamp,
// event, idempotency key or body was changed, or that is replayed after
// the window (issue 28: the headers were outside the signed body).
func TestSignature(t *testing.T) {
	t.Parallel()
	secret, body := []byte("Jefe"), []byte(`{"event":"waiting"}`)
	at := time.Unix(1700000000, 0)
	sig := Sign(secret, at, "waiting", "s1/run-1/waiting/1", body)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("1700000000\nwaiting\ns1/run-1/waiting/1\n" + `{"event":"waiting"}`))
	require.Equal(t, "t=1700000000,v1="+hex.EncodeToString(mac.Sum(nil)), sig)

	ok := func(sig, event, key string, body []byte, now time.Time) error {
		return Verify(secret, sig, event, key, body, now)
	}
	require.NoError(t, ok(sig, "waiting", "s1/run-1/waiting/1", body, at.Add(ReplayWindow)))
	require.NoError(t, ok(sig, "waiting", "s1/run-1/waiting/1", body, at.Add(-ReplayWindow)), "a receiver's clock a little behind")
	for name, err := range map[string]error{
		"another event":        ok(sig, "completed", "s1/run-1/waiting/1", body, at),
		"another key":          ok(sig, "waiting", "s1/run-1/waiting/2", body, at),
		"another body":         ok(sig, "waiting", "s1/run-1/waiting/1", []byte(`{"event":"waiting "}`), at),
		"another secret":       Verify([]byte("jefe"), sig, "waiting", "s1/run-1/waiting/1", body, at),
		"another timestamp":    ok(strings.Replace(sig, "t=1700000000", "t=1700000300", 1), "waiting", "s1/run-1/waiting/1", body, at),
		"the v1 of a body sig": ok("t=1700000000,v1="+hex.EncodeToString(hmac.New(sha256.New, secret).Sum(nil)), "waiting", "s1/run-1/waiting/1", body, at),
	} {
		require.ErrorIs(t, err, ErrBadSignature, name)
	}
	err := ok(sig, "waiting", "s1/run-1/waiting/1", body, at.Add(ReplayWindow+time.Second))
	require.ErrorIs(t, err, ErrStaleSignature, "replayed after the window")
	require.ErrorContains(t, err, "2023-11-14T22:13:20Z")
	require.ErrorIs(t, ok(sig, "waiting", "s1/run-1/waiting/1", body, at.Add(-ReplayWindow-time.Second)), ErrStaleSignature)
	for _, bad := range []string{"", "sha256=" + hex.EncodeToString(mac.Sum(nil)), "t=x,v1=00", "v1=00", "t=1700000000", "t=1,t=2,v1=00", "t=1700000000;v1=00"} {
		require.ErrorIs(t, ok(bad, "waiting", "s1/run-1/waiting/1", body, at), ErrMalformedSignature, bad)
	}
	// A second v1 (a rotated secret beside the current one) is fine.
	require.NoError(t, ok(sig+",v1=00", "waiting", "s1/run-1/waiting/1", body, at))
}

func TestSlackMessage(t *testing.T) {
	t.Parallel()
	m := NewSlack(waiting(), Render{ConsoleURL: "http://inbox.example/"})
	raw, err := m.Marshal()
	require.NoError(t, err)
	var got struct {
		Text   string `json:"text"`
		Blocks []struct {
			Type string `json:"type"`
			Text struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"text"`
		} `json:"blocks"`
	}
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, "Session s1 is waiting for approval of 2 tool call(s).", got.Text)
	require.Len(t, got.Blocks, 4) // summary, two calls, inbox link
	for _, b := range got.Blocks {
		require.Equal(t, "section", b.Type)
		require.Equal(t, "mrkdwn", b.Text.Type)
	}
	call := got.Blocks[1].Text.Text
	require.Contains(t, call, "`write` `c1` — `write changes the workspace`")
	require.Contains(t, call, "&lt;b&gt;", "mrkdwn's <, > and & are escaped: arguments cannot ping or hide a link")
	require.NotContains(t, call, "<b>")
	require.Contains(t, call, "approve: `longrun approve s1 c1`")
	require.Contains(t, call, `without the CLI: `+"`"+`temporal workflow signal --workflow-id s1 --name approval --input '{"id":"c1","digest":"0123456789abcdef","decision":"approve"}'`+"`")
	require.Equal(t, "<http://inbox.example/session?id=s1#call-c1|Open the session> · <http://inbox.example/|the approval inbox>", got.Blocks[3].Text.Text)
}

func TestSlackMessageStaysWithinSlackLimits(t *testing.T) {
	t.Parallel()
	ev := Event{Key: "k", Event: EventWaiting, Session: "s"}
	for i := 0; i < 30; i++ {
		ev.Pending = append(ev.Pending, Call{CallID: "c", Tool: "write", Arguments: strings.Repeat("é", 5000)})
	}
	m := NewSlack(ev, Render{})
	require.Len(t, m.Blocks, 1+slackMaxCalls+1)
	require.Contains(t, m.Blocks[len(m.Blocks)-1].Text.Text, "and 20 more waiting call(s)")
	for _, b := range m.Blocks {
		require.LessOrEqual(t, len(b.Text.Text), slackMaxSection)
	}
}

// receiver is a webhook that records what it was sent and answers with
// status.
type receiver struct {
	mu     sync.Mutex
	status int
	got    []*http.Request
	bodies [][]byte
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.got, r.bodies = append(r.got, req), append(r.bodies, body)
	st := r.status
	r.mu.Unlock()
	w.WriteHeader(st)
	_, _ = w.Write([]byte("answer"))
}

func (r *receiver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.got)
}

func TestSendSignsAndNeverRepeatsADelivery(t *testing.T) {
	t.Parallel()
	hook, slack := &receiver{status: 204}, &receiver{status: 200}
	hs, ss := httptest.NewServer(hook), httptest.NewServer(slack)
	defer hs.Close()
	defer ss.Close()
	secret := []byte("s3cret")
	at := time.Unix(1700000000, 0)
	s := &Sender{Webhooks: []string{hs.URL + "/hook?token=abc"}, Slack: []string{ss.URL}, Secret: secret, Dir: t.TempDir(), Now: func() time.Time { return at }}
	ev := waiting()
	res, err := s.Send(context.Background(), ev)
	require.NoError(t, err)
	require.Equal(t, Result{Delivered: []string{"webhook 1", "slack 1"}}, res)
	require.Equal(t, 1, hook.count())
	req, body := hook.got[0], hook.bodies[0]
	require.Equal(t, ev.Key, req.Header.Get(HeaderIdempotencyKey))
	require.Equal(t, "waiting", req.Header.Get(HeaderEvent))
	require.Equal(t, "application/json", req.Header.Get("Content-Type"))
	require.True(t, strings.HasPrefix(req.Header.Get(HeaderSignature), "t=1700000000,v1="), req.Header.Get(HeaderSignature))
	require.NoError(t, VerifyRequest(secret, req, body, at.Add(time.Minute)), "the signature covers the headers and the body sent")
	require.NoError(t, VerifyRequest(secret, slack.got[0], slack.bodies[0], at), "Slack's post is signed too")
	var b Body
	require.NoError(t, json.Unmarshal(body, &b))
	require.Equal(t, "waiting", b.Event)
	var sm SlackMessage
	require.NoError(t, json.Unmarshal(slack.bodies[0], &sm))
	require.NotEmpty(t, sm.Blocks)

	// The retry of an attempt that delivered (a worker killed before it
	// reported): nothing is posted again.
	res, err = s.Send(context.Background(), ev)
	require.NoError(t, err)
	require.Equal(t, Result{AlreadyDelivered: []string{"webhook 1", "slack 1"}}, res)
	require.Equal(t, 1, hook.count())
	require.Equal(t, 1, slack.count())

	// Another key is another notification.
	ev.Key = "s1/run-1/waiting/2.1"
	_, err = s.Send(context.Background(), ev)
	require.NoError(t, err)
	require.Equal(t, 2, hook.count())
}

// TestDeliveryRecordSyncsItsName: the record of a delivery is synced with
// its directory, so a power loss right after the post cannot forget it
// (the sink would get the event twice); a directory that cannot be synced
// is an error the attempt reports, not a delivery quietly unrecorded.
func TestDeliveryRecordSyncsItsName(t *testing.T) {
	t.Parallel()
	hook := &receiver{status: 204}
	hs := httptest.NewServer(hook)
	defer hs.Close()
	dir := t.TempDir()
	var synced []string
	s := &Sender{Webhooks: []string{hs.URL}, Dir: dir}
	s.w.SyncDir = func(d string) error { synced = append(synced, d); return nil }
	_, err := s.Send(context.Background(), waiting())
	require.NoError(t, err)
	require.Equal(t, []string{dir}, synced, "the record's directory is synced after the record")

	s.w.SyncDir = func(string) error { return errors.New("disk gone") }
	ev := waiting()
	ev.Key = "s1/run-1/waiting/2.1"
	_, err = s.Send(context.Background(), ev)
	require.ErrorContains(t, err, "delivered, but record delivery")
	require.ErrorContains(t, err, "disk gone")
}

func TestSendRetriesOnlyTheSinksThatFailed(t *testing.T) {
	t.Parallel()
	good, bad := &receiver{status: 200}, &receiver{status: 503}
	gs, bs := httptest.NewServer(good), httptest.NewServer(bad)
	defer gs.Close()
	defer bs.Close()
	s := &Sender{Webhooks: []string{gs.URL, bs.URL + "/secret-token"}, Dir: t.TempDir()}
	res, err := s.Send(context.Background(), waiting())
	require.Error(t, err)
	require.Contains(t, err.Error(), "webhook 2: HTTP 503 answer")
	var rej *RejectedError
	require.False(t, errors.As(err, &rej), "a 5xx is retried")
	require.Equal(t, []string{"webhook 1"}, res.Delivered)

	bad.mu.Lock()
	bad.status = 200
	bad.mu.Unlock()
	res, err = s.Send(context.Background(), waiting())
	require.NoError(t, err)
	require.Equal(t, Result{Delivered: []string{"webhook 2"}, AlreadyDelivered: []string{"webhook 1"}}, res)
	require.Equal(t, 1, good.count())
	require.Equal(t, 2, bad.count())
}

func TestSendRejectionIsFinalAndErrorsNeverNameTheURL(t *testing.T) {
	t.Parallel()
	r := &receiver{status: 404}
	srv := httptest.NewServer(r)
	defer srv.Close()
	s := &Sender{Webhooks: []string{srv.URL + "/T000/B000/xoxsecret"}}
	_, err := s.Send(context.Background(), waiting())
	var rej *RejectedError
	require.ErrorAs(t, err, &rej)
	require.Equal(t, 404, rej.Status)
	require.NotContains(t, err.Error(), "xoxsecret")

	srv.Close() // now the connection is refused
	_, err = s.Send(context.Background(), waiting())
	require.Error(t, err)
	require.False(t, errors.As(err, &rej))
	require.NotContains(t, err.Error(), "xoxsecret")
	require.NotContains(t, err.Error(), srv.URL)
}

func TestSendRefusesAnEventWithoutAKey(t *testing.T) {
	t.Parallel()
	s := &Sender{Webhooks: []string{"http://127.0.0.1:1/"}}
	_, err := s.Send(context.Background(), Event{Event: EventCompleted})
	require.ErrorContains(t, err, "without an idempotency key")
}

func TestParseURL(t *testing.T) {
	t.Parallel()
	require.NoError(t, ParseURL("--notify", "https://hooks.example/x?token=1"))
	err := ParseURL("--notify", "ftp://x/secret")
	require.ErrorContains(t, err, `want an http:// or https:// URL, got scheme "ftp"`)
	require.NotContains(t, err.Error(), "secret")
	err = ParseURL("--notify", "http://[::1/secret")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "secret")
	require.ErrorContains(t, ParseURL("--notify-slack", "https:///path"), "no host")
}

// A hostile call cannot make structure in Slack (no mention, link, heading
// or end of its code block, no new line from its id), and the webhook
// carries it rendered beside the raw strings, with what the session cut.
func TestNotificationsRenderHostileCallsVisibly(t *testing.T) {
	t.Parallel()
	args := "{\"command\":\"go test ./... #\r\x1b[2K\u202e```\n<!channel> *bold* <http://evil|Approve in one click>" + strings.Repeat(" ", 500) + "; touch pwned\"}"
	ev := Event{Key: "k", Event: EventWaiting, Session: "s1", Pending: []Call{{
		CallID: "c1`\n### Reviewed by security: safe", ID: "c1`\n### Reviewed by security: safe", Tool: "shell", Arguments: args, Reason: "asks",
		Cut: &untrusted.Cut{Bytes: 21034, Lines: 150},
	}}}
	m := NewSlack(ev, Render{ConsoleURL: "http://inbox.example/"})
	call := m.Blocks[1].Text.Text
	for _, raw := range []string{"\x1b", "\r", "\u202e", "<!channel>", "<http://evil", "\n###"} {
		require.NotContains(t, call, raw)
	}
	require.Equal(t, 2, strings.Count(call, "```"), "only the block's own fences: %s", call)
	require.Contains(t, call, "`c1⟨U+0060⟩ ↵ ### Reviewed by security: safe`")
	require.Contains(t, call, `#\r\x1b[2K⟨U+202E⟩⟨U+0060⟩⟨U+0060⟩⟨U+0060⟩`)
	require.Contains(t, call, "⟨500 spaces⟩; touch pwned")
	require.Contains(t, call, "… 21,034 more bytes, 150 more lines hidden; the whole call: http://inbox.example/session?id=s1#call-")
	require.Contains(t, call, "deny: `longrun deny s1 $'c1⟨U+0060⟩\\x0a### Reviewed by security: safe'", "a backtick in a command cannot end its code")
	require.Contains(t, call, "approve: only after seeing it whole (the whole call: http://inbox.example/session?id=s1#call-")
	require.NotContains(t, call, "longrun approve", "a cut call offers no ready approve command")

	var body map[string]any
	raw, err := NewBody(ev, Render{}).Marshal()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &body))
	p := body["pending"].([]any)[0].(map[string]any)
	require.Equal(t, args, p["arguments"], "the raw string as the model wrote it")
	shown := p["shown"].(map[string]any)
	require.Equal(t, "c1` ↵ ### Reviewed by security: safe", shown["call_id"])
	require.NotContains(t, shown["arguments"], "\x1b")
	require.Contains(t, shown["arguments"], `#\r\x1b[2K⟨U+202E⟩`)
	require.Equal(t, "… 21,034 more bytes, 150 more lines hidden; the whole call: longrun pending --full s1", shown["hidden"])
}

// A section past Slack's limit says how much it hides.
func TestSlackSectionSaysWhatItCuts(t *testing.T) {
	t.Parallel()
	b := section(strings.Repeat("x", slackMaxSection+500))
	require.LessOrEqual(t, len(b.Text.Text), slackMaxSection)
	require.Contains(t, b.Text.Text, "… 580 more bytes hidden; the inbox has it all")
}

// TestEndNotificationSaysWhatToReview (issue 29): every notification says
// what the session was asked and where; a completed one names its branch,
// its changes and the commands that review, apply or discard them, in the
// signed body and in Slack.
func TestEndNotificationSaysWhatToReview(t *testing.T) {
	t.Parallel()
	ev := Event{Key: "k", Event: EventCompleted, Session: "fix-1", Status: "completed", Turn: 4,
		Task: "fix the flaky test", Repo: "/src/app", Branch: "longrun/session-fix-1",
		Changes: &checkout.Stat{Files: 2, Insertions: 10, Deletions: 2, Paths: []string{"a.go", "b_test.go"}}}
	r := Render{Address: "temporal.example:7233"}
	raw, err := NewBody(ev, r).Marshal()
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, `Session fix-1 completed after 4 turn(s). Asked: "fix the flaky test"; repository /src/app; branch longrun/session-fix-1: 2 files changed, +10 -2.`, got["text"])
	require.Equal(t, "fix the flaky test", got["task"])
	require.Equal(t, "/src/app", got["repository"])
	require.Equal(t, "longrun/session-fix-1", got["branch"])
	require.Equal(t, map[string]any{"files": 2.0, "insertions": 10.0, "deletions": 2.0, "paths": []any{"a.go", "b_test.go"}}, got["changes"])
	require.Equal(t, map[string]any{
		"diff":    "longrun --address temporal.example:7233 diff fix-1",
		"apply":   "longrun --address temporal.example:7233 apply fix-1",
		"discard": "longrun --address temporal.example:7233 discard fix-1",
	}, got["review"])

	head := NewSlack(ev, r).Blocks[0].Text.Text
	require.Contains(t, head, "branch longrun/session-fix-1: 2 files changed, +10 -2.")
	require.Contains(t, head, "files: a.go, b_test.go")
	require.Contains(t, head, "review: `longrun --address temporal.example:7233 diff fix-1` · apply: `longrun --address temporal.example:7233 apply fix-1`")

	// A waiting session: what it was asked and where, no review yet; a
	// hostile task shows on one line, its controls visible.
	w := waiting()
	w.Task, w.Workspace = "say hi\x1b[2K\nrm -rf", "sub"
	b := NewBody(w, Render{})
	require.Nil(t, b.Review)
	require.Contains(t, b.Text, "Session s1 is waiting for approval of 2 tool call(s). Asked: ")
	require.Contains(t, b.Text, "in place, in the worker's workspace (sub).")
	require.NotContains(t, b.Text, "\x1b")
	require.NotContains(t, b.Text, "\n")
}

// The end notification names the session's pull request: in the body's
// pull_request as the forge answered it, in its text and in Slack made
// visible, linked only when it is a web URL; a failed publish says why.
func TestEndNotificationNamesThePullRequest(t *testing.T) {
	t.Parallel()
	ev := Event{Key: "k", Event: EventCompleted, Session: "fix-1", Status: "completed", Turn: 4,
		Repo: "/src/app", Branch: "longrun/session-fix-1", PullRequest: "https://forge.test/acme/app/pull/7"}
	raw, err := NewBody(ev, Render{}).Marshal()
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(raw, &got))
	require.Equal(t, "https://forge.test/acme/app/pull/7", got["pull_request"])
	require.NotContains(t, got, "push_error")
	require.Equal(t, "Session fix-1 completed after 4 turn(s). repository /src/app; branch longrun/session-fix-1; pull request https://forge.test/acme/app/pull/7.", got["text"])
	head := NewSlack(ev, Render{}).Blocks[0].Text.Text
	require.Contains(t, head, "\npull request: <https://forge.test/acme/app/pull/7|https://forge.test/acme/app/pull/7>")

	for _, tc := range []struct{ name, url, slack string }{
		{"javascript", "javascript:alert(1)", "\npull request: `javascript:alert(1)`"},
		{"newline and markup", "https://x/)\n# Approve <!channel>", "\npull request: `https://x/) ↵ # Approve &lt;!channel&gt;`"},
		{"controls", "https://x/\x1b]8;;http://evil/\x07ok", "\npull request: `https://x/\\x1b]8;;http://evil/\\x07ok`"},
		{"a | cannot relabel the link", "https://x/|Approve", "\npull request: <https://x/%7CApprove|https://x/|Approve>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ev := ev
			ev.PullRequest = tc.url
			b := NewBody(ev, Render{})
			require.Equal(t, tc.url, b.PullRequest, "the body carries the forge's answer; its text shows it")
			require.NotContains(t, b.Text, "\n")
			require.NotContains(t, b.Text, "\x1b")
			head := NewSlack(ev, Render{}).Blocks[0].Text.Text
			require.Contains(t, head, tc.slack)
			require.NotContains(t, head, "<!channel>")
			require.NotContains(t, head, "<javascript:")
			require.NotContains(t, head, "\x1b")
		})
	}

	ev.PullRequest, ev.PushError = "", "the forge refused: 401 Bad credentials\n<!here>"
	b := NewBody(ev, Render{})
	require.Equal(t, ev.PushError, b.PushError)
	require.Contains(t, b.Text, "not published: the forge refused: 401 Bad credentials ↵ <!here>.")
	head = NewSlack(ev, Render{}).Blocks[0].Text.Text
	require.Contains(t, head, "not published: the forge refused: 401 Bad credentials ↵ &lt;!here&gt;.")
	require.NotContains(t, head, "pull request:")
}
