package checkout

import (
	"context"
	"fmt"
	"strings"

	"github.com/longrun/longrun/gitsafe"
)

// Publishing a session's branch to the repository's remote (package
// forge opens the pull request): git on the host through the same door as
// every other host git (gitCmd), with the worker's remote settings
// (gitsafe.HostRemote) and the call's credentials as configuration in
// the environment (auth), never in the URL or on the command line, so
// `git remote -v`, ps and git's error messages cannot show them.

// PushTo pushes branch of the repository at dir to remote (a remote's
// name in that repository, or a URL) under the same name, and returns
// the commit pushed. The branch is the session's own, so the push is
// forced: a retry after a push that went through, or a second push
// after the session worked on, lands the same way.
func PushTo(ctx context.Context, dir, remote, branch string, auth [][2]string) (string, error) {
	ref := "refs/heads/" + branch
	commit, err := git(ctx, dir, nil, "rev-parse", "--verify", "--quiet", ref+"^{commit}")
	if err != nil || commit == "" {
		return "", fmt.Errorf("push %s: the branch is not in %s", branch, dir)
	}
	if _, err := gitAuth(ctx, dir, auth, "push", "--quiet", "--force", "--no-verify", remote, ref+":"+ref); err != nil {
		return "", fmt.Errorf("push %s to %s: %w", branch, remote, err)
	}
	return commit, nil
}

// RemoteHead is the branch the remote's HEAD names (its default branch,
// e.g. "main"), "" when it names none.
func RemoteHead(ctx context.Context, dir, remote string, auth [][2]string) (string, error) {
	out, err := gitAuth(ctx, dir, auth, "ls-remote", "--symref", remote, "HEAD")
	if err != nil {
		return "", fmt.Errorf("read the default branch of %s: %w", remote, err)
	}
	for _, line := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: refs/heads/"); ok {
			name, _, _ := strings.Cut(rest, "\t")
			return name, nil
		}
	}
	return "", nil
}

// RemoteURL is the URL remote stands for in the repository at dir: a
// remote's name is looked up there; anything else is a URL or path
// already.
func RemoteURL(ctx context.Context, dir, remote string) string {
	if !strings.ContainsAny(remote, ":/") {
		if u, err := git(ctx, dir, nil, "remote", "get-url", "--push", remote); err == nil && u != "" {
			return u
		}
	}
	return remote
}

// DiffStat is `git diff --stat` of branch against base in the repository
// at repo: the changed-files table a reviewer reads first.
func DiffStat(ctx context.Context, repo, base, branch string) (string, error) {
	out, err := gitRaw(ctx, repo, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--stat=100", "--no-color", base, branch, "--")
	if err != nil {
		return "", fmt.Errorf("diff stat: %w", err)
	}
	return strings.TrimRight(out, "\n"), nil
}

// HasBranch reports whether the repository at dir holds branch.
func HasBranch(ctx context.Context, dir, branch string) bool {
	c, err := git(ctx, dir, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch+"^{commit}")
	return err == nil && c != ""
}

// gitAuth runs a git that talks to a remote (gitsafe.HostRemote) with
// auth added to its configuration through the environment.
func gitAuth(ctx context.Context, dir string, auth [][2]string, args ...string) (string, error) {
	cmd, err := gitCmd(ctx, gitsafe.HostRemote, dir, nil, args...)
	if err != nil {
		return "", err
	}
	cmd.Env = gitsafe.WithConfig(cmd.Env, auth...)
	out, _, err := runCmd(cmd, "", args)
	return strings.TrimSpace(out), err
}
