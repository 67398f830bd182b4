package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"

	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// TestReusedCallIDsDecideNothingUnseen (issue 28, must-show 2): the model
// reuses its call id "dup" across turns and twice within one reply (a
// benign command and a hostile one), and a person decides from the CLI
// and from the console, with a page that went stale. Nothing runs that
// the person did not see: every call has the session's own id, a model
// id naming several calls is refused, a decision whose digest is not the
// call's is refused with a message (console, update and signal), a
// repeated deny of a decided call is not reported as a denial, and
// approve --all approves only what its listing showed.
func TestReusedCallIDsDecideNothingUnseen(t *testing.T) {
	t.Parallel()
	benign := `{"command": "echo seen > benign.txt"}`
	hostile := `{"command": "touch pwned.txt"}`
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "dup", Name: "write", Arguments: `{"path": "first.txt", "content": "first"}`}),
		sm.Tools(sm.Call{ID: "dup", Name: "shell", Arguments: benign}, sm.Call{ID: "dup", Name: "shell", Arguments: hostile}),
		sm.Text("done"),
	)
	id := e.start(workflows.SessionInput{Prompt: "write first.txt, then run the commands"})
	p := waitPending(t, id, 1)
	require.Equal(t, "c1", p[0].ID)
	require.Equal(t, "dup", p[0].CallID)
	con := startConsole(t, e)
	web := newConsoleClient(t, con)

	// Turn 1: the console page shows c1 with its digest; approved from it.
	stale := web.forms(web.get("/session?id=" + url.QueryEscape(id)))
	require.Equal(t, callref.Digest("write", p[0].Arguments), stale["c1"])
	page := web.decide(id, "c1", stale["c1"], workflows.DecisionApprove)
	require.Contains(t, page, "approved c1 in "+id)

	// Turn 2: "dup" twice more, in one reply.
	p = waitPending(t, id, 2)
	require.Equal(t, []string{"c2", "c3"}, []string{p[0].ID, p[1].ID})
	require.Equal(t, []string{"dup", "dup"}, []string{p[0].CallID, p[1].CallID})
	require.Equal(t, callref.Digest("shell", benign), p[0].Digest)
	require.Equal(t, callref.Digest("shell", hostile), p[1].Digest)

	// The turn-1 page, still open, decides nothing of turn 2: its form
	// names c1, whatever the model calls its new calls. The same approval
	// again is the same decision (the update's id is the call's), and
	// another one is refused.
	page = web.decide(id, "c1", stale["c1"], workflows.DecisionApprove)
	require.Contains(t, page, "approved c1 in "+id)
	require.Len(t, waitPending(t, id, 2), 2, "c2 and c3 still wait")
	page = web.decide(id, "c1", stale["c1"], workflows.DecisionDeny, "no")
	require.Contains(t, page, "call c1 is not waiting for approval: already decided (approved (or allowed by a rule); it ran)")
	// A page whose form pairs the hostile call with the benign command's
	// digest (what a person saw) is refused, with a message.
	fresh := web.forms(web.get("/session?id=" + url.QueryEscape(id)))
	require.Equal(t, p[0].Digest, fresh["c2"])
	require.Equal(t, p[1].Digest, fresh["c3"])
	page = web.decide(id, "c3", fresh["c2"], workflows.DecisionApprove)
	require.Contains(t, page, "call c3 has other arguments than the ones you saw")
	require.Contains(t, con.logs.String(), "call c3 has other arguments than the ones you saw", "the console's log says so too")

	// The same through the update and the signal: the update fails with
	// the message, the signal is listed as rejected, the call waits on.
	h, err := tc.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: workflows.UpdateApprove,
		Args: []any{workflows.Approval{ID: "c3", Digest: callref.Short(p[0].Digest), Decision: workflows.DecisionApprove}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(context.Background(), nil)
	}
	require.ErrorContains(t, err, "call c3 has other arguments than the ones you saw")
	require.NoError(t, tc.SignalWorkflow(context.Background(), id, "", workflows.SignalApproval,
		workflows.Approval{ID: "c3", Digest: p[0].Digest, Decision: workflows.DecisionApprove}))
	waitFor(t, "the signal's refusal in status", 30*time.Second, func() bool {
		st := query[workflows.Status](t, id, workflows.QueryStatus)
		return len(st.Rejected) == 1 && strings.Contains(st.Rejected[0], "call c3 has other arguments than the ones you saw")
	})
	require.Len(t, waitPending(t, id, 2), 2, "nothing was decided")

	// The CLI: the model's id names two waiting calls, refused; the
	// decided c1 is not "denied" again.
	out, err := e.starter("deny", id, "dup", "--feedback", "no")
	require.Equal(t, 1, exitCode(t, err), out)
	require.Contains(t, out, `the model used the call id "dup" for 2 waiting calls (c2, c3): nothing sent; name the call by its id`)
	out, err = e.starter("deny", id, "c1", "--feedback", "no")
	require.Equal(t, 1, exitCode(t, err), out)
	require.Contains(t, out, `call "c1" is already decided (approved (or allowed by a rule); it ran); nothing sent`)
	require.NotContains(t, out, "denied")
	// A raw update by the model's id is refused by the session itself.
	h, err = tc.UpdateWorkflow(context.Background(), client.UpdateWorkflowOptions{WorkflowID: id, UpdateName: workflows.UpdateApprove,
		Args: []any{workflows.Approval{CallID: "dup", Decision: workflows.DecisionApprove}}, WaitForStage: client.WorkflowUpdateStageCompleted})
	if err == nil {
		err = h.Get(context.Background(), nil)
	}
	require.ErrorContains(t, err, `call id "dup" names 3 calls (c1, c2, c3)`)

	// approve --digest: the digest a person read (here the benign
	// command's, as pending lists it) sent with the hostile call's id is
	// refused before anything is sent, showing the call that waits.
	out, err = e.starter("pending", id)
	require.NoError(t, err, out)
	require.Contains(t, out, "approve: longrun approve "+id+" c2 --digest "+callref.Short(p[0].Digest), "pending names the digest approve checks")
	out, err = e.starter("approve", id, "c3", "--digest", callref.Short(p[0].Digest))
	require.Equal(t, 1, exitCode(t, err), out)
	require.Contains(t, out, "nothing sent: call c3 waits with other arguments than the ones you read (--digest "+callref.Short(p[0].Digest)+"; the call now has "+callref.Short(p[1].Digest)+")")
	require.Contains(t, out, `arguments: {"command": "touch pwned.txt"}`)
	require.Len(t, waitPending(t, id, 2), 2, "nothing was decided")

	out, err = e.starter("deny", id, "c3", "--feedback", "not that", "--digest", callref.Short(p[1].Digest))
	require.NoError(t, err, out)
	require.Contains(t, out, "denied c3 (shell)\n  arguments: {\"command\": \"touch pwned.txt\"}\n  digest:    "+callref.Short(p[1].Digest)+"\n",
		"deny prints the call it denied")
	out, err = e.starter("approve", id, "--all")
	require.NoError(t, err, out)
	require.Contains(t, out, "approved c2 (shell)\n  arguments: {\"command\": \"echo seen > benign.txt\"}\n", "approve prints the call it approved")
	require.NotContains(t, out, "c3")

	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	require.FileExists(t, filepath.Join(e.workspace, "first.txt"))
	require.FileExists(t, filepath.Join(e.workspace, "benign.txt"))
	require.NoFileExists(t, filepath.Join(e.workspace, "pwned.txt"), "the hostile call never ran")
	msgs := query[[]conversation.Message](t, id, workflows.QueryConversation)
	reasons := map[string]conversation.Reason{}
	for _, m := range msgs {
		if m.Result != nil {
			reasons[m.Result.Ref] = m.Result.Reason
		}
	}
	require.Equal(t, map[string]conversation.Reason{"c1": conversation.ReasonRan, "c2": conversation.ReasonRan, "c3": conversation.ReasonDenied}, reasons)
}

