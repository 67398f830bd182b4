package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"

	"github.com/longrun/longrun/checkout"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// Issue 32, the push slice of must-show 1: a real git server over HTTP
// (git http-backend behind basic auth) and a scripted forge speaking
// GitHub's REST subset. A session on a worker started --push-remote
// origin changes a file, runs `env` in its sandbox, and ends: its branch
// is on the remote, one pull request holds its summary, the result, the
// status query, the Web UI's details and the console's page name it;
// `longrun push` again updates it and opens no second one. The token is
// in no history, no tool result, no sandbox environment and no worker
// log line.
func TestPushOpensAPullRequestAtTheEnd(t *testing.T) {
	t.Parallel()
	script := map[string][]sm.Reply{
		"change and push": {
			sm.Tools(isoShell("c1", "printf 'changed\\n' > greeting.txt")),
			sm.Tools(isoShell("c2", "env; git remote -v; git config --list --show-origin")),
			sm.Text("Greeting changed\n\nThe greeting now says changed."),
		},
	}
	fe := newForgeEnv(t, "acme/app", script, "--web-ui-url", "http://ui.test")
	e, token, gh, bare := fe.env, fe.token, fe.gh, fe.bare

	id := e.startIsolated(workflows.SessionInput{Prompt: "change and push", Profile: "auto"})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var r workflows.SessionResult
	require.NoError(t, tc.GetWorkflow(ctx, id, "").Get(ctx, &r))
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	require.Empty(t, r.PushError)
	require.NotEmpty(t, r.Commit)
	require.Equal(t, gh.URL+"/acme/app/pull/1", r.PullRequest)

	branch := checkout.Branch(id)
	require.Equal(t, r.Commit, gitOut(t, bare, "rev-parse", "refs/heads/"+branch)[:len(r.Commit)], "the branch is on the remote")
	pulls := gh.Pulls()
	require.Len(t, pulls, 1)
	require.Equal(t, "Greeting changed", pulls[0].Title)
	require.Equal(t, branch, pulls[0].Head)
	require.Equal(t, "main", pulls[0].Base)
	for _, want := range []string{"The greeting now says changed.", "greeting.txt | 2 +-", id, "http://ui.test/namespaces/",
		"### Checks run\n\nThe commands the session ran, with how each ended:\n\n- `printf 'changed\\n' > greeting.txt` c1: exit code 0\n"} {
		require.Contains(t, pulls[0].Body, want)
	}
	st := query[workflows.Status](t, id, workflows.QueryStatus)
	require.Equal(t, r.PullRequest, st.PullRequest)
	recordHistory(t, id, "push_pull_request")
	show, err := e.starter("show", id)
	require.NoError(t, err, show)
	require.Contains(t, show, r.PullRequest)

	// The Web UI's details link it, and the console's page of the
	// finished session does.
	val, err := tc.QueryWorkflow(ctx, id, "", "__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, val.Get(&md))
	require.Contains(t, md.GetCurrentDetails(), "**pull request:** ["+r.PullRequest+"]("+r.PullRequest+")")
	page := newConsoleClient(t, startConsole(t, e)).get("/session?id=" + id)
	require.Contains(t, page, `<a href="`+r.PullRequest+`" rel="noopener noreferrer">`+r.PullRequest+`</a>`)

	// On demand, where the repository is: the same pull request, updated.
	e.starterEnv = []string{"LONGRUN_PUSH_REMOTE=origin", "LONGRUN_FORGE_TOKEN=" + token, "LONGRUN_FORGE_API_URL=" + gh.URL + "/"}
	for range 2 {
		out, err := e.starter("push", id)
		require.NoError(t, err, out)
		require.Contains(t, out, "pull request #1 updated: "+r.PullRequest)
	}
	pulls = gh.Pulls()
	require.Len(t, pulls, 1, "no second pull request")
	require.Empty(t, pulls[0].Comments, "the same commit: nothing to announce")

	// The token: in no history, no tool result, no sandbox, no log.
	msgs := e.checkSession(id)
	c2 := resultFor(msgs, "c2")
	require.NotNil(t, c2)
	require.False(t, c2.IsError, c2.Content)
	require.Contains(t, c2.Content, "PATH=", "env ran in the sandbox")
	require.NotContains(t, c2.Content, token)
	require.NotContains(t, c2.Content, "LONGRUN_FORGE")
	for _, m := range msgs {
		require.NotContains(t, m.Content, token)
	}
	require.NotContains(t, string(decodedPayloads(history(t, id))), token, "the history")
	require.NotContains(t, e.logs.String(), token, "the worker's log")
	require.NotContains(t, gitOut(t, e.workspace, "config", "--list"), token, "the person's repository")
	require.Zero(t, gh.Denied())
}
