package checkout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
// its branch or its working tree: the tree is written through a temporary
// index (a copy of the real one, so only changed files are hashed). When
// the tree and HEAD are those of prev, the last checkpoint, nothing is
// made and prev is returned.
func Checkpoint(ctx context.Context, in Info, prev string) (string, error) {
	tree, head, err := snapshotTree(ctx, in.Dir)
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", in.Dir, err)
	}
	if prev != "" {
		if got, err := git(ctx, in.Dir, nil, "rev-parse", prev+"^{tree}", prev+"^"); err == nil && got == tree+"\n"+head {
			return prev, nil
		}
	}
	commit, err := git(ctx, in.Dir, nil, "commit-tree", tree, "-p", head, "-m", "longrun checkpoint of "+in.Branch)
	if err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", in.Dir, err)
	}
	if _, err := git(ctx, in.Dir, nil, "update-ref", CheckpointRef(in.Name), commit); err != nil {
		return "", fmt.Errorf("checkpoint %s: %w", in.Dir, err)
	}
	return commit, nil
}

// snapshotTree writes the tree of dir's working tree as git add --all sees
// it, through a copy of its index, and returns it with HEAD.
func snapshotTree(ctx context.Context, dir string) (tree, head string, err error) {
	head, err = git(ctx, dir, nil, "rev-parse", "--verify", "HEAD^{commit}")
	if err != nil {
		return "", "", err
	}
	real, err := git(ctx, dir, nil, "rev-parse", "--path-format=absolute", "--git-path", "index")
	if err != nil {
		return "", "", err
	}
	idx, err := os.CreateTemp("", "longrun-checkpoint-index-")
	if err != nil {
		return "", "", err
	}
	defer os.Remove(idx.Name())
	b, err := os.ReadFile(real)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		idx.Close()
		return "", "", err
	}
	_, werr := idx.Write(b)
	if cerr := idx.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", "", werr
	}
	if len(b) == 0 {
		os.Remove(idx.Name()) // an empty file is not an index; git makes one
	}
	env := []string{"GIT_INDEX_FILE=" + idx.Name()}
	if _, err := git(ctx, dir, env, "add", "--all"); err != nil {
		return "", "", err
	}
	tree, err = git(ctx, dir, env, "write-tree")
	return tree, head, err
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
