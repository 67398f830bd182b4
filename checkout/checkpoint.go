package checkout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// CheckpointPrefix is where a session's checkpoints live, in its
// repository and in the checkpoint remote: refs/longrun/checkpoints/<name>.
// A private ref, not a branch: the person's branches and their history are
// never touched by a checkpoint.
const CheckpointPrefix = "refs/longrun/checkpoints/"

// CheckpointRef is the ref holding the last checkpoint of the checkout
// named name.
func CheckpointRef(name string) string { return CheckpointPrefix + name }

// Checkpoint records the checkout's files as they are now (untracked files
// included, ignored ones not) as a commit whose parent is the checkout's
// HEAD, on CheckpointRef(in.Name), without touching the checkout's index,
// its branch or its working tree: the tree is written through an index of
// the checkpoints' own (checkpointIndex; checkpoint_index.go says how it
// may lag behind the paths mode's checkpoints). When the tree and HEAD
// are those of prev, the last checkpoint, nothing is made and prev is
// returned.
func Checkpoint(ctx context.Context, in Info, prev string) (string, error) {
	return CheckpointPaths(ctx, in, prev, nil)
}

// CheckpointPaths is Checkpoint when the caller knows every file that can
// have changed since prev: paths (relative to in.Sub, slash-separated; an
// empty non-nil list: none), the files its tools wrote or deleted. The
// new tree is built from prev's with only those looked at, without any
// index (pathsTree), so its cost does not grow with the checkout: the
// walk and the index are most of a checkpoint's cost in a large
// repository. nil paths, no prev or an index of the checkpoints' own made
// just now mean a full look; so does anything the paths mode cannot be
// sure of (a path outside the checkout or through a symbolic link, a
// .gitignore or .gitattributes changed, an attribute that converts, a
// gitlink on the way...), so the result is always the full look's.
func CheckpointPaths(ctx context.Context, in Info, prev string, paths []string) (string, error) {
	commit, err := checkpoint(ctx, in, prev, paths)
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", in.Dir, err)
	}
	return commit, nil
}

// checkpointAdd are git's options for the checkpoints' git add (addAll):
// the untracked cache (kept in that index) spares reading directories
// that did not change when looking for new files.
var checkpointAdd = []string{"-c", "core.untrackedCache=true"}

func checkpoint(ctx context.Context, in Info, prev string, paths []string) (string, error) {
	dirs, err := gitDirs(ctx, in.Dir)
	if err != nil {
		return "", err
	}
	index := filepath.Join(dirs.git, checkpointIndex)
	if fi, err := os.Stat(index + ".lock"); err == nil && time.Since(fi.ModTime()) > 5*time.Minute {
		os.Remove(index + ".lock") // left by a worker killed mid-checkpoint
	}
	if _, err := os.Stat(index); errors.Is(err, os.ErrNotExist) {
		os.Remove(indexLag(index))
		if err := copyIndex(filepath.Join(dirs.git, "index"), index); err != nil {
			return "", err
		}
		// The checkout's index may hold a gitlink a killed close left:
		// the first add drops those first (addMarked).
		if err := os.WriteFile(indexAdding(index), nil, 0o600); err != nil {
			return "", err
		}
		paths = nil // its stats are the checkout index's: look at everything
	}
	if prev == "" {
		paths = nil
	}
	if paths != nil {
		// Any failure of the paths mode is left to the full look to
		// answer: it is slower, never wrong.
		if res, err := pathsTree(ctx, in, dirs, prev, paths); err == nil {
			return pathsCheckpoint(ctx, in, dirs, index, prev, res)
		}
	}
	return fullLook(ctx, in, dirs, index, prev)
}

