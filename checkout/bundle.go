package checkout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Checkpoints as bundles. A worker with no checkpoint remote but a
// transcript store every worker shares stores each checkpoint there as a
// git bundle (one blob, content-addressed by the store): the checkpoint
// ref with every commit it needs past the base. A worktree's bundle
// leaves the base out (its prerequisite): the restoring worker fetches it
// from the session's repository, which it must have. A copy's repository
// is its own, so its bundle holds the whole history: the restoring side
// has nothing.

// ErrNoBase marks a bundle restore on a worker that cannot get the
// bundle's prerequisite, the checkout's base, from the session's
// repository: it is not on this machine, or lacks that commit.
var ErrNoBase = errors.New("the checkpoint's base is not on this worker")

// BundleCheckpoint writes the checkpoint on CheckpointRef(in.Name), which
// must be commit, to file as a git bundle: since in.Base for a worktree,
// its whole history for a copy (Info.Copy).
func BundleCheckpoint(ctx context.Context, in Info, commit, file string) error {
	ref := CheckpointRef(in.Name)
	got, err := git(ctx, in.Dir, nil, "rev-parse", "--verify", ref)
	if err != nil {
		return fmt.Errorf("bundle checkpoint: %w", err)
	}
	if got != commit {
		return fmt.Errorf("bundle checkpoint: %s is %s, not the checkpoint %s", ref, got, commit)
	}
	return bundle(ctx, in, ref, file)
}

// BundleBranch writes the session's branch to file as BundleCheckpoint
// does its checkpoint. ok is false, and nothing written, when the branch
// of a worktree is still its base: the session's repository has it.
func BundleBranch(ctx context.Context, in Info, file string) (ok bool, err error) {
	ref := "refs/heads/" + in.Branch
	head, err := git(ctx, in.Dir, nil, "rev-parse", "--verify", ref)
	if err != nil {
		return false, fmt.Errorf("bundle branch: %w", err)
	}
	if !in.Copy && head == in.Base {
		return false, nil
	}
	return true, bundle(ctx, in, ref, file)
}

func bundle(ctx context.Context, in Info, ref, file string) error {
	args := []string{"bundle", "create", "--quiet", file, ref}
	if !in.Copy {
		if in.Base == "" {
			return fmt.Errorf("bundle %s: the checkout has no base", ref)
		}
		args = append(args, "^"+in.Base)
	}
	if _, err := git(ctx, in.Dir, nil, args...); err != nil {
		return fmt.Errorf("bundle %s: %w", ref, err)
	}
	return nil
}

// RestoreBundle is Restore from a bundle BundleCheckpoint wrote (file)
// instead of a remote. A worktree's bundle needs its base: it is fetched
// first from the first of origins that gives it: the session's
// repository as this machine sees it, then any clone of it the worker
// knows (its own workspace, at whatever path), ErrNoBase when none does.
// A copy's bundle needs nothing.
func RestoreBundle(ctx context.Context, in Info, stateDir string, origins []string, file, commit string) (Info, error) {
	fetch := func(dir string) error {
		if !in.Copy {
			if err := fetchBase(ctx, dir, origins, in.Base); err != nil {
				return err
			}
		}
		ref := CheckpointRef(in.Name)
		if _, err := git(ctx, dir, nil, "fetch", "--quiet", "--no-tags", file, "+"+ref+":"+ref); err != nil {
			return fmt.Errorf("restore checkout from its bundle: %w", err)
		}
		got, err := git(ctx, dir, nil, "rev-parse", "--verify", ref)
		if err != nil {
			return fmt.Errorf("restore checkout: %w", err)
		}
		if got != commit && !strings.HasPrefix(got, commit) {
			return fmt.Errorf("restore checkout: the bundle holds %s, not the session's checkpoint %s", got, commit)
		}
		return nil
	}
	return restore(ctx, in, stateDir, commit, fetch)
}

// fetchBase brings base, and the history before it, into dir from the
// first of origins that has it. A worktree's bundle leaves them out. The
// error names the first origin, the session's own repository: that is
// where a person looks.
func fetchBase(ctx context.Context, dir string, origins []string, base string) error {
	var tried []string
	var first error
	seen := map[string]bool{}
	for _, origin := range origins {
		if origin == "" || seen[origin] {
			continue
		}
		seen[origin] = true
		var err error
		if _, serr := os.Stat(origin); serr != nil {
			err = fmt.Errorf("%w: the checkpoint's bundle holds the changes since the base %s, and restoring it needs that commit from the session's repository %s, which is not on this machine (%v)", ErrNoBase, short(base), origin, serr)
		} else if _, ferr := git(ctx, dir, nil, "fetch", "--quiet", "--no-tags", origin, base); ferr != nil {
			err = fmt.Errorf("%w: the checkpoint's bundle holds the changes since the base %s, and the repository %s on this machine does not give that commit (%v)", ErrNoBase, short(base), origin, ferr)
		} else {
			return nil
		}
		if first == nil {
			first = err
		}
		tried = append(tried, origin)
	}
	if first == nil {
		return fmt.Errorf("%w: the session's repository is not known", ErrNoBase)
	}
	also := ""
	if len(tried) > 1 {
		also = fmt.Sprintf("; tried too: %s", strings.Join(tried[1:], ", "))
	}
	return fmt.Errorf("%w%s. Run the restoring worker where that repository, or a clone holding %s, is its workspace, or give the workers a --checkpoint-remote", first, also, short(base))
}

// short is a commit id cut to 12 characters.
func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// RemoveRestored removes a checkout Restore or RestoreBundle made, once
// its branch is stored elsewhere (a remote, a bundle): a worktree's, not
// a copy's (the copy is where its branch lives until Discard).
func RemoveRestored(in Info) error {
	if !restored(in) || in.Copy {
		return nil
	}
	if err := os.RemoveAll(in.Dir); err != nil {
		return fmt.Errorf("remove checkout %s: %w", in.Dir, err)
	}
	return nil
}

// restoreDir is where a restored checkout of in goes on this machine,
// checked: a name Sanitize makes, under the state directory.
func restoreDir(in Info, stateDir string) (string, error) {
	switch {
	case stateDir == "":
		return "", errors.New("restore checkout: the worker has no state directory")
	case in.Name == "" || Sanitize(in.Name) != in.Name:
		return "", fmt.Errorf("restore checkout: %q is not a checkout name", in.Name)
	}
	return filepath.Join(stateDir, Dir, in.Name), nil
}
