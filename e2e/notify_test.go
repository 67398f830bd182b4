package e2e

import (
	"github.com/longrun/longrun/callref"

	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/longrun/longrun/notify"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// notice is one post the test receiver got.
type notice struct {
	path, key, event, signature string
	body                        []byte
	parsed                      struct {
		Event    string `json:"event"`
		Session  string `json:"session"`
		Key      string `json:"idempotency_key"`
		Status   string `json:"status"`
		Error    string `json:"error"`
		InboxURL string `json:"inbox_url"`
		Pending  []struct {
			CallID    string            `json:"call_id"`
			ID        string            `json:"id"`
			Digest    string            `json:"digest"`
			Tool      string            `json:"tool"`
			Arguments string            `json:"arguments"`
			Reason    string            `json:"reason"`
			Commands  map[string]string `json:"commands"`
		} `json:"pending"`
		Blocks []json.RawMessage `json:"blocks"` // Slack's
	}
}

// hold stops the first webhook post of an event: before any answer
// (a post cut off mid-flight), or after a 200's headers with its body
// held back (a post the worker saw succeed, then died before reporting).
type hold struct {
	event        string
	afterHeaders bool
	arrived      chan *notice  // the held post, once it is in
	release      chan struct{} // closed by the test to let it finish
}

// webhookReceiver is a test webhook: /hook takes the generic body, /slack
// the Slack message. It records every post and holds those it is told to.
type webhookReceiver struct {
	mu      sync.Mutex
	notices []*notice
	holds   []*hold
}

func (r *webhookReceiver) holdNext(event string, afterHeaders bool) *hold {
	h := &hold{event: event, afterHeaders: afterHeaders, arrived: make(chan *notice, 1), release: make(chan struct{})}
	r.mu.Lock()
	r.holds = append(r.holds, h)
	r.mu.Unlock()
	return h
}

func (r *webhookReceiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	n := &notice{path: req.URL.Path, key: req.Header.Get("Idempotency-Key"), event: req.Header.Get("X-Longrun-Event"),
		signature: req.Header.Get("X-Longrun-Signature"), body: body}
	_ = json.Unmarshal(body, &n.parsed)
	r.mu.Lock()
	r.notices = append(r.notices, n)
	var h *hold
	if req.URL.Path == "/hook/tok-n0tify" {
		for i, x := range r.holds {
			if x.event == n.event {
				h = x
				r.holds = append(r.holds[:i], r.holds[i+1:]...)
				break
			}
		}
	}
	r.mu.Unlock()
	if h == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	if h.afterHeaders {
		w.Header().Set("Content-Length", "2")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
	}
	h.arrived <- n
	<-h.release
	if !h.afterHeaders {
		w.WriteHeader(http.StatusOK)
	}
	_, _ = w.Write([]byte("ok"))
}

// of returns the posts to path for session and event, by their headers
// (a Slack message does not name the session; its key does).
func (r *webhookReceiver) of(path, session, event string) []*notice {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []*notice
	for _, n := range r.notices {
		if strings.HasPrefix(n.path, path) && strings.HasPrefix(n.key, session+"/") && n.event == event {
			out = append(out, n)
		}
	}
	return out
}

// killWorker SIGKILLs the worker: no shutdown, whatever it was doing.
func (e *env) killWorker() {
	e.t.Helper()
	require.NoError(e.t, e.worker.Process.Kill())
	_ = e.worker.Wait()
}

// A worker with a signed webhook and a Slack-compatible one tells of each
// event once: waiting (every pending call, the commands, the inbox link),
// completed, failed and budget. Killed mid-post, the restarted worker
// posts the notification again with the same Idempotency-Key; killed
// after the receiver's 2xx, it never posts it again.
func TestNotificationsOncePerEventAcrossWorkerKills(t *testing.T) {
	t.Parallel()
	recv := &webhookReceiver{}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	const secret = "n0tify-secret-" + "e2e"
	hookURL, slackURL := srv.URL+"/hook/tok-n0tify", srv.URL+"/slack/T0/B0/tok-sl4ck"
	usage := &sm.Usage{PromptTokens: 10, CompletionTokens: 5}
	e := &env{
		t: t,
		model: sm.New(
			// Session 1: a write waits for a person, then the model is done.
			sm.Reply{ToolCalls: []sm.Call{{ID: "c_w", Name: "write", Arguments: `{"path":"NOTES.md","content":"hello"}`}}},
			sm.Text("written"),
			// Session 2: the model rejects the request: failed.
			sm.Reply{Status: 400, ErrorMessage: "bad request from the test"},
			// Session 3: one turn spends the token budget.
			sm.Reply{ToolCalls: []sm.Call{{ID: "c_l", Name: "list", Arguments: `{}`}}, Usage: usage},
		),
		workspace:  t.TempDir(),
		stateDir:   t.TempDir(),
		configDir:  t.TempDir(),
		taskQueue:  "e2e-" + randHex(6),
		apiKey:     "sk-test-" + randHex(16),
		workerArgs: []string{"--notify", hookURL, "--notify-slack", slackURL, "--console-url", "http://inbox.test/"},
		workerEnv:  []string{"LONGRUN_NOTIFY_SECRET=" + secret},
	}
	t.Cleanup(e.model.Close)
	e.startWorker()

	signed := func(n *notice) {
		t.Helper()
		// The documented scheme, computed here rather than by notify:
		// t=<unix>,v1=HMAC(t "\n" event "\n" key "\n" body).
		ts, mac16, ok := strings.Cut(strings.TrimPrefix(n.signature, "t="), ",v1=")
		require.True(t, ok, "signature %q of %s %s", n.signature, n.path, n.key)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "\n" + n.event + "\n" + n.key + "\n"))
		mac.Write(n.body)
		require.Equal(t, hex.EncodeToString(mac.Sum(nil)), mac16, "signature of %s %s", n.path, n.key)
		require.NoError(t, notify.Verify([]byte(secret), n.signature, n.event, n.key, n.body, time.Now()))
	}

	// Session 1, waiting: the first post is held unanswered and the
	// worker killed; the restarted worker posts it again, same key.
	cut := recv.holdNext("waiting", false)
	id := e.start(workflows.SessionInput{Prompt: "write the notes"})
	var first *notice
	select {
	case first = <-cut.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("no waiting notification within 60s")
	}
	e.killWorker()
	close(cut.release)
	e.startWorker()
	var again []*notice
	waitFor(t, "the waiting notification posted again by the restarted worker", 90*time.Second, func() bool {
		again = recv.of("/hook", id, "waiting")
		return len(again) == 2 && len(recv.of("/slack", id, "waiting")) == 1
	})
	require.Equal(t, first.key, again[1].key, "a redelivery carries the same Idempotency-Key")
	require.Equal(t, first.body, again[1].body)
	w := again[1].parsed
	require.Equal(t, "waiting", w.Event)
	require.Equal(t, first.key, w.Key)
	require.Equal(t, "http://inbox.test/", w.InboxURL)
	require.Len(t, w.Pending, 1)
	p := w.Pending[0]
	require.Equal(t, "c_w", p.CallID)
	require.Equal(t, "c1", p.ID, "the session's id, the one the commands name")
	require.Equal(t, "write", p.Tool)
	require.Equal(t, `{"path":"NOTES.md","content":"hello"}`, p.Arguments)
	require.Equal(t, callref.Digest("write", p.Arguments), p.Digest)
	require.NotEmpty(t, p.Reason)
	require.Equal(t, "longrun --address "+temporalAddr+" approve "+id+" c1", p.Commands["approve"])
	require.Equal(t, "temporal workflow signal --address "+temporalAddr+" --workflow-id "+id+
		` --name approval --input '{"id":"c1","digest":"`+callref.Short(p.Digest)+`","decision":"approve"}'`, p.Commands["approve_signal"])
	sl := recv.of("/slack", id, "waiting")[0]
	require.NotEmpty(t, sl.parsed.Blocks, "the Slack sink gets blocks")
	require.Contains(t, string(sl.body), "approve "+id+" c1")

	// Session 1, completed: the receiver answers 200 and holds the body;
	// the worker has recorded the delivery, and is killed before it can
	// report it. The restarted worker's retry must not post it again.
	delivered := recv.holdNext("completed", true)
	out, err := e.starter("approve", id, "c_w")
	require.NoError(t, err, out)
	var done *notice
	select {
	case done = <-delivered.arrived:
	case <-time.After(60 * time.Second):
		t.Fatal("no completed notification within 60s")
	}
	waitFor(t, "the worker to record the delivery", 30*time.Second, func() bool {
		return recorded(t, e.stateDir, done.key)
	})
	e.killWorker()
	close(delivered.release)
	e.startWorker()
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Len(t, recv.of("/hook", id, "completed"), 1, "a post that got its 2xx is never repeated")
	require.Len(t, recv.of("/slack", id, "completed"), 1)
	// The completion really was retried on the new worker, which found
	// the record: otherwise the check above proves nothing.
	retried := notifyAttempts(t, id, "completed")
	require.GreaterOrEqual(t, retried.attempt, int32(2), "the completed notification was retried after the kill")
	require.Contains(t, retried.result, `"already_delivered":["webhook 1"]`)
	e.checkSession(id)
	recordHistory(t, id, "notify_waiting_completed")

	// Session 2 fails, session 3 stops on its budget.
	failed := e.start(workflows.SessionInput{Prompt: "fail"})
	require.Equal(t, workflows.ResultFailed, result(t, failed).Status)
	budget := e.start(workflows.SessionInput{Prompt: "spend", TokenBudget: 10})
	require.Equal(t, workflows.ResultBudget, result(t, budget).Status)

	// One message per event and sink; every webhook post signed.
	for _, c := range []struct{ session, event string }{{id, "completed"}, {failed, "failed"}, {budget, "budget"}} {
		hooks := recv.of("/hook", c.session, c.event)
		require.Len(t, hooks, 1, "%s of %s", c.event, c.session)
		require.Len(t, recv.of("/slack", c.session, c.event), 1, "%s of %s (slack)", c.event, c.session)
		require.Equal(t, c.event, hooks[0].parsed.Event)
		require.Empty(t, hooks[0].parsed.Pending)
	}
	require.Contains(t, recv.of("/hook", failed, "failed")[0].parsed.Error, "bad request from the test")
	require.Contains(t, recv.of("/hook", budget, "budget")[0].parsed.Error, "token_budget is 10")
	recv.mu.Lock()
	all := append([]*notice(nil), recv.notices...)
	recv.mu.Unlock()
	require.Len(t, all, 2+1+1+1+1+1+1+1, "waiting twice (the cut post and its redelivery), then one per event and sink")
	for _, n := range all {
		signed(n)
	}

	// The sinks' URLs and the secret never reach history.
	for _, s := range []string{id, failed, budget} {
		h := decodedPayloads(history(t, s))
		for _, secretText := range []string{"tok-n0tify", "tok-sl4ck", secret, "inbox.test"} {
			require.False(t, bytes.Contains(h, []byte(secretText)), "%s in the history of %s", secretText, s)
		}
	}
}

