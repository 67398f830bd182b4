package checkout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/gitsafe"
	"github.com/longrun/longrun/permission"
)

// Closed is what ending a session's checkout did: see
// record.Closed.
type Closed = record.Closed

// Close commits everything the session left in its checkout on its
// branch, with message, except control files (Closed.LeftOut), brings the
// branch (and its last checkpoint) into the person's repository, then
// removes the checkout; the branch stays until Discard. Running it again
// after the checkout is gone (an activity retry after the removal) makes
// nothing and reports the branch as it is (closedBranch).
func Close(ctx context.Context, in Info, message string) (Closed, error) {
	if _, err := os.Stat(in.Dir); errors.Is(err, os.ErrNotExist) {
		_, _ = git(ctx, in.Repo, nil, "worktree", "prune")
		if err := dropBaseRef(ctx, in); err != nil {
			return Closed{}, err
		}
		return closedBranch(ctx, in), nil
	}
	if !in.Copy && ownRepo(in.Dir) {
		return closeOwn(ctx, in, message)
	}
	c, err := closeCommit(ctx, in, message)
	if err != nil {
		return Closed{}, err
	}
	if in.Copy {
		return c, nil // the copy is where its branch lives: kept until Discard
	}
	return c, finishCheckout(ctx, in)
}

// closeOwn is Close for a repository of its own (finishOwn): whether it
// has a checkpoint ref is read with HEAD before the commit (the commit
// does not change it); then the
// branch's head is read and the branch measured against its base while
// it is brought into the person's repository (all only read the
// checkout); then the checkout and BaseRef go.
func closeOwn(ctx context.Context, in Info, message string) (Closed, error) {
	if c, ok, err := closeUntouched(ctx, in); ok {
		return c, err
	}
	committed, leftOut, refs, err := commitExceptControl(ctx, in.Dir, message, CheckpointRef(in.Name))
	if err != nil {
		return Closed{}, err
	}
	c := Closed{LeftOut: leftOut}
	var headErr, brought error
	var wg sync.WaitGroup
	wg.Go(func() { brought = bringOwn(ctx, in, refs[0].id != "") })
	wg.Go(func() { c.Changes = measure(ctx, in, leftOut) })
	c.Commit, headErr = branchHead(ctx, in, committed)
	wg.Wait()
	if headErr != nil {
		return Closed{}, headErr // a retry brings the branch again
	}
	if brought != nil {
		return c, brought
	}
	return c, dropOwn(ctx, in)
}

// closeUntouched is closeOwn for a checkout the session left as it was
// opened (a session that only read, a review, a question answered): its
// working tree and index are HEAD's, HEAD is still the base on the
// session's branch, and no checkpoint was made. The branch is then the
// base, a commit the person's repository holds already (BaseRef keeps
// it), so nothing is committed, measured or fetched: one git status here,
// one update-ref transaction there (the branch made at the base, BaseRef
// dropped), then the checkout goes. That is two git processes where the
// full close runs nine and the fetch's seven, at every such session's
// end (each one 7-15 ms on a small virtual machine). Anything else, or
// any doubt (a status git did not give, a checkpoint ref that may be
// there), is not untouched: ok is false and nothing was done. Run again
// after the update-ref (a retry), it does the same again; after the
// removal, Close finds the checkout gone, as after the full close.
func closeUntouched(ctx context.Context, in Info) (c Closed, ok bool, err error) {
	// The branch and base go into update-ref's input, a line each: only
	// the names Create makes (an object id, the session's branch) do.
	if !isObjectID(in.Base) || in.Branch != BranchPrefix+in.Name || in.Repo == "" || in.Repo == in.Dir ||
		!isCheckoutDir(in) || mayHaveCheckpoint(in) {
		return Closed{}, false, nil
	}
	if !isUntouched(ctx, in) {
		return Closed{}, false, nil
	}
	tx := "update refs/heads/" + in.Branch + " " + in.Base + "\ndelete " + BaseRef(in.Name) + "\n"
	if _, err := gitIn(ctx, in.Repo, tx, "update-ref", "--stdin"); err != nil {
		return Closed{}, true, fmt.Errorf("bring branch %s into %s: %w", in.Branch, in.Repo, err)
	}
	return Closed{Changes: &Stat{}}, true, removeOwn(in)
}