// pathsCheckpoint commits the tree the paths mode built, noting the
// paths it looked at in the index's lag first.
func pathsCheckpoint(ctx context.Context, in Info, dirs repoDirs, index, prev string, res pathsResult) (string, error) {
	lines := make([]string, 0, len(res.paths)+1)
	for _, p := range res.paths {
		lines = append(lines, "P "+p)
	}
	if !res.fileMode {
		lines = append(lines, "S")
	}
	if err := appendLag(index, lines...); err != nil {
		os.Remove(indexLag(index)) // unknown: the next full look reads the index afresh
	}
	commit, err := commitTree(ctx, in, dirs, prev, res.st, res.tree)
	if err != nil {
		return "", err
	}
	if err := appendLag(index, "C "+commit); err != nil {
		os.Remove(indexLag(index))
	}
	return commit, nil
}

// fullLook brings the checkpoints' index up to every file with git add
// --all and commits its tree.
func fullLook(ctx context.Context, in Info, dirs repoDirs, index, prev string) (string, error) {
	// HEAD and the previous checkpoint are read while git add runs: each
	// git process costs milliseconds, and the two share nothing.
	stc := make(chan stateOrErr, 1)
	go func() {
		st, err := checkpointState(ctx, in.Dir, prev)
		stc <- stateOrErr{st, err}
	}()
	env := []string{"GIT_INDEX_FILE=" + index}
	err := syncIndex(ctx, in.Dir, env, index, prev)
	if err == nil {
		_, err = addMarked(ctx, in.Dir, env, indexAdding(index), checkpointAdd...)
	}
	got := <-stc
	if err != nil {
		return "", err
	}
	if got.err != nil {
		return "", got.err
	}
	tree, err := git(ctx, in.Dir, env, "write-tree")
	if err != nil {
		return "", err
	}
	commit, err := commitTree(ctx, in, dirs, prev, got.st, tree)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(indexLag(index), []byte("I "+commit+"\n"), 0o600); err != nil {
		os.Remove(indexLag(index))
	}
	return commit, nil
}

// commitTree makes the checkpoint commit of tree on HEAD and points the
// ref at it; prev when it has that tree and parent already.
func commitTree(ctx context.Context, in Info, dirs repoDirs, prev string, st ckptState, tree string) (string, error) {
	if prev != "" && tree == st.prevTree && st.head == st.prevParent {
		return prev, nil
	}
	commit, err := git(ctx, in.Dir, nil, "commit-tree", tree, "-p", st.head, "-m", "longrun checkpoint of "+in.Branch)
	if err != nil {
		return "", err
	}
	if err := setRef(ctx, in.Dir, dirs.common, CheckpointRef(in.Name), commit); err != nil {
		return "", err
	}
	return commit, nil
}

// indexAdding is the marker an add through the checkpoints' index leaves
// until it has dropped the gitlinks it recorded (addMarked).
func indexAdding(index string) string { return index + ".adding" }

type stateOrErr struct {
	st  ckptState
	err error
}

// checkpointIndex is the checkout's own index for checkpoints, in its git
// directory (out of the sandbox's reach, and not the checkout's index):
// kept between checkpoints, so each hashes only the files changed since
// the last one.
const checkpointIndex = "longrun-checkpoint-index"

// ckptState is what a checkpoint reads besides the files: HEAD, and the
// previous checkpoint's tree and parent.
type ckptState struct {
	head, prevTree, prevParent string
}