// recorded reports whether the worker's state directory records key as
// delivered (notify.Sender's record files start with the key).
func recorded(t *testing.T, stateDir, key string) bool {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(stateDir, "notify", "*"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err == nil && strings.HasPrefix(string(raw), key+"\n") {
			return true
		}
	}
	return false
}

// notifyRun is the last attempt of a Notify activity and its result.
type notifyRun struct {
	attempt int32
	result  string
}

// notifyAttempts finds the session's Notify activity for event in its
// history.
func notifyAttempts(t *testing.T, id, event string) notifyRun {
	t.Helper()
	var scheduled int64
	var run notifyRun
	for _, ev := range history(t, id).Events {
		switch ev.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			a := ev.GetActivityTaskScheduledEventAttributes()
			raw, _ := protojson.Marshal(a.GetInput())
			if a.GetActivityType().GetName() == "Notify" && bytes.Contains(decodedJSON(raw), []byte(`"event":"`+event+`"`)) {
				scheduled = ev.GetEventId()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if a := ev.GetActivityTaskStartedEventAttributes(); scheduled != 0 && a.GetScheduledEventId() == scheduled {
				run.attempt = a.GetAttempt()
			}
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			if a := ev.GetActivityTaskCompletedEventAttributes(); scheduled != 0 && a.GetScheduledEventId() == scheduled {
				raw, _ := protojson.Marshal(a.GetResult())
				run.result = string(decodedJSON(raw))
			}
		}
	}
	require.NotZero(t, scheduled, "no Notify activity for %s in the history of %s", event, id)
	return run
}