// isUntouched reports whether the checkout is as it was opened (HEAD the
// base on the session's branch, no path changed), by one git status.
// What the full close's add would see counts: untracked files one by one,
// a nested repository as a change (git lists it as "dir/" and does not
// go in), and no setting of the checkout's skips a look (its .git is the
// worker's; the sandbox binds it read-only). The worker's git never goes
// into a nested repository (gitsafe: its configuration names programs),
// so status cannot see inside a submodule: a base with gitlinks takes
// the full close, which reports what became of them. A status git did
// not give is not untouched.
func isUntouched(ctx context.Context, in Info) bool {
	if in.Base == "" {
		return false
	}
	if links, err := headGitlinks(ctx, in.Dir, in.Base); err != nil || len(links) > 0 {
		return false
	}
	out, err := gitRaw(ctx, in.Dir, nil, "--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "core.ignoreStat=false",
		"status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", "--ignore-submodules=all", "--no-renames")
	return err == nil && untouched(out, in)
}

// untouched reads git status --porcelain=v2 --branch -z: HEAD is in.Base
// on in.Branch, and not one path differs from it, tracked or not.
func untouched(status string, in Info) bool {
	var oid, head string
	for _, rec := range strings.Split(status, "\x00") {
		switch {
		case rec == "":
		case strings.HasPrefix(rec, "# branch.oid "):
			oid = strings.TrimPrefix(rec, "# branch.oid ")
		case strings.HasPrefix(rec, "# branch.head "):
			head = strings.TrimPrefix(rec, "# branch.head ")
		case strings.HasPrefix(rec, "# "):
		default:
			return false // a changed, unmerged or untracked path
		}
	}
	return oid == in.Base && head == in.Branch
}

// mayHaveCheckpoint reports whether the checkout's repository may hold a
// checkpoint ref (CheckpointRef): mayHaveRef in its .git.
func mayHaveCheckpoint(in Info) bool {
	return mayHaveRef(filepath.Join(in.Dir, ".git"), CheckpointRef(in.Name))
}

// mayHaveRef reports whether the repository whose (common) git directory
// is gitDir may hold ref, read from its files instead of a git process:
// a loose ref, a packed one, anything in the way of the loose ref's path,
// a ref store this does not read (reftable), or a git directory that
// cannot be read, all say yes. Only a no is an answer; a yes sends the
// caller to git.
func mayHaveRef(gitDir, ref string) bool {
	if gitDir == "" || !filepath.IsAbs(gitDir) {
		return true
	}
	if _, err := os.Lstat(filepath.Join(gitDir, filepath.FromSlash(ref))); !errors.Is(err, os.ErrNotExist) {
		return true
	}
	if _, err := os.Lstat(filepath.Join(gitDir, "reftable")); !errors.Is(err, os.ErrNotExist) {
		return true
	}
	// Read as gitsafe reads a hostile repository's files: a regular file
	// only (no FIFO, no link to a device), and bounded; past the bound a
	// large repository's packed refs are git's to read.
	packed, err := gitsafe.ReadBounded(filepath.Join(gitDir, "packed-refs"), maxPackedRefs+1)
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	return err != nil || len(packed) > maxPackedRefs || strings.Contains(string(packed), ref)
}

// maxPackedRefs is the largest packed-refs file mayHaveRef reads itself.
const maxPackedRefs = 1 << 20

// CommitOpen commits what the open checkout holds on its branch, control
// files left out, and measures the branch against its base, as the close
// does, leaving the checkout where it is: a session that publishes its
// branch while it waits for a review works on after it.
func CommitOpen(ctx context.Context, in Info, message string) (Closed, error) {
	return closeCommit(ctx, in, message)
}