// consoleClient is a script's way into the console: the bearer token,
// and a cookie jar for the outcome the page shows after a decision.
type consoleClient struct {
	t   *testing.T
	con console
	c   *http.Client
}

func newConsoleClient(t *testing.T, con console) consoleClient {
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	return consoleClient{t: t, con: con, c: &http.Client{Jar: jar}}
}

func (w consoleClient) do(req *http.Request) string {
	w.t.Helper()
	req.Header.Set("Authorization", "Bearer "+w.con.token)
	resp, err := w.c.Do(req)
	require.NoError(w.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(w.t, err)
	require.Equal(w.t, http.StatusOK, resp.StatusCode, string(b))
	return string(b)
}

func (w consoleClient) get(path string) string {
	req, err := http.NewRequest(http.MethodGet, w.con.url+path, nil)
	require.NoError(w.t, err)
	return w.do(req)
}

// decide posts a decision form as the page's Approve button sends it,
// and returns the page it lands on.
func (w consoleClient) decide(session, callID, digest, decision string, feedback ...string) string {
	form := url.Values{"session": {session}, "id": {callID}, "digest": {digest}, "decision": {decision}, "back": {"session"}, "feedback": feedback}
	req, err := http.NewRequest(http.MethodPost, w.con.url+"/decide", strings.NewReader(form.Encode()))
	require.NoError(w.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return w.do(req)
}

var consoleForm = regexp.MustCompile(`(?s)<section class="call" id="call-[^"]*" data-call="([^"]+)">.*?name="id" value="([^"]*)">\s*<input type="hidden" name="digest" value="([0-9a-f]*)">`)

// forms are the decision forms of a console page: call id -> the digest
// the form sends.
func (w consoleClient) forms(page string) map[string]string {
	out := map[string]string{}
	for _, m := range consoleForm.FindAllStringSubmatch(page, -1) {
		require.Equal(w.t, m[1], m[2], "the form decides the call it shows")
		out[m[2]] = m[3]
	}
	require.NotEmpty(w.t, out, "no decision form on the page:\n%s", page)
	return out
}