// decodedJSON is raw protojson with its base64 payload data decoded.
func decodedJSON(raw []byte) []byte {
	var b bytes.Buffer
	for _, m := range payloadData.FindAllSubmatch(raw, -1) {
		if d, err := decodeB64(string(m[1])); err == nil {
			b.Write(d)
		}
	}
	return b.Bytes()
}

// A sub-agent's waiting call is notified once, by its parent (the person
// decides it there), never by the sub-agent itself; the notification's
// approve command, run as printed, decides it.
func TestNotificationOfASubagentCallDecidedByItsCommand(t *testing.T) {
	t.Parallel()
	recv := &webhookReceiver{}
	srv := httptest.NewServer(recv)
	t.Cleanup(srv.Close)
	e := &env{
		t:          t,
		model:      sm.NewResponder(subagentModel("build", sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "child.txt", "content": "from the child\n"}`})),
		workspace:  t.TempDir(),
		stateDir:   t.TempDir(),
		configDir:  t.TempDir(),
		taskQueue:  "e2e-" + randHex(6),
		apiKey:     "sk-test-" + randHex(16),
		workerArgs: []string{"--notify", srv.URL + "/hook/tok-n0tify"},
	}
	t.Cleanup(e.model.Close)
	e.startWorker()

	id := e.start(workflows.SessionInput{Prompt: "delegate"})
	child := id + "/task-1"
	var waiting []*notice
	waitFor(t, "the parent's waiting notification", 60*time.Second, func() bool {
		waiting = recv.of("/hook", id, "waiting")
		return len(waiting) == 1
	})
	w := waiting[0].parsed
	require.Equal(t, id, w.Session)
	require.Len(t, w.Pending, 1)
	require.Equal(t, child+"/c_w", w.Pending[0].CallID)
	require.True(t, strings.HasPrefix(w.Pending[0].ID, child+"/c"), w.Pending[0].ID)
	approve := w.Pending[0].Commands["approve"]
	require.Equal(t, "longrun --address "+temporalAddr+" approve "+id+" "+w.Pending[0].ID, approve)
	args := strings.Fields(strings.TrimPrefix(approve, "longrun "))
	cmd := exec.Command(filepath.Join(binDir, "starter"), args...)
	cmd.Env = append(os.Environ(), "LONGRUN_TASK_QUEUE="+e.taskQueue)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)

	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Len(t, recv.of("/hook", id, "waiting"), 1, "one wait, one notification")
	require.Len(t, recv.of("/hook", id, "completed"), 1)
	recv.mu.Lock()
	defer recv.mu.Unlock()
	for _, n := range recv.notices {
		require.NotEqual(t, child, n.parsed.Session, "the sub-agent notifies nothing itself: %s %s", n.event, n.key)
	}
	require.Len(t, recv.notices, 2)
}