// closeCommit commits the checkout, control files left out, and measures
// the branch against its base.
func closeCommit(ctx context.Context, in Info, message string) (Closed, error) {
	if isUntouched(ctx, in) {
		// Nothing to commit and nothing against the base: what the
		// commit and the measure below would say, by one git.
		return Closed{Changes: &Stat{}}, nil
	}
	committed, leftOut, _, err := commitExceptControl(ctx, in.Dir, message)
	if err != nil {
		return Closed{}, err
	}
	c := Closed{LeftOut: leftOut}
	var wg sync.WaitGroup
	wg.Go(func() { c.Changes = measure(ctx, in, leftOut) })
	c.Commit, err = branchHead(ctx, in, committed)
	wg.Wait()
	if err != nil {
		return Closed{}, err
	}
	return c, nil
}

// branchHead is what a close reports as its commit: the one it made
// (committed), or, with nothing left to commit, the branch's head when it
// is not the base (the branch may hold the session's changes already:
// commits it made itself, git commit in a command, or an earlier
// attempt's), "" otherwise.
func branchHead(ctx context.Context, in Info, committed bool) (string, error) {
	head, err := git(ctx, in.Dir, nil, "rev-parse", "HEAD")
	switch {
	case committed && err != nil:
		return "", err
	case committed:
		return head, nil
	case err == nil && in.Base != "" && head != in.Base:
		return head, nil
	}
	return "", nil
}

// measure is what the branch holds against its base (nil when it has no
// base or cannot be read), with the control files left out.
func measure(ctx context.Context, in Info, leftOut []string) *Stat {
	if in.Base == "" {
		return nil
	}
	st, err := BranchStats(ctx, in.Dir, in.Base, "HEAD")
	if err != nil {
		return nil
	}
	st.Control = leftOut
	return &st
}

// closedBranch is what Close reports for a checkout an earlier attempt
// closed and removed: the branch's head and its changes against the base,
// read from the repository (nothing when the branch is at its base or
// cannot be read). The control files it left out are gone with the
// checkout.
func closedBranch(ctx context.Context, in Info) Closed {
	if in.Base == "" || in.Repo == "" || in.Repo == in.Dir {
		return Closed{}
	}
	head, err := git(ctx, in.Repo, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+in.Branch)
	if err != nil || head == in.Base {
		return Closed{}
	}
	c := Closed{Commit: head}
	if st, err := BranchStats(ctx, in.Repo, in.Base, head); err == nil {
		c.Changes = &st
	}
	return c
}

// finishCheckout ends a checkout whose branch was committed: a repository
// of its own brings its branch into the person's repository and goes
// (finishOwn); a worktree of the person's repository (made before) is
// removed, its branch already there.
func finishCheckout(ctx context.Context, in Info) error {
	if ownRepo(in.Dir) {
		return finishOwn(ctx, in)
	}
	return removeCheckout(ctx, in)
}

// removeCheckout removes a checkout without bringing anything of it into
// the person's repository (Discard): a repository of its own by removing
// its directory, a worktree with git worktree remove.
func removeCheckout(ctx context.Context, in Info) error {
	if ownRepo(in.Dir) {
		return removeOwn(in)
	}
	if _, err := git(ctx, in.Repo, nil, "worktree", "remove", "--force", in.Dir); err != nil {
		return fmt.Errorf("remove checkout %s: %w", in.Dir, err)
	}
	return nil
}

