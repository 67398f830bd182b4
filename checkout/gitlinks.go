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
	a, err := addMarked(ctx, dir, env, "", pre...)
	return a.left, err
}

// added is what an add (addMarked) did: the nested repositories and new
// gitlinks it left out, the commit at HEAD ("" when the branch has none
// yet) and, when there is one, the index's changes against it once the
// new gitlinks are out: what a commit of that index records; and what
// the names addLooking was given resolve to.
type added struct {
	left    []string
	head    string
	changes []indexChange
	also    []object
}

// addMarked is addAll for an index whose adds mark themselves with the
// file marker: the drop before the add runs only when the marker is
// there (an add that did not finish its drop, or an index just copied).
// marker "": always.
//
// The reads before the add (HEAD, the untracked nested repositories and
// the gitlinks the index has already) run at once: none writes. The
// drop before the add runs on what the index has against HEAD by name,
// once HEAD is known to be a commit (as headCommit reads it); when it
// drops anything, the nested repositories are listed again after it.
func addMarked(ctx context.Context, dir string, env []string, marker string, pre ...string) (added, error) {
	return addLooking(ctx, dir, env, marker, nil, pre...)
}

// addLooking is addMarked that also resolves names (lookObjects) in the
// git that reads HEAD before the add: added.also. With no names, HEAD is
// read as headCommit reads it.
func addLooking(ctx context.Context, dir string, env []string, marker string, names []string, pre ...string) (added, error) {
	pending := marker == ""
	if marker != "" {
		if _, err := os.Stat(marker); err == nil {
			pending = true
		} else if err := os.WriteFile(marker, nil, 0o600); err != nil {
			return added{}, fmt.Errorf("mark the index: %w", err)
		}
	}
	var (
		head, nested               = "", []string(nil)
		headErr, nestedErr, preErr error
		before                     []indexChange
	)
	var wg sync.WaitGroup
	var also []object
	wg.Go(func() {
		if len(names) == 0 {
			head, headErr = headCommit(ctx, dir)
			return
		}
		// HEAD^{commit} resolves to nothing where rev-parse --verify
		// --quiet exits 1: a branch with no commit yet (headCommit's "").
		objs, err := lookObjects(ctx, dir, append([]string{"HEAD^{commit}"}, names...)...)
		if err != nil {
			headErr = err
			return
		}
		head, also = objs[0].id, objs[1:]
	})
	wg.Go(func() { nested, nestedErr = untrackedRepos(ctx, dir, env, pre) })
	if pending {
		wg.Go(func() { before, preErr = indexChanges(ctx, dir, env, "HEAD") })
	}
	wg.Wait()
	if headErr != nil {
		return added{}, headErr
	}
	links, err := headGitlinks(ctx, dir, head)
	if err != nil {
		return added{}, err
	}
	if pending {
		if head == "" || preErr != nil {
			// No commit at HEAD, or the read by name failed: read again
			// against head itself, as the drop always did.
			before, preErr = indexChanges(ctx, dir, env, head)
		}
		if preErr != nil {
			return added{}, preErr
		}
		dropped, err := dropGitlinks(ctx, dir, env, before)
		if err != nil {
			return added{}, err
		}
		if len(dropped) > 0 {
			nested, nestedErr = untrackedRepos(ctx, dir, env, pre) // the dropped ones are untracked now
		}
	}
	if nestedErr != nil {
		return added{}, nestedErr
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
		return added{}, err
	}
	after, err := indexChanges(ctx, dir, env, head)
	if err != nil {
		return added{}, err
	}
	dropped, err := dropGitlinks(ctx, dir, env, after)
	if err != nil {
		return added{}, err
	}
	if marker != "" {
		os.Remove(marker)
	}
	a := added{left: append(nested, dropped...), head: head, also: also}
	if head != "" {
		// A dropped gitlink is back to HEAD's entry, or out: no change.
		gone := map[string]bool{}
		for _, p := range dropped {
			gone[p] = true
		}
		for _, c := range after {
			if !gone[c.path] {
				a.changes = append(a.changes, c)
			}
		}
	}
	return a, nil
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
	rememberGitlinks(commit, links)
	return links, nil
}

