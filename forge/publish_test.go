package forge_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/forge"
	"github.com/longrun/longrun/forge/forgetest"
)

const token = "ghp_TESTTOKEN0123456789secret"

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@e", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@e", "GIT_CONFIG_GLOBAL=/dev/null")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

// person is a repository whose origin is the git server's acme/app, with
// main pushed there and a session's branch on top.
func person(t *testing.T, srv *forgetest.GitServer) (dir, base string) {
	url, _ := srv.Repo(t, "acme/app")
	dir = t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644))
	git(t, dir, "add", "a.txt")
	git(t, dir, "commit", "-qm", "base")
	base = git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "remote", "add", "origin", url)
	// The person's own push, with their own credentials in the URL just
	// for this command.
	authed := strings.Replace(url, "http://", "http://me:"+token+"@", 1)
	git(t, dir, "push", "-q", authed, "main")
	git(t, dir, "branch", "longrun/s1")
	return dir, base
}

func commitOn(t *testing.T, dir, branch, file, text string) string {
	git(t, dir, "checkout", "-q", branch)
	require.NoError(t, os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644))
	git(t, dir, "add", file)
	git(t, dir, "commit", "-qm", "change "+file)
	c := git(t, dir, "rev-parse", "HEAD")
	git(t, dir, "checkout", "-q", "main")
	return c
}

// Publishing opens one pull request with the summary, the stat, the
// session and the control files left out; publishing again (a retry, or
// `longrun push` after more work) updates it, comments once per new
// commit, and never opens a second.
func TestPublishOpensThenUpdatesOnePullRequest(t *testing.T) {
	t.Parallel()
	srv := forgetest.NewGitServer(t, token)
	gh := forgetest.NewGitHub(t, token, srv)
	dir, base := person(t, srv)
	first := commitOn(t, dir, "longrun/s1", "b.txt", "two\n")

	cfg := forge.Config{Remote: "origin", API: gh.URL + "/", Token: token, ConsoleURL: "http://console.test/", WebUIURL: "http://ui.test"}
	require.NoError(t, cfg.Check())
	req := forge.Request{Dir: dir, Branch: "longrun/s1", BaseCommit: base, Session: "s1", Summary: "Add b.txt\n\nIt holds two.", LeftOut: []string{"AGENTS.md"}}
	ctx := context.Background()

	got, err := forge.Publish(ctx, cfg, req)
	require.NoError(t, err)
	require.True(t, got.Created)
	require.Equal(t, first, got.Commit)
	require.Equal(t, 1, got.Number)
	require.Equal(t, gh.URL+"/acme/app/pull/1", got.URL)
	require.NotContains(t, got.Remote, token)
	require.Equal(t, first, git(t, filepath.Join(srv.Root, "acme/app.git"), "rev-parse", "refs/heads/longrun/s1"), "the branch is on the remote")

	pulls := gh.Pulls()
	require.Len(t, pulls, 1)
	p := pulls[0]
	require.Equal(t, "Add b.txt", p.Title)
	require.Equal(t, "main", p.Base, "the remote's default branch")
	require.Equal(t, "longrun/s1", p.Head)
	for _, want := range []string{"It holds two.", "b.txt | 1 +", "`s1`", "left out of this branch: `AGENTS.md`", "http://console.test/session?id=s1", "http://ui.test/namespaces/default/workflows/s1", first} {
		require.Contains(t, p.Body, want)
	}

	// The same commit again (a worker killed after the pull request was
	// made, before its result was recorded): nothing new.
	again, err := forge.Publish(ctx, cfg, req)
	require.NoError(t, err)
	require.False(t, again.Created)
	require.Equal(t, 1, again.Number)
	require.Len(t, gh.Pulls(), 1)
	require.Empty(t, gh.Pulls()[0].Comments)

	// More work on the branch: the pull request is updated, one comment
	// says so, and a retry of that does not say it twice.
	second := commitOn(t, dir, "longrun/s1", "c.txt", "three\n")
	req.Summary = "Add b.txt and c.txt"
	for range 2 {
		up, err := forge.Publish(ctx, cfg, req)
		require.NoError(t, err)
		require.Equal(t, second, up.Commit)
		require.Equal(t, 1, up.Number)
	}
	pulls = gh.Pulls()
	require.Len(t, pulls, 1)
	require.Equal(t, "Add b.txt and c.txt", pulls[0].Title)
	require.Contains(t, pulls[0].Body, "c.txt")
	require.Len(t, pulls[0].Comments, 1, "one comment for the new commit")
	require.Contains(t, pulls[0].Comments[0], second)
	require.Equal(t, second, git(t, filepath.Join(srv.Root, "acme/app.git"), "rev-parse", "refs/heads/longrun/s1"))

	// The token went as a header only: not into the repository's
	// configuration, not into its remote's URL.
	require.NotContains(t, git(t, dir, "config", "--list"), token)
	require.NotContains(t, git(t, dir, "remote", "-v"), token)
	require.Equal(t, []string{"Bearer " + token}, gh.AuthHeaders())
}

