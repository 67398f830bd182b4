package checkout

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
)

// Nested repositories are the session's, never the worker's git's to go
// into. git add --all records a directory holding a .git (a repository
// the session made: git init, a clone, an extracted tarball) as a gitlink,
// and once a gitlink is in the index every later git add (and status,
// diff against the working tree) runs `git status` inside that repository,
// with its own configuration: its filters, run on the host with whatever
// the worker's git has in its environment. So every git add this package
// runs is addAll: the gitlinks HEAD has (a submodule of the person's) are
// kept out of its pathspec, so git never looks into them whatever the
// session put there, and the gitlinks the add recorded anew (or changed)
// are put back to what HEAD has before anything is written from the
// index: a checkpoint, the close and the copy's first commit never record
// a gitlink the base does not have. The nested repository's files are not
// committed either: git cannot add them through the parent; the close
// lists the directory among what it left out.
//
// A worker killed between the add and the drop leaves the new gitlink in
// that index, where the next add would go into it: so the drop also runs
// before the add, unless the index is the checkpoints' own (the hot path),
// whose adds leave a marker beside it until their drop is done
// (addMarked), and which starts marked when copied from the checkout's.

// gitlinkMode is the mode git gives a gitlink in an index or a tree.
const gitlinkMode = "160000"

// addAll is git add --all in dir through env's index (pre are git's own
// options, before "add"), with HEAD's gitlinks left out and new gitlinks
// taken back out of the index, before and after; it returns the paths of
// those the add found (nested repositories the session made).
func addAll(ctx context.Context, dir string, env []string, pre ...string) ([]string, error) {
	return addMarked(ctx, dir, env, "", pre...)
}

// addMarked is addAll for an index whose adds mark themselves with the
// file marker: the drop before the add runs only when the marker is
// there (an add that did not finish its drop, or an index just copied).
// marker "": always.
func addMarked(ctx context.Context, dir string, env []string, marker string, pre ...string) ([]string, error) {
	head, err := headCommit(ctx, dir)
	if err != nil {
		return nil, err
	}
	links, err := headGitlinks(ctx, dir, head)
	if err != nil {
		return nil, err
	}
	pending := marker == ""
	if marker != "" {
		if _, err := os.Stat(marker); err == nil {
			pending = true
		} else if err := os.WriteFile(marker, nil, 0o600); err != nil {
			return nil, fmt.Errorf("mark the index: %w", err)
		}
	}
	if pending {
		if _, err := dropNewGitlinks(ctx, dir, env, head); err != nil {
			return nil, err
		}
	}
	nested, err := untrackedRepos(ctx, dir, env, pre)
	if err != nil {
		return nil, err
	}
	args := append(append([]string(nil), pre...), "add", "--all")
	if len(links)+len(nested) > 0 {
		// Only with paths to leave out: a pathspec turns the untracked
		// cache off.
		args = append(args, "--", ":(top)")
		for _, l := range append(slices.Clone(links), nested...) {
			args = append(args, ":(exclude,top,literal)"+l)
		}
	}
	if _, err := git(ctx, dir, env, args...); err != nil {
		return nil, err
	}
	dropped, err := dropNewGitlinks(ctx, dir, env, head)
	if err == nil && marker != "" {
		os.Remove(marker)
	}
	return append(nested, dropped...), err
}

// untrackedRepos are the nested repositories among dir's untracked
// paths, which git lists as a directory ("sub/") and does not enter. They
// are left out of the add by pathspec: `git add` would record a gitlink
// (dropped afterwards anyway), and for a repository without a commit it
// fails the whole add ("does not have a commit checked out"), so a model
// that ran `git init sub` could stop every checkpoint and the close.
func untrackedRepos(ctx context.Context, dir string, env, pre []string) ([]string, error) {
	args := append(append([]string(nil), pre...), "ls-files", "-z", "--others", "--exclude-standard")
	out, err := gitRaw(ctx, dir, env, args...)
	if err != nil {
		return nil, fmt.Errorf("list untracked repositories: %w", err)
	}
	var repos []string
	for _, p := range strings.Split(out, "\x00") {
		if strings.HasSuffix(p, "/") {
			repos = append(repos, strings.TrimSuffix(p, "/"))
		}
	}
	return repos, nil
}