// checkpointState reads it with one git process (a checkpoint runs after
// every batch: each process costs milliseconds).
func checkpointState(ctx context.Context, dir, prev string) (ckptState, error) {
	args := []string{"rev-parse", "HEAD^{commit}"}
	if prev != "" {
		args = append(args, prev+"^{tree}", prev+"^")
	}
	out, err := git(ctx, dir, nil, args...)
	if err != nil && prev != "" {
		return checkpointState(ctx, dir, "") // the previous one is not here
	}
	if err != nil {
		return ckptState{}, err
	}
	l := append(strings.Split(out, "\n"), "", "")[:3]
	if l[0] == "" || (prev != "" && l[2] == "") {
		return ckptState{}, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	return ckptState{head: l[0], prevTree: l[1], prevParent: l[2]}, nil
}

// repoDirs are a checkout's git directory (its index, HEAD) and the
// repository's common one (its refs and objects): the same for a
// repository of its own, not for a worktree.
type repoDirs struct{ git, common string }

// gitDirs finds them from the checkout's .git (a directory, or a worktree's
// "gitdir:" file and its commondir) without a git process; any other
// layout asks git.
func gitDirs(ctx context.Context, dir string) (repoDirs, error) {
	dotGit := filepath.Join(dir, ".git")
	if fi, err := os.Stat(dotGit); err == nil && fi.IsDir() {
		return repoDirs{dotGit, dotGit}, nil
	}
	if b, err := os.ReadFile(dotGit); err == nil {
		if g, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); ok {
			if !filepath.IsAbs(g) {
				g = filepath.Join(dir, g)
			}
			d := repoDirs{g, g}
			if c, err := os.ReadFile(filepath.Join(g, "commondir")); err == nil {
				if d.common = strings.TrimSpace(string(c)); !filepath.IsAbs(d.common) {
					d.common = filepath.Join(g, d.common)
				}
			}
			return d, nil
		}
	}
	out, err := git(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")
	if err != nil {
		return repoDirs{}, err
	}
	l := strings.Split(out, "\n")
	if len(l) != 2 {
		return repoDirs{}, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	return repoDirs{l[0], l[1]}, nil
}

// setRef points ref at commit as git update-ref does with loose refs,
// without its process: ref.lock made exclusively, written, renamed over
// the ref. A loose ref wins over a packed one, and git's own writers (gc
// packing refs included) take the same lock. A repository whose refs are
// not files (reftable) is left to git update-ref. Checkpoint refs keep no
// reflog (core.logAllRefUpdates logs only branches, remote refs, notes).
func setRef(ctx context.Context, dir, common, ref, commit string) error {
	if _, err := os.Stat(filepath.Join(common, "reftable")); err == nil {
		_, err := git(ctx, dir, nil, "update-ref", ref, commit)
		return err
	}
	file := filepath.Join(common, filepath.FromSlash(ref))
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("update %s: %w", ref, err)
	}
	lock := file + ".lock"
	if fi, err := os.Stat(lock); err == nil && time.Since(fi.ModTime()) > 5*time.Minute {
		os.Remove(lock) // left by a worker killed mid-checkpoint
	}
	f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("update %s: %w", ref, err)
	}
	_, werr := f.WriteString(commit + "\n")
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(lock, file)
	}
	if werr != nil {
		os.Remove(lock)
		return fmt.Errorf("update %s: %w", ref, werr)
	}
	return nil
}

// copyIndex copies the index at from to to (none: none), keeping its file
// stats so the first checkpoint hashes only what changed.
func copyIndex(from, to string) error {
	b, err := os.ReadFile(from)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	tmp := to + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, to)
}

// PushCheckpoint stores the checkpoint commit in the remote (any git URL
// or the path of a shared bare repository) under CheckpointRef(name), with
// every object it needs: its parent, and so the base and the branch's
// commits. The ref is forced: a session's checkpoints are not one line of
// history (each is a child of the branch's head at the time).
func PushCheckpoint(ctx context.Context, dir, remote, name, commit string) error {
	if _, err := gitRemote(ctx, dir, "push", "--quiet", "--force", "--no-verify", remote, commit+":"+CheckpointRef(name)); err != nil {
		return fmt.Errorf("push checkpoint to %s: %w", remote, err)
	}
	return nil
}

// PushBranch stores the session's branch in the remote, so a person (or
// starter diff) can fetch it from there when the machine that made it is
// gone.
func PushBranch(ctx context.Context, dir, remote, branch string) error {
	ref := "refs/heads/" + branch
	if _, err := gitRemote(ctx, dir, "push", "--quiet", "--force", "--no-verify", remote, ref+":"+ref); err != nil {
		return fmt.Errorf("push branch %s to %s: %w", branch, remote, err)
	}
	return nil
}