// A wrong token fails the push with git's message, which does not hold
// the token, and opens nothing.
func TestPublishWithAWrongTokenSaysSoWithoutTheToken(t *testing.T) {
	t.Parallel()
	srv := forgetest.NewGitServer(t, token)
	gh := forgetest.NewGitHub(t, token, srv)
	dir, base := person(t, srv)
	commitOn(t, dir, "longrun/s1", "b.txt", "two\n")
	bad := "ghp_WRONG_but_still_secret"
	cfg := forge.Config{Remote: "origin", API: gh.URL + "/", Token: bad}
	_, err := forge.Publish(context.Background(), cfg, forge.Request{Dir: dir, Branch: "longrun/s1", BaseCommit: base, Session: "s1", Summary: "x"})
	require.Error(t, err)
	require.Contains(t, err.Error(), "push longrun/s1 to origin")
	require.NotContains(t, err.Error(), bad)
	require.Empty(t, gh.Pulls())
	denied, _ := srv.Counts()
	require.Positive(t, denied)
}

// Check names the setting to fix.
func TestConfigCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  forge.Config
		want string
	}{
		{"off", forge.Config{}, ""},
		{"no token", forge.Config{Remote: "origin"}, "LONGRUN_FORGE_TOKEN"},
		{"password in URL", forge.Config{Remote: "https://me:pw@example.test/a/b.git", Token: "t"}, "holds a password"},
		{"gitlab", forge.Config{Remote: "origin", Kind: "gitlab", Token: "t"}, ""},
		{"gitlab subgroup", forge.Config{Remote: "origin", Kind: "gitlab", Token: "t", Repo: "acme/tools/app"}, ""},
		{"gitlab bad project", forge.Config{Remote: "origin", Kind: "gitlab", Token: "t", Repo: "acme//app"}, "GROUP/NAME"},
		{"unknown", forge.Config{Remote: "origin", Kind: "bitbucket", Token: "t"}, "want github, gitea or gitlab"},
		{"bad repo", forge.Config{Remote: "origin", Token: "t", Repo: "nope"}, "OWNER/NAME"},
		{"gitea", forge.Config{Remote: "origin", Kind: "gitea", API: "https://gitea.test/api/v1/", Token: "t"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Check()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tt.want)
		})
	}
	require.NotContains(t, forge.Config{Remote: "origin", Token: "sekrit"}.String(), "sekrit")
}

func TestRepoFromURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"https://github.com/acme/app.git":         "acme/app",
		"https://x:y@github.com/acme/app":         "acme/app",
		"git@github.com:acme/app.git":             "acme/app",
		"http://127.0.0.1:3000/git/acme/app.git/": "acme/app",
	} {
		got, err := forge.RepoFromURL(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := forge.RepoFromURL("/app.git")
	require.ErrorContains(t, err, "--forge-repo")
}

// A forge that refuses the token (the push went through with another
// credential) fails with ErrRefused, which is not retried.
func TestPublishRefusedByTheForge(t *testing.T) {
	t.Parallel()
	srv := forgetest.NewGitServer(t, token)
	gh := forgetest.NewGitHub(t, "another-token", srv)
	dir, base := person(t, srv)
	commitOn(t, dir, "longrun/s1", "b.txt", "two\n")
	cfg := forge.Config{Remote: "origin", API: gh.URL + "/", Token: token}
	_, err := forge.Publish(context.Background(), cfg, forge.Request{Dir: dir, Branch: "longrun/s1", BaseCommit: base, Session: "s1", Summary: "x"})
	require.ErrorIs(t, err, forge.ErrRefused)
	require.NotContains(t, err.Error(), token)
	require.Empty(t, gh.Pulls())
}