// commitExceptControl is Commit with the control files the working tree
// changed kept out of the index: they are listed, not committed. It says
// whether it made a commit; the caller reads the branch's head. What
// names (refs of the checkout) resolve to, before the commit, is read
// with HEAD (addLooking).
//
// What the add left in the index against HEAD (addMarked) answers the
// questions git diff --cached would: which files changed, and whether
// anything did, as --ignore-submodules=all sees them (ignoringSubmodules).
// Only when control files are put back does git answer the second
// itself, after that reset.
func commitExceptControl(ctx context.Context, dir, message string, names ...string) (bool, []string, []object, error) {
	a, err := addLooking(ctx, dir, nil, "", names)
	if err != nil {
		return false, nil, nil, fmt.Errorf("commit checkout %s: %w", dir, err)
	}
	var changed []string
	if a.head == "" {
		// No commit at HEAD (a session's git checkout --orphan): git diff
		// against HEAD says what it says, as it always did.
		out, err := gitRaw(ctx, dir, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--cached", "--name-only", "-z", "--no-renames", "HEAD", "--")
		if err != nil {
			return false, nil, nil, fmt.Errorf("commit checkout %s: %w", dir, err)
		}
		for _, p := range strings.Split(out, "\x00") {
			if p != "" {
				changed = append(changed, p)
			}
		}
	} else {
		for _, c := range a.changes {
			if !c.ignoringSubmodules() {
				changed = append(changed, c.path)
			}
		}
	}
	var control []string
	for _, p := range changed {
		if permission.IsControlPath(p) {
			control = append(control, p)
		}
	}
	staged := len(changed) > 0
	if len(control) > 0 {
		// Back to HEAD's version in the index: a new file leaves it, a
		// changed or deleted one gets its committed version back.
		args := append([]string{"reset", "--quiet", "HEAD", "--"}, control...)
		if _, err := git(ctx, dir, []string{"GIT_LITERAL_PATHSPECS=1"}, args...); err != nil {
			return false, nil, nil, fmt.Errorf("commit checkout %s: leave control files out: %w", dir, err)
		}
		_, err := git(ctx, dir, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--cached", "--quiet")
		staged = err != nil
	}
	// A nested repository the session made is left out whole (addAll):
	// listed with a trailing slash beside the control files.
	for _, n := range a.left {
		control = append(control, n+"/")
	}
	if !staged {
		return false, control, a.also, nil
	}
	if strings.TrimSpace(message) == "" {
		message = "longrun session"
	}
	if len(control) > 0 {
		message += "\n\nControl files and nested repositories the session changed, left out of this commit: " + strings.Join(control, ", ")
	}
	if _, err := git(ctx, dir, nil, append(noMaintenance, "commit", "--quiet", "--no-verify", "-m", message)...); err != nil {
		return false, nil, nil, fmt.Errorf("commit checkout %s: %w", dir, err)
	}
	return true, control, a.also, nil
}

// noMaintenance keeps a commit in a session's checkout from starting git
// maintenance run --auto there after it: a checkout is removed at its
// close, or kept only until discard, and a gc in it would be a process
// more at every close, run on a repository a session wrote.
var noMaintenance = []string{"-c", "maintenance.auto=false"}

// PatchPaths are the files a patch (as Diff makes it) touches, read by
// git apply itself, so quoting and renames are git's.
func PatchPaths(ctx context.Context, patch string) ([]string, error) {
	if strings.TrimSpace(patch) == "" {
		return nil, nil
	}
	out, err := run(ctx, os.TempDir(), nil, patch, "apply", "--numstat", "-z")
	if err != nil {
		return nil, fmt.Errorf("read the diff's files: %w", err)
	}
	// "added\tdeleted\tpath\0", or for a rename or copy
	// "added\tdeleted\t\0old\0new\0": both paths count.
	var paths []string
	recs := strings.Split(out, "\x00")
	for i := 0; i < len(recs); i++ {
		parts := strings.SplitN(recs[i], "\t", 3)
		switch {
		case len(parts) != 3:
		case parts[2] != "":
			paths = append(paths, parts[2])
		case i+2 < len(recs):
			paths = append(paths, recs[i+1], recs[i+2])
			i += 2
		}
	}
	return paths, nil
}

// ControlPaths are the control files among paths.
func ControlPaths(paths []string) []string {
	var out []string
	for _, p := range paths {
		if permission.IsControlPath(p) {
			out = append(out, p)
		}
	}
	return out
}
