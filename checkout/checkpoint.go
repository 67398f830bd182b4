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
// the checkpoints' own (checkpointIndex). When the tree and HEAD are those
// of prev, the last checkpoint, nothing is made and prev is returned.
func Checkpoint(ctx context.Context, in Info, prev string) (string, error) {
	st, err := checkpointState(ctx, in.Dir, prev)
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", in.Dir, err)
	}
	if fi, err := os.Stat(st.index + ".lock"); err == nil && time.Since(fi.ModTime()) > 5*time.Minute {
		os.Remove(st.index + ".lock") // left by a worker killed mid-checkpoint
	}
	if _, err := os.Stat(st.index); errors.Is(err, os.ErrNotExist) {
		if err := copyIndex(st.realIndex, st.index); err != nil {
			return "", fmt.Errorf("checkpoint %s: %w", in.Dir, err)
		}
	}
	env := []string{"GIT_INDEX_FILE=" + st.index}
	// The untracked cache (kept in the checkpoints' index) spares reading
	// directories that did not change when looking for new files.
	if _, err := git(ctx, in.Dir, env, "-c", "core.untrackedCache=true", "add", "--all"); err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", in.Dir, err)
	}
	tree, err := git(ctx, in.Dir, env, "write-tree")
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", in.Dir, err)
	}
	if prev != "" && tree == st.prevTree && st.head == st.prevParent {
		return prev, nil
	}
	commit, err := git(ctx, in.Dir, nil, "commit-tree", tree, "-p", st.head, "-m", "longrun checkpoint of "+in.Branch)
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", in.Dir, err)
	}
	if _, err := git(ctx, in.Dir, nil, "update-ref", CheckpointRef(in.Name), commit); err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", in.Dir, err)
	}
	return commit, nil
}

// checkpointIndex is the checkout's own index for checkpoints, in its git
// directory (out of the sandbox's reach, and not the checkout's index):
// kept between checkpoints, so each hashes only the files changed since
// the last one.
const checkpointIndex = "longrun-checkpoint-index"

// ckptState is what a checkpoint reads before it writes: HEAD, the
// previous checkpoint's tree and parent, and where the indexes are.
type ckptState struct {
	head, prevTree, prevParent string
	realIndex, index           string
}

// checkpointState reads it with one git process (a checkpoint runs after
// every batch: each process costs milliseconds).
func checkpointState(ctx context.Context, dir, prev string) (ckptState, error) {
	args := []string{"rev-parse", "--path-format=absolute", "--git-path", "index", "--git-path", checkpointIndex, "HEAD^{commit}"}
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
	l := append(strings.Split(out, "\n"), "", "")[:5]
	if l[2] == "" || (prev != "" && l[4] == "") {
		return ckptState{}, fmt.Errorf("git rev-parse: unexpected output %q", out)
	}
	return ckptState{realIndex: l[0], index: l[1], head: l[2], prevTree: l[3], prevParent: l[4]}, nil
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
	if _, err := git(ctx, dir, nil, "push", "--quiet", "--force", "--no-verify", remote, commit+":"+CheckpointRef(name)); err != nil {
		return fmt.Errorf("push checkpoint to %s: %w", remote, err)
	}
	return nil
}

// PushBranch stores the session's branch in the remote, so a person (or
// starter diff) can fetch it from there when the machine that made it is
// gone.
func PushBranch(ctx context.Context, dir, remote, branch string) error {
	ref := "refs/heads/" + branch
	if _, err := git(ctx, dir, nil, "push", "--quiet", "--force", "--no-verify", remote, ref+":"+ref); err != nil {
		return fmt.Errorf("push branch %s to %s: %w", branch, remote, err)
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
	switch {
	case commit == "":
		return Info{}, ErrNoCheckpoint
	case remote == "":
		return Info{}, fmt.Errorf("%w: this worker has no --checkpoint-remote", ErrNoCheckpoint)
	case stateDir == "":
		return Info{}, errors.New("restore checkout: the worker has no state directory")
	case in.Name == "" || Sanitize(in.Name) != in.Name:
		return Info{}, fmt.Errorf("restore checkout: %q is not a checkout name", in.Name)
	}
	out := in
	out.Dir = filepath.Join(stateDir, Dir, in.Name)
	out.Repo = out.Dir
	if err := os.RemoveAll(out.Dir); err != nil {
		return Info{}, fmt.Errorf("restore checkout: %w", err)
	}
	if err := os.MkdirAll(out.Dir, 0o700); err != nil {
		return Info{}, fmt.Errorf("restore checkout: %w", err)
	}
	ref := CheckpointRef(in.Name)
	steps := [][]string{
		{"init", "--quiet", out.Dir},
		{"fetch", "--quiet", "--no-tags", remote, "+" + ref + ":" + ref},
	}
	for _, args := range steps {
		if _, err := git(ctx, out.Dir, nil, args...); err != nil {
			return Info{}, fmt.Errorf("restore checkout from %s: %w", remote, err)
		}
	}
	got, err := git(ctx, out.Dir, nil, "rev-parse", "--verify", ref)
	if err != nil {
		return Info{}, fmt.Errorf("restore checkout: %w", err)
	}
	if got != commit && !strings.HasPrefix(got, commit) {
		// A later run of the session pushed again; the session's own
		// record is the checkpoint it knows its conversation matches.
		if _, err := git(ctx, out.Dir, nil, "fetch", "--quiet", "--no-tags", remote, commit); err != nil {
			return Info{}, fmt.Errorf("restore checkout: the remote holds %s, not the session's checkpoint %s: %w", got, commit, err)
		}
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

// Close is Finish for a session whose checkpoints go to remote: the branch
// is pushed there too once committed, so the person can fetch it whatever
// became of the machine. A checkout Restore made is a repository of its
// own: it is removed only once its branch is in the remote, and otherwise
// kept, as the one place the branch is.
func Close(ctx context.Context, in Info, message, remote string) (string, error) {
	if remote == "" && !restored(in) {
		return Finish(ctx, in, message)
	}
	if _, err := os.Stat(in.Dir); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	commit, err := Commit(ctx, in.Dir, message)
	if err != nil {
		return "", err
	}
	if remote != "" {
		if err := PushBranch(ctx, in.Dir, remote, in.Branch); err != nil {
			return commit, err
		}
	}
	if restored(in) {
		if remote != "" {
			if err := os.RemoveAll(in.Dir); err != nil {
				return commit, fmt.Errorf("remove checkout %s: %w", in.Dir, err)
			}
		}
		return commit, nil
	}
	_, err = Finish(ctx, in, message)
	return commit, err
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
	if _, err := git(ctx, repo, nil, "fetch", "--quiet", "--no-tags", remote, "+"+ref+":"+ref); err != nil {
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
