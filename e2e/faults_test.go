package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// Each class of model failure, injected by the scripted server, gets the
// retries it deserves (counted as the requests the server saw) and leaves
// the session in the state a person expects.
func TestModelFaultClasses(t *testing.T) {
	t.Parallel()
	ok := sm.Text("recovered")
	contextLength := sm.Reply{
		Status: http.StatusBadRequest, ErrorCode: "context_length_exceeded",
		ErrorMessage: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens. Please reduce the length of the messages.",
	}
	tests := []struct {
		name      string
		script    []sm.Reply
		workerEnv []string
		requests  int
		// completed: the turn recovered; otherwise the session failed with
		// lastType in status and errText in the result.
		completed bool
		lastType  string
		errText   string
	}{
		{name: "429 then success", script: []sm.Reply{{Status: 429}, ok}, requests: 2, completed: true},
		{name: "503 twice then success", script: []sm.Reply{{Status: 503}, {Status: 503}, ok}, requests: 3, completed: true},
		{name: "x-should-retry false stops a 503", script: []sm.Reply{{Status: 503, Header: map[string]string{"x-should-retry": "false"}}, ok},
			requests: 1, lastType: activities.ErrTypeModelRejected, errText: "HTTP 503"},
		{name: "400 is not retried", script: []sm.Reply{{Status: 400}, ok}, requests: 1, lastType: activities.ErrTypeModelRejected, errText: "HTTP 400"},
		{name: "401 is not retried", script: []sm.Reply{{Status: 401}, ok}, requests: 1, lastType: activities.ErrTypeModelRejected, errText: "HTTP 401"},
		{name: "403 is not retried", script: []sm.Reply{{Status: 403}, ok}, requests: 1, lastType: activities.ErrTypeModelRejected, errText: "HTTP 403"},
		{name: "404 is not retried", script: []sm.Reply{{Status: 404}, ok}, requests: 1, lastType: activities.ErrTypeModelRejected, errText: "HTTP 404"},
		{name: "context length is its own type", script: []sm.Reply{contextLength, ok}, requests: 1,
			lastType: activities.ErrTypeContextLength, errText: "no longer fits the model's context window"},
		{name: "malformed JSON then success", script: []sm.Reply{{RawBody: `{"id": "x", "choices": [`}, ok}, requests: 2, completed: true},
		{name: "malformed JSON is retried a bounded number of times", script: []sm.Reply{{RawBody: "<html>bad gateway</html>"}, {RawBody: "{"}, {RawBody: "nope"}, ok},
			requests: activities.MaxMalformedAttempts, lastType: activities.ErrTypeModelBadReply, errText: "not a chat completion"},
		{name: "connection dropped mid-body then success", script: []sm.Reply{{Text: "lost in transit", DropAfter: 40}, ok}, requests: 2, completed: true},
		{name: "a reply slower than the model timeout is retried", script: []sm.Reply{{Text: "too late", Delay: 5 * time.Second}, ok},
			workerEnv: []string{"LONGRUN_MODEL_TIMEOUT=1s"}, requests: 2, completed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnvWorkerEnv(t, tt.workerEnv, tt.script...)
			id := e.start(workflows.SessionInput{Prompt: "hi"})
			r := result(t, id)
			require.Len(t, e.model.Requests(), tt.requests)
			e.checkSession(id)
			if tt.completed {
				require.Equal(t, workflows.ResultCompleted, r.Status)
				require.Equal(t, "recovered", r.FinalText)
				return
			}
			require.Equal(t, workflows.ResultFailed, r.Status)
			require.Contains(t, r.Error, tt.errText)
			st := query[workflows.Status](t, id, workflows.QueryStatus)
			require.Equal(t, tt.lastType, st.LastErrorType)
			require.Contains(t, st.LastError, tt.errText)
		})
	}
}

// retry-after-ms sets the delay before the next attempt: the second
// request comes no sooner than asked, though the retry policy's own first
// interval is one second.
func TestModelRetryAfterSetsTheNextDelay(t *testing.T) {
	t.Parallel()
	for _, h := range []map[string]string{{"retry-after-ms": "3000"}, {"Retry-After": "3"}} {
		e := newEnv(t, sm.Reply{Status: 429, Header: h}, sm.Text("recovered"))
		id := e.start(workflows.SessionInput{Prompt: "hi"})
		require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
		reqs := e.model.Requests()
		require.Len(t, reqs, 2)
		gap := reqs[1].At.Sub(reqs[0].At)
		require.GreaterOrEqual(t, gap, 2900*time.Millisecond, "%v: the retry came after %s", h, gap)
		e.checkSession(id)
	}
}

// A session with a person waits after a context-length error instead of
// ending, and says why in the current details.
func TestContextLengthKeepsAnInteractiveSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Reply{Status: 400, ErrorMessage: "the request exceeds the available context size, try increasing it"}, sm.Text("short enough"))
	id := e.start(workflows.SessionInput{Prompt: "a very long prompt", IdleTimeout: workflows.Duration(time.Minute)})
	waitFor(t, "the session to wait for input", 20*time.Second, func() bool {
		st := query[workflows.Status](t, id, workflows.QueryStatus)
		return st.Phase == workflows.PhaseWaitingInput && st.LastErrorType == activities.ErrTypeContextLength
	})
	out, err := e.starter("send", id, "short")
	require.NoError(t, err, out)
	waitFor(t, "the reply", 20*time.Second, func() bool { return len(e.model.Requests()) == 2 })
	out, err = e.starter("cancel", id)
	require.NoError(t, err, out)
	e.checkSession(id)
	require.True(t, strings.Contains(e.model.Requests()[1].Messages[len(e.model.Requests()[1].Messages)-1].Content, "short"))
}
