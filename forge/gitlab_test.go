package forge_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/forge"
	"github.com/longrun/longrun/forge/forgetest"
)

// Publishing to a GitLab project (in a subgroup, as GitLab's groups nest)
// opens one merge request with the same body as a pull request; a retry
// finds it by its source branch, and more work updates it with one note
// per new commit.
func TestPublishOpensThenUpdatesOneMergeRequest(t *testing.T) {
	t.Parallel()
	srv := forgetest.NewGitServer(t, token)
	gl := forgetest.NewGitLab(t, token, srv)
	project := "acme/tools/app"
	url, bare := srv.Repo(t, project)
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644))
	git(t, dir, "add", "a.txt")
	git(t, dir, "commit", "-qm", "base")
	base := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "remote", "add", "origin", url)
	git(t, dir, "push", "-q", strings.Replace(url, "http://", "http://me:"+token+"@", 1), "main")
	git(t, dir, "branch", "longrun/s1")
	first := commitOn(t, dir, "longrun/s1", "b.txt", "two\n")

	// The API's base without /api/v4: the client adds it, as for a
	// GitLab named by its host only.
	cfg := forge.Config{Remote: "origin", Kind: "gitlab", API: gl.URL + "/", Token: token, ConsoleURL: "http://console.test/"}
	require.NoError(t, cfg.Check())
	req := forge.Request{Dir: dir, Branch: "longrun/s1", BaseCommit: base, Session: "s1", Summary: "Add b.txt\n\nIt holds two.", LeftOut: []string{"AGENTS.md"}}
	ctx := context.Background()

	got, err := forge.Publish(ctx, cfg, req)
	require.NoError(t, err)
	require.True(t, got.Created)
	require.Equal(t, first, got.Commit)
	require.Equal(t, 1, got.Number)
	require.Equal(t, gl.URL+"/acme/tools/app/-/merge_requests/1", got.URL)
	require.Equal(t, first, git(t, bare, "rev-parse", "refs/heads/longrun/s1"), "the branch is on the remote")
	mrs := gl.MergeRequests()
	require.Len(t, mrs, 1)
	m := mrs[0]
	require.Equal(t, project, m.Project, "the project read whole from the remote's URL")
	require.Equal(t, "Add b.txt", m.Title)
	require.Equal(t, "main", m.TargetBranch)
	require.Equal(t, "longrun/s1", m.SourceBranch)
	for _, want := range []string{"It holds two.", "b.txt | 1 +", "`s1`", "AGENTS.md", "http://console.test/session?id=s1", first} {
		require.Contains(t, m.Description, want)
	}

	// A retry of the same commit (a worker killed after the merge
	// request was made): found, not made again.
	again, err := forge.Publish(ctx, cfg, req)
	require.NoError(t, err)
	require.False(t, again.Created)
	require.Equal(t, 1, again.Number)
	require.Len(t, gl.MergeRequests(), 1)
	require.Empty(t, gl.MergeRequests()[0].Notes)

	second := commitOn(t, dir, "longrun/s1", "c.txt", "three\n")
	req.Summary = "Add b.txt and c.txt"
	for range 2 {
		up, err := forge.Publish(ctx, cfg, req)
		require.NoError(t, err)
		require.Equal(t, second, up.Commit)
		require.Equal(t, 1, up.Number)
		require.False(t, up.Created)
	}
	mrs = gl.MergeRequests()
	require.Len(t, mrs, 1)
	require.Equal(t, "Add b.txt and c.txt", mrs[0].Title)
	require.Contains(t, mrs[0].Description, "c.txt")
	require.Len(t, mrs[0].Notes, 1, "one note for the new commit, retried or not")
	require.Contains(t, mrs[0].Notes[0], second)
	require.Equal(t, second, git(t, bare, "rev-parse", "refs/heads/longrun/s1"))
	require.NotContains(t, git(t, dir, "config", "--list"), token)
	require.Zero(t, gl.Denied())
}

// A token the API refuses fails the publish as refused (no retry can
// help), without the token in the error; the branch is pushed, no merge
// request made.
func TestPublishToGitLabWithATokenTheAPIRefuses(t *testing.T) {
	t.Parallel()
	srv := forgetest.NewGitServer(t, token)
	gl := forgetest.NewGitLab(t, "glpat-another", srv)
	dir, base := person(t, srv)
	commitOn(t, dir, "longrun/s1", "b.txt", "two\n")
	cfg := forge.Config{Remote: "origin", Kind: "gitlab", API: gl.URL + "/api/v4/", Token: token}
	_, err := forge.Publish(context.Background(), cfg, forge.Request{Dir: dir, Branch: "longrun/s1", BaseCommit: base, Session: "s1", Summary: "x"})
	require.ErrorIs(t, err, forge.ErrRefused)
	require.NotContains(t, err.Error(), token)
	require.Empty(t, gl.MergeRequests())
	require.Positive(t, gl.Denied())
}

func TestProjectFromURL(t *testing.T) {
	t.Parallel()
	for remote, want := range map[string]string{
		"https://gitlab.com/acme/app.git":        "acme/app",
		"https://gitlab.com/acme/tools/app.git":  "acme/tools/app",
		"https://me@gitlab.example/acme/app":     "acme/app",
		"git@gitlab.com:acme/tools/app.git":      "acme/tools/app",
		"ssh://git@gitlab.com:2222/acme/app.git": "acme/app",
		"https://gitlab.com/app.git":             "",
		"https://gitlab.com/acme//app.git":       "",
		"https://gitlab.com/acme/../app.git":     "",
	} {
		got, err := forge.ProjectFromURL(remote)
		if want == "" {
			require.Error(t, err, remote)
			continue
		}
		require.NoError(t, err, remote)
		require.Equal(t, want, got, remote)
	}
}
