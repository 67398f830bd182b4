package e2e

import (
	"context"
	"errors"
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

// Issue 32 on GitLab: `longrun serve` behind GitLab's webhooks at
// /gitlab, a real git server over HTTP, a scripted GitLab API, a worker
// with --forge gitlab. An issue given the label starts a session, whose
// change is pushed and a merge request opened; a note on the merge
// request sends the session back, /approve in a note decides its call,
// and the merge request is updated with a second commit on the same
// branch. A redelivery starts nothing; a wrong token and a user not on
// the allowlist start nothing and are logged. Neither the forge token nor
// the webhook token is in a history, a tool result, the sandbox or a log.
func TestServeGitLabIssueToMergeRequest(t *testing.T) {
	t.Parallel()
	token := "glpat-e2e" + randHex(12)
	hookToken := "glhook-" + randHex(12)
	srv := forgetest.NewGitServer(t, token)
	gl := forgetest.NewGitLab(t, token, srv)
	script := map[string][]sm.Reply{
		"Fix the greeting on GitLab": {
			sm.Tools(sm.Call{ID: "call_r", Name: "read", Arguments: `{"path":"greeting.txt"}`}),
			sm.Tools(sm.Call{ID: "call_a", Name: "write", Arguments: `{"path":"greeting.txt","content":"changed\n"}`}),
			sm.Text("Greeting changed\n\nThe greeting now says changed."),
			// After the note: a command that writes asks a person.
			sm.Tools(isoShell("call_b", "printf 'hi\\n' > greeting.txt && env")),
			sm.Text("Greeting says hi\n\nChanged as the note asked."),
		},
	}
	e := isolationEnv(t, func(string) map[string][]sm.Reply { return script })
	project := "acme/tools/app" + randHex(3) // in a subgroup: the project is the URL's whole path
	url, bare := srv.Repo(t, project)
	git(t, e.workspace, "remote", "add", "origin", url)
	git(t, e.workspace, "push", "-q", strings.Replace(url, "http://", "http://me:"+token+"@", 1), "HEAD:refs/heads/main")
	e.stopWorker()
	e.workerArgs = append(e.workerArgs, "--push-remote", "origin", "--forge", "gitlab", "--forge-api-url", gl.URL+"/api/v4/")
	e.workerEnv = append(e.workerEnv, "LONGRUN_FORGE_TOKEN="+token)
	e.startWorker()

	webhook, log := e.startServe(
		[]string{"--gitlab-project", project + "=.", "--gitlab-allow-user", "gina", "--profile", "build", "--allow", "write", "--idle-timeout", "1h"},
		[]string{"LONGRUN_GITLAB_WEBHOOK_TOKEN=" + hookToken})
	hook := strings.TrimSuffix(webhook, "/webhook") + "/gitlab"
	// serve writes its GitHub line, which startServe waits for, then this one.
	waitFor(t, "serve to say where GitLab's webhooks go", 10*time.Second, func() bool {
		return strings.Contains(log.String(), "GitLab webhooks on "+hook)
	})
	deliver := func(event string, payload any) (forgetest.GitLabDelivery, int, string) {
		d := forgetest.NewGitLabDelivery(t, hook, hookToken, event, payload)
		status, body := d.Send(t)
		return d, status, body
	}

	// A wrong token, and a user not on the allowlist: nothing.
	evil := gl.OpenIssue(project, "Do evil", "--approval none", "mallory")
	ev, p := forgetest.GitLabLabeled(evil, "longrun", "gina")
	status, body := forgetest.NewGitLabDelivery(t, hook, "guessed-"+hookToken, ev, p).Send(t)
	require.Equal(t, 401, status, body)
	ev, p = forgetest.GitLabLabeled(evil, "longrun", "mallory")
	_, status, body = deliver(ev, p)
	require.Equal(t, 403, status, body)
	_, err := describeRun(context.Background(), tc, forge.GitLabSessionFor(project, evil.IID), "")
	var nf *serviceerror.NotFound
	require.True(t, errors.As(err, &nf), "no session for the refused deliveries: %v", err)
	require.Contains(t, log.String(), "refused (401): gitlab: bad token: X-Gitlab-Token is not the configured token")
	require.Contains(t, log.String(), `refused (403): Issue Hook: user "mallory"`)

	// The labelled issue starts its session; GitLab's retry nothing.
	issue := gl.OpenIssue(project, "Fix the greeting on GitLab", "It should say changed.\n--in-place --approval none", "mallory")
	id := forge.GitLabSessionFor(project, issue.IID)
	t.Cleanup(func() { _ = tc.CancelWorkflow(context.Background(), id, "") })
	ev, p = forgetest.GitLabLabeled(issue, "longrun", "gina")
	first, status, body := deliver(ev, p)
	require.Equal(t, 201, status, body)
	run1 := currentRun(t, id)
	status, body = first.Send(t)
	require.Equal(t, 200, status, body)
	require.Contains(t, body, "nothing started")
	require.Equal(t, run1, currentRun(t, id), "the same run: nothing new started")

	// The model is done: the branch is pushed and the merge request open.
	branch := checkout.Branch(id)
	var mr forgetest.MergeRequest
	waitFor(t, "the merge request", 2*time.Minute, func() bool {
		ms := gl.MergeRequests()
		if len(ms) == 1 {
			mr = ms[0]
		}
		return len(ms) == 1
	})
	require.Equal(t, branch, mr.SourceBranch)
	require.Equal(t, "main", mr.TargetBranch)
	require.Equal(t, project, mr.Project)
	require.Equal(t, "Greeting changed", mr.Title)
	require.Contains(t, mr.Description, "The greeting now says changed.")
	require.Equal(t, "1\n", gitOut(t, bare, "rev-list", "--count", "main.."+branch))
	in := query[workflows.Status](t, id, workflows.QueryStatus)
	require.Equal(t, workflows.PhaseWaitingInput, in.Phase)
	require.Equal(t, gl.WebURL(mr), in.PullRequest)

	// A note on the merge request's diff is the session's next message,
	// once; its call asks, and /approve in a note decides it.
	ev, p = forgetest.GitLabMergeRequestNote(mr, "greeting.txt", 1, "say hi instead", "gina")
	note, status, body := deliver(ev, p)
	require.Equal(t, 200, status, body)
	status, body = note.Send(t)
	require.Equal(t, 200, status, body)
	require.Contains(t, body, "nothing sent")
	pending := waitPending(t, id, 1)
	require.Equal(t, "c3", pending[0].ID)
	ev, p = forgetest.GitLabMergeRequestNote(mr, "", 0, "/approve c3", "mallory")
	_, status, body = deliver(ev, p)
	require.Equal(t, 403, status, body)
	ev, p = forgetest.GitLabMergeRequestNote(mr, "", 0, "/approve c3", "gina")
	_, status, body = deliver(ev, p)
	require.Equal(t, 200, status, body)
	require.Contains(t, body, "approved c3")

	// Its next answer is pushed: a second commit, the same merge request.
	waitFor(t, "the second push", 2*time.Minute, func() bool {
		ms := gl.MergeRequests()
		return len(ms) == 1 && strings.Contains(ms[0].Description, "Changed as the note asked.") && len(ms[0].Notes) == 1
	})
	require.Len(t, gl.MergeRequests(), 1, "one merge request")
	require.Equal(t, "2\n", gitOut(t, bare, "rev-list", "--count", "main.."+branch))
	require.Equal(t, "hi\n", gitOut(t, bare, "show", branch+":greeting.txt"))
	require.Contains(t, gl.MergeRequests()[0].Notes[0], "Longrun pushed")

	// The tokens: in no tool result, sandbox, history or log.
	msgs := e.checkSession(id)
	rb := resultFor(msgs, "call_b")
	require.NotNil(t, rb)
	require.False(t, rb.IsError, rb.Content)
	require.Contains(t, rb.Content, "PATH=", "env ran in the sandbox")
	require.NotContains(t, rb.Content, "LONGRUN_FORGE")
	require.NotContains(t, rb.Content, "LONGRUN_GITLAB")
	for _, m := range msgs {
		for _, secret := range []string{token, hookToken} {
			require.NotContains(t, m.Content, secret)
			if m.Result != nil {
				require.NotContains(t, m.Result.Content, secret)
			}
		}
	}
	var task string
	notes := 0
	for _, m := range msgs {
		if m.Role == "user" && task == "" {
			task = m.Content
		}
		if m.Role == "user" && strings.Contains(m.Content, "say hi instead") {
			notes++
			require.Equal(t, "Review comment on greeting.txt line 1:\n\nsay hi instead", m.Content)
		}
	}
	require.Equal(t, "Fix the greeting on GitLab\n\nIt should say changed.\n--in-place --approval none", task, "the issue's text is the task, whole")
	require.Equal(t, 1, notes, "one message for the note, retried or not")
	hist := string(decodedPayloads(history(t, id)))
	for _, secret := range []string{token, hookToken} {
		require.NotContains(t, hist, secret, "the history")
		require.NotContains(t, e.logs.String(), secret, "the worker's log")
		require.NotContains(t, log.String(), secret, "serve's log")
	}
	require.Zero(t, gl.Denied())
}
