package activities

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

// TestPushBranchWhileTheCheckoutIsOpen: PushBranch with open (a session
// waiting for a review) commits what the checkout holds on its branch,
// control files left out, pushes it to the remote the person's
// repository names and opens the pull request, leaving the checkout
// where it was; a second change is a second commit on the same pull
// request. A branch still at its base publishes nothing.
func TestPushBranchWhileTheCheckoutIsOpen(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	token := "ghp_unit" + strings.Repeat("x", 8)
	srv := forgetest.NewGitServer(t, token)
	gh := forgetest.NewGitHub(t, token, srv)
	url, bare := srv.Repo(t, "acme/app")
	a, root := newActs(t, nil)
	run := func(dir string, args ...string) string {
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
		return string(out)
	}
	run(root, "init", "-q", "-b", "main", ".")
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644))
	run(root, "add", "a.txt")
	run(root, "commit", "-qm", "first")
	run(root, "remote", "add", "origin", url)
	run(root, "push", "-q", strings.Replace(url, "http://", "http://me:"+token+"@", 1), "main")
	a = a.with(func(c *Config) {
		c.StateDir = t.TempDir()
		c.Forge = &forge.Config{Remote: "origin", API: gh.URL + "/", Token: token}
	})
	res, err := a.OpenCheckout(ctx, CheckoutRequest{})
	require.NoError(t, err)
	co := *res.Checkout

	pub, err := a.PushBranch(ctx, PushRequest{Checkout: co, Summary: "Nothing yet", Open: true, Message: "nothing"})
	require.NoError(t, err)
	require.Empty(t, pub.URL, "a branch at its base: no pull request")
	require.Empty(t, gh.Pulls())

	require.NoError(t, os.WriteFile(filepath.Join(co.Dir, "a.txt"), []byte("two\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(co.Dir, "AGENTS.md"), []byte("obey the issue\n"), 0o644))
	pub, err = a.PushBranch(ctx, PushRequest{Checkout: co, Summary: "Two\n\nSays two.", Open: true, Message: "two"})
	require.NoError(t, err)
	require.Equal(t, gh.URL+"/acme/app/pull/1", pub.URL)
	require.True(t, pub.Created)
	require.DirExists(t, co.Dir, "the checkout stays open")
	require.Equal(t, "two\n", run(bare, "show", co.Branch+":a.txt"))
	require.NotContains(t, run(bare, "ls-tree", "--name-only", co.Branch), "AGENTS.md", "control files are left out")
	require.Contains(t, gh.Pulls()[0].Body, "AGENTS.md", "and the pull request says so")

	require.NoError(t, os.WriteFile(filepath.Join(co.Dir, "a.txt"), []byte("three\n"), 0o644))
	pub2, err := a.PushBranch(ctx, PushRequest{Checkout: co, Summary: "Three\n\nSays three.", Open: true, Message: "three"})
	require.NoError(t, err)
	require.Equal(t, pub.URL, pub2.URL)
	require.False(t, pub2.Created)
	require.NotEqual(t, pub.Commit, pub2.Commit)
	require.Equal(t, "2\n", run(bare, "rev-list", "--count", "main.."+co.Branch))
	pulls := gh.Pulls()
	require.Len(t, pulls, 1)
	require.Equal(t, "Three", pulls[0].Title)
	require.Len(t, pulls[0].Comments, 1)
	require.NotContains(t, run(root, "config", "--list"), token)
}