// DiscardRemote deletes what the session stored in the checkpoint remote,
// its checkpoint ref and its branch, running git in dir (a repository:
// the person's, or the copy's before it is removed). Refs the remote does
// not have are not asked for, so a discard run twice succeeds.
func DiscardRemote(ctx context.Context, dir, remote string, in Info) error {
	refs := []string{CheckpointRef(in.Name)}
	if in.Branch != "" {
		refs = append(refs, "refs/heads/"+in.Branch)
	}
	out, err := git(ctx, dir, nil, append([]string{"ls-remote", "--refs", remote}, refs...)...)
	if err != nil {
		return fmt.Errorf("discard in %s: %w", remote, err)
	}
	var del []string
	for _, line := range strings.Split(out, "\n") {
		if _, ref, ok := strings.Cut(line, "\t"); ok {
			del = append(del, ":"+ref)
		}
	}
	if len(del) == 0 {
		return nil
	}
	if _, err := git(ctx, dir, nil, append([]string{"push", "--quiet", "--no-verify", remote}, del...)...); err != nil {
		return fmt.Errorf("discard in %s: %w", remote, err)
	}
	return nil
}

// ErrNoCheckpoint marks a restore that has nothing to restore from.
var ErrNoCheckpoint = errors.New("no checkpoint to restore")

// Restore makes the session's checkout again, on this machine, from its
// last checkpoint in the remote: a repository of its own at
// <stateDir>/checkouts/<name> (this machine need not have the session's
// repository at all), whose branch longrun/<name> is the checkpoint's
// parent (the branch as it was) and whose files are the checkpoint's. The
// Info returned names that directory as both Repo and Dir. It may run
// again (an activity retry): a directory left by an earlier attempt is
// made afresh.
func Restore(ctx context.Context, in Info, stateDir, remote, commit string) (Info, error) {
	if remote == "" && commit != "" {
		return Info{}, fmt.Errorf("%w: this worker has no --checkpoint-remote", ErrNoCheckpoint)
	}
	fetch := func(dir string) error {
		ref := CheckpointRef(in.Name)
		if _, err := gitRemote(ctx, dir, "fetch", "--quiet", "--no-tags", remote, "+"+ref+":"+ref); err != nil {
			return fmt.Errorf("restore checkout from %s: %w", remote, err)
		}
		got, err := git(ctx, dir, nil, "rev-parse", "--verify", ref)
		if err != nil {
			return fmt.Errorf("restore checkout: %w", err)
		}
		if got != commit && !strings.HasPrefix(got, commit) {
			// A later run of the session pushed again; the session's own
			// record is the checkpoint it knows its conversation matches.
			if _, err := gitRemote(ctx, dir, "fetch", "--quiet", "--no-tags", remote, commit); err != nil {
				return fmt.Errorf("restore checkout: the remote holds %s, not the session's checkpoint %s: %w", got, commit, err)
			}
		}
		return nil
	}
	return restore(ctx, in, stateDir, commit, fetch)
}

// restore makes the checkout of in afresh in a repository of its own
// under stateDir, fetch bringing commit (the checkpoint) into it, and
// puts the branch at the checkpoint's parent and the files at the
// checkpoint's.
func restore(ctx context.Context, in Info, stateDir, commit string, fetch func(dir string) error) (Info, error) {
	if commit == "" {
		return Info{}, ErrNoCheckpoint
	}
	dir, err := restoreDir(in, stateDir)
	if err != nil {
		return Info{}, err
	}
	out := in
	out.Dir, out.Repo = dir, dir
	if err := os.RemoveAll(out.Dir); err != nil {
		return Info{}, fmt.Errorf("restore checkout: %w", err)
	}
	if err := os.MkdirAll(out.Dir, 0o700); err != nil {
		return Info{}, fmt.Errorf("restore checkout: %w", err)
	}
	if _, err := git(ctx, out.Dir, nil, "init", "--quiet", out.Dir); err != nil {
		return Info{}, fmt.Errorf("restore checkout: %w", err)
	}
	if err := fetch(out.Dir); err != nil {
		return Info{}, err
	}
	// The branch is the checkpoint's parent; the files are the
	// checkpoint's (a mixed reset leaves them, untracked ones untracked).
	for _, args := range [][]string{
		{"checkout", "--quiet", "-B", in.Branch, commit},
		{"reset", "--quiet", "--mixed", commit + "^"},
	} {
		if _, err := git(ctx, out.Dir, nil, args...); err != nil {
			return Info{}, fmt.Errorf("restore checkout: %w", err)
		}
	}
	return out, nil
}

