package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/follow"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// hostileReply is a reply whose text would, printed raw, clear the
// screen, paint red and retitle the terminal; long enough that its event
// must be cut.
var hostileReply = "done \x1b[2J\x1b[31mred\x1b[0m \x1b]0;pwned\x07 " + strings.Repeat("a long reply. ", 20000)

// TestEventStreamForEveryClient: one session with an approval, two runs
// switched by continue-as-new and a slowly streamed hostile reply,
// followed from its start by the follow package, `longrun events
// --follow --json` and `longrun watch --json`, then read by `longrun
// events` and the console's endpoint and page. Every client sees the
// same numbered events in order, none lost across the switches, the
// model's text never reaches a terminal raw, and reading adds nothing to
// history.
func TestEventStreamForEveryClient(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "m_w", Name: "write", Arguments: `{"path": "notes.md", "content": "hi"}`}),
		sm.Tools(sm.Call{ID: "m_r", Name: "read", Arguments: `{"path": "notes.md"}`}),
		sm.Reply{Text: hostileReply, ChunkDelay: time.Second},
	)
	id := e.start(workflows.SessionInput{Prompt: "write the notes", ContinueAsNewTurns: 1})

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	followed := make(chan []follow.Event, 1)
	go func() {
		var all []follow.Event
		for ev := range follow.Follow(ctx, tc, id, 0) {
			all = append(all, ev)
		}
		followed <- all
	}()
	eventsCLI := e.starterBackground("events", id, "--follow", "--json")
	watchCLI := e.starterBackground("watch", id, "--json", "--no-interactive")
	con := startConsole(t, e)
	cc := newConsoleClient(t, con)

	p := waitPending(t, id, 1)
	require.Equal(t, "c1", p[0].ID)
	out, err := e.starter("approve", id, "c1")
	require.NoError(t, err, out)
	// The console's page shows the reply while it is written.
	var writing string
	waitFor(t, "the console to show the reply being written", 90*time.Second, func() bool {
		page := cc.get("/session?id=" + id)
		if i := strings.Index(page, "<h2>Writing</h2>"); i >= 0 {
			writing, _, _ = strings.Cut(page[i:], "</section>")
			return true
		}
		return false
	})
	require.Contains(t, writing, "a long reply.")
	require.NotContains(t, writing, "\x1b")
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)

	var all []follow.Event
	select {
	case all = <-followed:
	case <-ctx.Done():
		t.Fatal("follow did not end after the session closed")
	}
	evs, seqs := sessionEvents(all)
	lines := summaries(evs)
	t.Logf("events:\n%s", strings.Join(lines, "\n"))

	// In order, numbered without a gap across both switches of run.
	for i, s := range seqs {
		require.Equal(t, int64(i+1), s, "event %d", i)
	}
	requireInOrder(t, lines,
		"user_message",
		"turn_started",
		"call_proposed c1 write ask",
		"phase waiting-approval",
		"call_decided c1 write approve by person",
		"call_started c1 write",
		"call_finished c1 write ran",
		"call_proposed c2 read allow by policy",
		"call_finished c2 read ran",
		"text",
		"phase done",
		"session_ended completed",
	)
	runs := map[int]bool{}
	for _, ev := range evs {
		runs[ev.Run] = true
	}
	require.GreaterOrEqual(t, len(runs), 3, "the session switched runs twice and the stream went on")
	last := all[len(all)-1]
	require.Equal(t, follow.KindClosed, last.Kind)
	require.Equal(t, "completed", last.Outcome)

	// The huge reply is one bounded event, its text data as recorded.
	text := only(t, evs, eventlog.KindText)
	require.LessOrEqual(t, len(text.Text), eventlog.MaxText)
	require.Equal(t, len(hostileReply), len(text.Text)+text.Cut)
	require.True(t, strings.HasPrefix(hostileReply, text.Text))
	// The reply was seen while it was written (the heartbeat), each
	// partial the end of the text so far.
	var partials []string
	for _, ev := range all {
		if ev.Kind == follow.KindPartial {
			partials = append(partials, ev.Text)
		}
	}
	require.NotEmpty(t, partials, "no partial text while the reply streamed for ~8 s")

	// `longrun events --follow --json`: the same events, and not one raw
	// escape on the terminal.
	raw := eventsCLI.wait(t)
	require.NotContains(t, raw, "\x1b", "a raw escape reached the terminal")
	cliEvents := decodeLines[follow.Event](t, raw)
	_, cliSeqs := sessionEvents(cliEvents)
	require.Equal(t, seqs, cliSeqs, "events --follow --json")
	require.Equal(t, follow.KindClosed, cliEvents[len(cliEvents)-1].Kind)

	// `longrun watch --json`: its lines of type event are the same events.
	raw = watchCLI.wait(t)
	require.NotContains(t, raw, "\x1b")
	type watchLine struct {
		Type  string        `json:"type"`
		Event *follow.Event `json:"event"`
	}
	var watchSeqs []int64
	for _, l := range decodeLines[watchLine](t, raw) {
		if l.Type == "event" && l.Event.Seq > 0 {
			watchSeqs = append(watchSeqs, l.Event.Seq)
		}
	}
	require.Equal(t, seqs, watchSeqs, "watch --json")

	// `longrun events` on a terminal: one line an event, the model's
	// escapes shown, never sent.
	before := len(history(t, id).Events)
	out, err = e.starter("events", id)
	require.NoError(t, err, out)
	require.NotContains(t, out, "\x1b")
	require.Contains(t, out, `\x1b[31mred\x1b[0m`)
	require.Contains(t, out, "call c1 write (write: notes.md) decided: approve by person")
	require.Regexp(t, `text: done .* more bytes hidden`, out)
	require.Len(t, history(t, id).Events, before, "reading events adds nothing to history")

	// A negative or future "after": a clear error, not an empty stream.
	out, err = e.starter("events", id, "--after", "-1")
	require.Error(t, err)
	require.Contains(t, out, "--after -1: give 0 or more")
	out, err = e.starter("events", id, "--after", "100000")
	require.Error(t, err)
	require.Contains(t, out, fmt.Sprintf("after is past the last event (the last is %d; ask after %d or less)", len(seqs), len(seqs)))

	// The console: its JSON endpoint and the session page.
	var ans struct {
		Events []follow.Event `json:"events"`
		Next   int64          `json:"next"`
		Closed bool           `json:"closed"`
	}
	require.NoError(t, json.Unmarshal([]byte(cc.get("/session/events?id="+id+"&after=0")), &ans))
	_, conSeqs := sessionEvents(ans.Events)
	require.Equal(t, seqs, conSeqs, "the console's endpoint")
	require.True(t, ans.Closed)
	require.Equal(t, int64(len(seqs)+1), ans.Next)
	require.NoError(t, json.Unmarshal([]byte(cc.get(fmt.Sprintf("/session/events?id=%s&after=%d", id, len(seqs)-2))), &ans))
	require.Len(t, ans.Events, 2)
	for _, bad := range []string{"-1", "1000000", "x"} {
		code, body := consoleGet(t, con, "/session/events?id="+id+"&after="+bad)
		require.Equal(t, http.StatusBadRequest, code, body)
		require.Contains(t, body, `"error"`)
	}
	page := cc.get("/session?id=" + id)
	require.Contains(t, page, "<h2>Events</h2>")
	require.Contains(t, page, "decided: approve by person")
	require.Contains(t, page, `\x1b[31mred`)
	require.NotContains(t, page, "\x1b")
}