// headCommit is the commit at HEAD in dir, "" when the branch has none yet.
func headCommit(ctx context.Context, dir string) (string, error) {
	out, code, err := gitCode(ctx, dir, nil, "", "rev-parse", "--verify", "--quiet", "HEAD^{commit}")
	if code == 1 {
		return "", nil // unborn: a copy before its first commit
	}
	return strings.TrimSpace(out), err
}

// gitlinkCache holds the gitlinks of commits already listed: a commit's
// tree never changes, and a checkout's HEAD stays until its close, so each
// checkout lists its base's once per worker process.
var gitlinkCache = struct {
	sync.Mutex
	m map[string][]string
}{m: map[string][]string{}}

// headGitlinks are the paths of the gitlinks in commit's tree (none for
// "").
func headGitlinks(ctx context.Context, dir, commit string) ([]string, error) {
	if commit == "" {
		return nil, nil
	}
	gitlinkCache.Lock()
	links, ok := gitlinkCache.m[commit]
	gitlinkCache.Unlock()
	if ok {
		return links, nil
	}
	out, err := gitRaw(ctx, dir, nil, "ls-tree", "-r", "-z", "--full-tree", commit)
	if err != nil {
		return nil, fmt.Errorf("list gitlinks: %w", err)
	}
	links = []string{}
	for _, rec := range strings.Split(out, "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if ok && strings.HasPrefix(meta, gitlinkMode+" ") {
			links = append(links, path)
		}
	}
	gitlinkCache.Lock()
	if len(gitlinkCache.m) > 1000 {
		gitlinkCache.m = map[string][]string{}
	}
	gitlinkCache.m[commit] = links
	gitlinkCache.Unlock()
	return links, nil
}

// dropNewGitlinks puts every gitlink of env's index that head does not
// have, as it is, back to head's entry at its path (none: out of the
// index), without git going into any of them (the index against a tree,
// and update-index, never look at a working tree), and returns their
// paths.
func dropNewGitlinks(ctx context.Context, dir string, env []string, head string) ([]string, error) {
	type entry struct{ mode, oid, path string }
	var found []entry
	if head == "" {
		out, err := gitRaw(ctx, dir, env, "ls-files", "--stage", "-z")
		if err != nil {
			return nil, fmt.Errorf("find gitlinks: %w", err)
		}
		for _, rec := range strings.Split(out, "\x00") {
			meta, path, ok := strings.Cut(rec, "\t")
			if f := strings.Fields(meta); ok && len(f) == 3 && f[0] == gitlinkMode {
				found = append(found, entry{"0", strings.Repeat("0", len(f[1])), path})
			}
		}
	} else {
		out, err := gitRaw(ctx, dir, env, "diff-index", "--cached", "--raw", "-z", "--no-renames", "--ignore-submodules=none", head, "--")
		if err != nil {
			return nil, fmt.Errorf("find gitlinks: %w", err)
		}
		// ":<old mode> <new mode> <old oid> <new oid> <status>\0<path>\0"
		recs := strings.Split(out, "\x00")
		for i := 0; i+1 < len(recs); i += 2 {
			f := strings.Fields(strings.TrimPrefix(recs[i], ":"))
			if len(f) != 5 || f[1] != gitlinkMode {
				continue
			}
			mode := f[0]
			if strings.Trim(mode, "0") == "" {
				mode = "0" // not in head: removed
			}
			found = append(found, entry{mode, f[2], recs[i+1]})
		}
	}
	if len(found) == 0 {
		return nil, nil
	}
	var in strings.Builder
	paths := make([]string, 0, len(found))
	for _, e := range found {
		fmt.Fprintf(&in, "%s %s\t%s\x00", e.mode, e.oid, e.path)
		paths = append(paths, e.path)
	}
	if _, err := run(ctx, dir, env, in.String(), "update-index", "-z", "--index-info"); err != nil {
		return nil, fmt.Errorf("leave nested repositories out: %w", err)
	}
	return paths, nil
}