// rememberGitlinks records the gitlinks of commit's tree (headGitlinks),
// for a caller that knows them without listing the tree.
func rememberGitlinks(commit string, links []string) {
	if links == nil {
		links = []string{}
	}
	gitlinkCache.Lock()
	if len(gitlinkCache.m) > 1000 {
		gitlinkCache.m = map[string][]string{}
	}
	gitlinkCache.m[commit] = links
	gitlinkCache.Unlock()
}

// indexChange is one entry of env's index that differs from a commit's
// tree: its mode there and in the index ("000000" where it is not), its
// object there, git's status letter (U: unmerged) and its path.
type indexChange struct{ oldMode, newMode, oldOID, status, path string }

// indexChanges are the entries of env's index that differ from head's
// tree, read without git going into any gitlink (the index against a
// tree never looks at a working tree). head "" (no commit yet): the
// index's gitlinks, as new entries.
func indexChanges(ctx context.Context, dir string, env []string, head string) ([]indexChange, error) {
	var changes []indexChange
	if head == "" {
		out, err := gitRaw(ctx, dir, env, "ls-files", "--stage", "-z")
		if err != nil {
			return nil, fmt.Errorf("find gitlinks: %w", err)
		}
		for _, rec := range strings.Split(out, "\x00") {
			meta, path, ok := strings.Cut(rec, "\t")
			if f := strings.Fields(meta); ok && len(f) == 3 && f[0] == gitlinkMode {
				changes = append(changes, indexChange{"000000", gitlinkMode, strings.Repeat("0", len(f[1])), "A", path})
			}
		}
		return changes, nil
	}
	out, err := gitRaw(ctx, dir, env, "diff-index", "--cached", "--raw", "-z", "--no-renames", "--ignore-submodules=none", head, "--")
	if err != nil {
		return nil, fmt.Errorf("find gitlinks: %w", err)
	}
	// ":<old mode> <new mode> <old oid> <new oid> <status>\0<path>\0"
	recs := strings.Split(out, "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		f := strings.Fields(strings.TrimPrefix(recs[i], ":"))
		if len(f) != 5 {
			continue
		}
		changes = append(changes, indexChange{f[0], f[1], f[2], f[4], recs[i+1]})
	}
	return changes, nil
}

// dropGitlinks puts every gitlink among changes (env's index against
// HEAD, indexChanges) back to HEAD's entry at its path (none: out of the
// index), without git going into any of them (update-index never looks
// at a working tree), and returns their paths.
func dropGitlinks(ctx context.Context, dir string, env []string, changes []indexChange) ([]string, error) {
	var in strings.Builder
	var paths []string
	for _, c := range changes {
		if c.newMode != gitlinkMode {
			continue
		}
		mode := c.oldMode
		if strings.Trim(mode, "0") == "" {
			mode = "0" // not in head: removed
		}
		fmt.Fprintf(&in, "%s %s\t%s\x00", mode, c.oldOID, c.path)
		paths = append(paths, c.path)
	}
	if len(paths) == 0 {
		return nil, nil
	}
	if _, err := run(ctx, dir, env, in.String(), "update-index", "-z", "--index-info"); err != nil {
		return nil, fmt.Errorf("leave nested repositories out: %w", err)
	}
	return paths, nil
}

// ignoringSubmodules is whether git diff --ignore-submodules=all leaves
// the change c out: one between two gitlinks, or a gitlink added or
// removed (diff_change and diff_addremove skip those); an unmerged entry
// it always shows.
func (c indexChange) ignoringSubmodules() bool {
	if c.status == "U" {
		return false
	}
	gitlinkOrNone := func(mode string) bool { return mode == gitlinkMode || strings.Trim(mode, "0") == "" }
	return gitlinkOrNone(c.oldMode) && gitlinkOrNone(c.newMode)
}