// TestFollowSaysWhenLostAndBack: with the session's only worker gone,
// its events cannot be read; the follower says so once, as no worker
// answering (the server does: a person is not sent to look for a dead
// server), keeps trying, says when it reads again, and loses none of the
// events made while it could not read (the approval given meanwhile by
// signal).
func TestFollowSaysWhenLostAndBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "m_w", Name: "write", Arguments: `{"path": "notes.md", "content": "hi"}`}),
		sm.Text("written"),
	)
	id := e.start(workflows.SessionInput{Prompt: "write the notes"})
	waitPending(t, id, 1)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ch := follow.FollowWith(ctx, tc, id, 0, follow.Options{Timeout: 2 * time.Second})
	var all []follow.Event
	next := func(what string, stop func(follow.Event) bool) {
		t.Helper()
		for {
			select {
			case ev, ok := <-ch:
				require.True(t, ok, "the stream ended before %s; got %v", what, summaries(eventsOf(all)))
				all = append(all, ev)
				if stop(ev) {
					return
				}
			case <-ctx.Done():
				t.Fatalf("no %s", what)
			}
		}
	}
	next("the waiting phase", func(ev follow.Event) bool {
		return ev.Kind == eventlog.KindPhase && ev.Phase == workflows.PhaseWaitingApproval
	})

	e.stopWorker()
	next("a no_worker event", func(ev follow.Event) bool { return ev.Kind == follow.KindNoWorker })
	require.Contains(t, all[len(all)-1].Text, "the server answers, but no worker answered the session's events query")
	require.Contains(t, all[len(all)-1].Text, e.taskQueue, "it names the task queue a worker must poll")
	// A decision while nobody can answer a query: the durable signal.
	require.NoError(t, tc.SignalWorkflow(context.Background(), id, "", workflows.SignalApproval, workflows.Approval{ID: "c1", Decision: "approve"}))
	e.startWorker()
	next("a back event", func(ev follow.Event) bool { return ev.Kind == follow.KindBack })
	next("the end", func(ev follow.Event) bool { return ev.Kind == follow.KindClosed })

	said := map[string]int{}
	for _, ev := range all {
		said[ev.Kind]++
	}
	require.Equal(t, 1, said[follow.KindNoWorker], "said once, not every try")
	require.Zero(t, said[follow.KindLost], "the server never stopped answering")
	evs, seqs := sessionEvents(all)
	for i, s := range seqs {
		require.Equal(t, int64(i+1), s)
	}
	requireInOrder(t, summaries(evs),
		"phase waiting-approval",
		"call_decided c1 write approve by person",
		"call_finished c1 write ran",
		"text",
		"session_ended completed",
	)
}