// restored reports whether in is a checkout Restore made: a repository of
// its own, not a worktree of the person's repository.
func restored(in Info) bool { return in.Repo == in.Dir }

// CloseTo is Close for a session whose checkpoints go to remote: the
// branch is pushed there too once committed, so the person can fetch it
// whatever became of the machine. A checkout Restore made is a repository
// of its own: it is removed only once its branch is in the remote, and
// otherwise kept, as the one place the branch is. remote "" and a
// worktree of the person's repository: Close.
func CloseTo(ctx context.Context, in Info, message, remote string) (Closed, error) {
	if remote == "" && !restored(in) {
		return Close(ctx, in, message)
	}
	if _, err := os.Stat(in.Dir); errors.Is(err, os.ErrNotExist) {
		if err := dropBaseRef(ctx, in); err != nil {
			return Closed{}, err
		}
		return closedBranch(ctx, in), nil // a restored one's repository went with it: nothing
	}
	c, err := closeCommit(ctx, in, message)
	if err != nil {
		return Closed{}, err
	}
	if remote != "" {
		if err := PushBranch(ctx, in.Dir, remote, in.Branch); err != nil {
			return c, err
		}
	}
	switch {
	case in.Copy:
		return c, nil // the copy is where its branch lives: kept until Discard
	case restored(in):
		if remote != "" {
			if err := os.RemoveAll(in.Dir); err != nil {
				return c, fmt.Errorf("remove checkout %s: %w", in.Dir, err)
			}
		}
		return c, nil
	}
	return c, finishCheckout(ctx, in)
}

// FetchBranch brings the session's branch from remote into repo (the
// person's repository), for a session whose checkout was restored on
// another machine and removed there: starter diff, apply and discard then
// read the branch where they always do.
func FetchBranch(ctx context.Context, repo, remote, branch string) error {
	ref := "refs/heads/" + branch
	// The lost machine's worktree may still hold the branch in the
	// repository's records, which would refuse the fetch.
	_, _ = git(ctx, repo, nil, "worktree", "prune")
	if _, err := gitRemote(ctx, repo, "fetch", "--quiet", "--no-tags", remote, "+"+ref+":"+ref); err != nil {
		return fmt.Errorf("fetch branch %s from %s: %w", branch, remote, err)
	}
	return nil
}

// Adopt finds the session's checkout still on this machine's disk, under
// stateDir, on its branch: a worker restarted with the same state
// directory (its task queue is new) takes it up as it is, with no remote
// and nothing lost but the calls in flight. ok is false when it is not
// there.
func Adopt(ctx context.Context, in Info, stateDir string) (Info, bool) {
	if stateDir == "" || in.Name == "" || Sanitize(in.Name) != in.Name {
		return Info{}, false
	}
	dir := filepath.Join(stateDir, Dir, in.Name)
	if _, err := os.Stat(filepath.Join(dir, ".git")); err != nil {
		return Info{}, false
	}
	if b, err := git(ctx, dir, nil, "symbolic-ref", "--quiet", "HEAD"); err != nil || b != "refs/heads/"+in.Branch {
		return Info{}, false
	}
	out := in
	if restored(in) {
		out.Repo = dir
	}
	out.Dir = dir
	return out, true
}
