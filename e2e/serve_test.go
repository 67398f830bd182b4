package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/api/serviceerror"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/forge"
	"github.com/longrun/longrun/forge/forgetest"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// startServe runs `longrun serve` against the test server with args and
// env, and returns its webhook URL and its log (stdout and stderr).
func (e *env) startServe(args, env []string) (string, *syncBuffer) {
	e.t.Helper()
	url, log, _ := e.serveProcess(args, env)
	return url, log
}

// serveProcess is startServe that also returns the process, for a test
// that stops it (stopProcess) and starts another.
func (e *env) serveProcess(args, env []string) (string, *syncBuffer, *exec.Cmd) {
	e.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "starter"), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(append(os.Environ(), "TEMPORAL_ADDRESS="+temporalAddr, "LONGRUN_TASK_QUEUE="+e.taskQueue), env...)
	log := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(e.t, cmd.Start())
	e.t.Cleanup(func() {
		stopProcess(cmd)
		if e.t.Failed() {
			e.t.Logf("serve log:\n%s", log.String())
		}
	})
	addr := regexp.MustCompile(`webhooks on (http://\S+/webhook)`)
	var url string
	waitFor(e.t, "serve to listen", 30*time.Second, func() bool {
		m := addr.FindStringSubmatch(log.String())
		if m != nil {
			url = m[1]
		}
		return m != nil
	})
	return url, log, cmd
}