func eventsOf(all []follow.Event) []eventlog.Event {
	evs, _ := sessionEvents(all)
	return evs
}

// backgroundCLI is a starter command running beside the test.
type backgroundCLI struct {
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan error
}

// starterBackground starts the starter CLI with args and returns at once.
func (e *env) starterBackground(args ...string) backgroundCLI {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "starter"), args...)
	cmd.Env = append(append(os.Environ(), "TEMPORAL_ADDRESS="+temporalAddr, "LONGRUN_TASK_QUEUE="+e.taskQueue), e.starterEnv...)
	cmd.Dir = e.workspace
	out := &syncBuffer{}
	cmd.Stdout = out
	cmd.Stderr = io.Discard
	require.NoError(e.t, cmd.Start())
	b := backgroundCLI{cmd: cmd, out: out, done: make(chan error, 1)}
	go func() { b.done <- cmd.Wait() }()
	e.t.Cleanup(func() { stopProcess(cmd) })
	return b
}

// wait is the command's output once it has exited on its own.
func (b backgroundCLI) wait(t *testing.T) string {
	t.Helper()
	select {
	case err := <-b.done:
		require.NoError(t, err, "%s:\n%s", b.cmd.Args, b.out.String())
	case <-time.After(60 * time.Second):
		t.Fatalf("%s did not end after the session closed:\n%s", b.cmd.Args, b.out.String())
	}
	return b.out.String()
}

func decodeLines[T any](t *testing.T, out string) []T {
	t.Helper()
	var all []T
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v T
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), sc.Text())
		all = append(all, v)
	}
	require.NoError(t, sc.Err())
	return all
}

// sessionEvents are the session's own events of a stream (not the kinds
// the client adds) and their numbers.
func sessionEvents(all []follow.Event) ([]eventlog.Event, []int64) {
	var evs []eventlog.Event
	var seqs []int64
	for _, ev := range all {
		if ev.Seq > 0 {
			evs = append(evs, ev.Event)
			seqs = append(seqs, ev.Seq)
		}
	}
	return evs, seqs
}

func summaries(evs []eventlog.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		s := ev.Kind
		if ev.Phase != "" {
			s += " " + ev.Phase
		}
		if ev.Call != nil {
			s += " " + ev.Call.ID + " " + ev.Call.Tool
		}
		if ev.Outcome != "" {
			s += " " + ev.Outcome
		}
		if ev.Call != nil && ev.Call.By != "" {
			s += " by " + ev.Call.By
		}
		out[i] = s
	}
	return out
}

// requireInOrder checks want is a subsequence of got.
func requireInOrder(t *testing.T, got []string, want ...string) {
	t.Helper()
	i := 0
	for _, g := range got {
		if i < len(want) && g == want[i] {
			i++
		}
	}
	require.Equal(t, len(want), i, "missing or out of order from %q on; got:\n%s", want[min(i, len(want)-1)], strings.Join(got, "\n"))
}

func only(t *testing.T, evs []eventlog.Event, kind string) eventlog.Event {
	t.Helper()
	var found []eventlog.Event
	for _, ev := range evs {
		if ev.Kind == kind {
			found = append(found, ev)
		}
	}
	require.Len(t, found, 1, kind)
	return found[0]
}

// consoleGet is a logged-in GET that may fail: its status and body.
func consoleGet(t *testing.T, con console, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, con.url+path, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+con.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}