// Issue 32, must-show 1, the webhook parts: `longrun serve` behind
// GitHub's webhooks, a real git server over HTTP, a scripted GitHub. A
// labelled issue starts a session, whose change is pushed and a pull
// request opened when the model is done; a review comment sends the
// session back to work, it asks for a call, `/approve` in an issue
// comment decides it, and the pull request gets a second commit, its
// body naming the approval (who, when) and the command with its exit
// code. A review with changes requested sends it back once more: a
// third commit. A redelivery starts nothing; a review comment
// redelivered to a restarted serve (which forgot it) is still one
// message (the session refuses its delivery id); a forged signature and
// a user not on the allowlist start nothing and are logged. The forge
// token is in no history, no tool result, no sandbox environment, no log.
func TestServeIssueToPullRequest(t *testing.T) {
	t.Parallel()
	secret := "whsec-" + randHex(12)
	script := map[string][]sm.Reply{
		"Fix the greeting": {
			sm.Tools(sm.Call{ID: "call_r", Name: "read", Arguments: `{"path":"greeting.txt"}`}),
			sm.Tools(sm.Call{ID: "call_a", Name: "write", Arguments: `{"path":"greeting.txt","content":"changed\n"}`}),
			sm.Text("Greeting changed\n\nThe greeting now says changed."),
			// After the review: a command that writes asks a person.
			sm.Tools(isoShell("call_b", "printf 'hi\\n' > greeting.txt && env && git remote -v")),
			sm.Text("Greeting says hi\n\nChanged as the review asked."),
			// After the review with changes requested.
			sm.Tools(sm.Call{ID: "call_d", Name: "read", Arguments: `{"path":"greeting.txt"}`}), // the command changed it since
			sm.Tools(sm.Call{ID: "call_c", Name: "write", Arguments: `{"path":"greeting.txt","content":"HELLO\n"}`}),
			sm.Text("Greeting says HELLO\n\nIn capitals, as the review requested."),
		},
	}
	repo := "acme/app" + randHex(3)
	fe := newForgeEnv(t, repo, script)
	e, token, gh, bare := fe.env, fe.token, fe.gh, fe.bare

	serveArgs := []string{"--repo", repo + "=.", "--allow-user", "alice", "--profile", "build", "--allow", "write", "--idle-timeout", "1h"}
	serveEnv := []string{"LONGRUN_WEBHOOK_SECRET=" + secret}
	hook, log, serve := e.serveProcess(serveArgs, serveEnv)
	deliver := func(event string, payload any) (forgetest.Delivery, int, string) {
		d := forgetest.NewDelivery(t, hook, secret, event, payload)
		status, body := d.Send(t)
		return d, status, body
	}

	// A forged signature, and a user not on the allowlist: nothing.
	evil := gh.OpenIssue(repo, "Do evil", "--approval none", "mallory")
	ev, p := forgetest.Labeled(evil, "longrun", "alice")
	forged := forgetest.NewDelivery(t, hook, "guessed-"+secret, ev, p)
	status, body := forged.Send(t)
	require.Equal(t, 401, status, body)
	ev, p = forgetest.Labeled(evil, "longrun", "mallory")
	_, status, body = deliver(ev, p)
	require.Equal(t, 403, status, body)
	_, err := describeRun(context.Background(), tc, forge.SessionFor(repo, evil.Number), "")
	var nf *serviceerror.NotFound
	require.True(t, errors.As(err, &nf), "no session for the refused deliveries: %v", err)
	require.Contains(t, log.String(), "refused (401): bad signature")
	require.Contains(t, log.String(), `refused (403): issues: sender "mallory"`)

	// The labelled issue starts its session; the redelivery nothing.
	issue := gh.OpenIssue(repo, "Fix the greeting", "It should say changed.\n--in-place --approval none", "mallory")
	id := forge.SessionFor(repo, issue.Number)
	t.Cleanup(func() { _ = tc.CancelWorkflow(context.Background(), id, "") })
	ev, p = forgetest.Labeled(issue, "longrun", "alice")
	first, status, body := deliver(ev, p)
	require.Equal(t, 201, status, body)
	run1 := currentRun(t, id)
	status, body = first.Send(t) // GitHub's "Redeliver": the same delivery
	require.Equal(t, 200, status, body)
	require.Contains(t, body, "nothing started")
	require.Equal(t, run1, currentRun(t, id), "the same run: nothing new started")

	// The model is done: the branch is pushed and the pull request open.
	branch := checkout.Branch(id)
	var pull forgetest.Pull
	t.Cleanup(func() {
		if t.Failed() {
			st, err := tc.QueryWorkflow(context.Background(), id, "", workflows.QueryStatus)
			var v workflows.Status
			if err == nil {
				_ = st.Get(&v)
			}
			t.Logf("status of %s: %+v (%v)", id, v, err)
		}
	})
	waitFor(t, "the pull request", 2*time.Minute, func() bool {
		ps := gh.Pulls()
		if len(ps) == 1 {
			pull = ps[0]
		}
		return len(ps) == 1
	})
	require.Equal(t, branch, pull.Head)
	require.Equal(t, "Greeting changed", pull.Title)
	require.Contains(t, pull.Body, "The greeting now says changed.")
	require.Equal(t, "1\n", gitOut(t, bare, "rev-list", "--count", "main.."+branch))
	in := query[workflows.Status](t, id, workflows.QueryStatus)
	require.Equal(t, workflows.PhaseWaitingInput, in.Phase)
	require.Equal(t, fmt.Sprintf("%s/%s/pull/%d", gh.URL, repo, pull.Number), in.PullRequest)

	// A review comment is the session's next message; its call asks.
	ev, p = forgetest.ReviewCommented(pull, "greeting.txt", 1, "say hi instead", "alice")
	review, status, body := deliver(ev, p)
	require.Equal(t, 200, status, body)
	status, body = review.Send(t) // redelivered: not a second message
	require.Equal(t, 200, status, body)
	require.Contains(t, body, "nothing sent")
	pending := waitPending(t, id, 1)
	require.Equal(t, "c3", pending[0].ID)

	// serve restarts and forgets what it sent; GitHub redelivers the
	// review comment: the session refuses its delivery id.
	stopProcess(serve)
	firstLog := log
	hook, log = e.startServe(serveArgs, serveEnv)
	review.URL = hook
	status, body = review.Send(t)
	require.Equal(t, 200, status, body)
	waitFor(t, "the session to refuse the redelivered message", time.Minute, func() bool {
		st := query[workflows.Status](t, id, workflows.QueryStatus)
		return slices.ContainsFunc(st.Rejected, func(r string) bool {
			return strings.Contains(r, fmt.Sprintf("delivery %q: its message was taken before", review.ID))
		})
	})
	// /approve from someone else decides nothing; alice's does.
	ev, p = forgetest.Commented(issue, "/approve c3", "mallory")
	_, status, body = deliver(ev, p)
	require.Equal(t, 403, status, body)
	require.Len(t, waitPending(t, id, 1), 1)
	ev, p = forgetest.Commented(issue, "/approve c3", "alice")
	_, status, body = deliver(ev, p)
	require.Equal(t, 200, status, body)
	require.Contains(t, body, "approved c3")

	// Its next answer is pushed: a second commit, the same pull request.
	waitFor(t, "the second push", 2*time.Minute, func() bool {
		ps := gh.Pulls()
		return len(ps) == 1 && strings.Contains(ps[0].Body, "Changed as the review asked.") && len(ps[0].Comments) == 1
	})
	require.Len(t, gh.Pulls(), 1, "one pull request")
	require.Equal(t, "2\n", gitOut(t, bare, "rev-list", "--count", "main.."+branch))
	require.Equal(t, "hi\n", gitOut(t, bare, "show", branch+":greeting.txt"))
	require.Contains(t, gh.Pulls()[0].Comments[0], "Longrun pushed")
	// What a reviewer needs: who approved which call and when, and the
	// command it ran with its exit code.
	second := gh.Pulls()[0].Body
	require.Regexp(t, "- c3 `[^\n]*`: approved by `alice`, at 20[0-9-]+ [0-9:]+ UTC\n", second)
	require.Regexp(t, "### Checks run\n\nThe commands the session ran, with how each ended:\n\n- `printf [^\n]*git remote -v` c3: exit code 0\n", second)

	// A review with changes requested: the next message, a third commit.
	ev, p = forgetest.Reviewed(pull, "changes_requested", "Say HELLO in capitals", "alice")
	_, status, body = deliver(ev, p)
	require.Equal(t, 200, status, body)
	waitFor(t, "the third push", 2*time.Minute, func() bool {
		ps := gh.Pulls()
		return len(ps) == 1 && strings.Contains(ps[0].Body, "as the review requested.") && len(ps[0].Comments) == 2
	})
	require.Len(t, gh.Pulls(), 1, "one pull request")
	require.Equal(t, "3\n", gitOut(t, bare, "rev-list", "--count", "main.."+branch))
	require.Equal(t, "HELLO\n", gitOut(t, bare, "show", branch+":greeting.txt"))

	// The token: in no tool result, sandbox, history or log.
	msgs := e.checkSession(id)
	rb := resultFor(msgs, "call_b")
	require.NotNil(t, rb)
	require.False(t, rb.IsError, rb.Content)
	require.Contains(t, rb.Content, "PATH=", "env ran in the sandbox")
	require.NotContains(t, rb.Content, "LONGRUN_FORGE")
	require.NotContains(t, rb.Content, secret)
	for _, m := range msgs {
		require.NotContains(t, m.Content, token)
		if m.Result != nil {
			require.NotContains(t, m.Result.Content, token)
		}
	}
	task := ""
	for _, m := range msgs {
		if m.Role == "user" {
			task = m.Content
			break
		}
	}
	require.Equal(t, "Fix the greeting\n\nIt should say changed.\n--in-place --approval none", task, "the issue's text is the task, whole")
	reviews := 0
	for _, m := range msgs {
		if m.Role == "user" && strings.Contains(m.Content, "say hi instead") {
			reviews++
			require.Equal(t, "Review comment on greeting.txt line 1:\n\nsay hi instead", m.Content)
		}
	}
	require.Equal(t, 1, reviews, "one message for the review, redelivered (to a restarted serve too) or not")
	changes := 0
	for _, m := range msgs {
		if m.Role == "user" && m.Content == "Review (changes_requested):\n\nSay HELLO in capitals" {
			changes++
		}
	}
	require.Equal(t, 1, changes, "the review with changes requested is one message")
	hist := string(decodedPayloads(history(t, id)))
	require.NotContains(t, hist, token, "the history")
	require.NotContains(t, hist, secret, "the history")
	require.NotContains(t, e.logs.String(), token, "the worker's log")
	for _, l := range []*syncBuffer{firstLog, log} {
		require.NotContains(t, l.String(), token, "serve's log")
		require.NotContains(t, l.String(), secret, "serve's log")
	}
	require.Zero(t, gh.Denied())
	recordHistory(t, id, "serve_issue_to_pull_request")
}

// currentRun is the run id of the session's current run.
func currentRun(t *testing.T, id string) string {
	t.Helper()
	d, err := describeRun(context.Background(), tc, id, "")
	require.NoError(t, err)
	return d.GetWorkflowExecutionInfo().GetExecution().GetRunId()
}
