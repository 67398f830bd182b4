package checkout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// A session's checkout is a repository of its own, not a worktree of the
// person's. A worktree shares its repository's object store: every
// checkpoint and closing commit of one session was an object every other
// session's sandbox could read (git cat-file --batch-all-objects), however
// well their refs were hidden. The session's repository borrows the
// person's objects instead (objects/info/alternates: nothing is copied,
// and the sandbox binds the person's object store read-only), and keeps
// its own objects and refs (its branch, its checkpoints) where no other
// session's sandbox reaches. The person's repository holds nothing of a
// running session but BaseRef, a ref to the person's own base commit so
// that their git gc cannot prune what the session borrows; at its close
// the branch is fetched into the person's repository, where people have
// always found it.

// BasePrefix is where the person's repository keeps a running session's
// base: refs/longrun/bases/<name>, removed at its close or discard.
const BasePrefix = "refs/longrun/bases/"

// BaseRef is the ref that keeps the base of the checkout named name in the
// person's repository while the session runs.
func BaseRef(name string) string { return BasePrefix + name }

// ownRepo reports whether the checkout at dir is a repository of its own
// (a .git directory) rather than a worktree of the person's (a .git file,
// as checkouts made before were).
func ownRepo(dir string) bool {
	fi, err := os.Lstat(filepath.Join(dir, ".git"))
	return err == nil && fi.IsDir()
}

// createOwn makes in.Dir a repository of its own on in.Branch, at the
// branch the person's repository already has for it or else at in.Base.
// It is built beside its place and renamed there, so an attempt killed
// half-way leaves nothing Create would take for a checkout.
func createOwn(ctx context.Context, in Info) error {
	objects, err := git(ctx, in.Repo, nil, "rev-parse", "--path-format=absolute", "--git-path", "objects")
	if err != nil {
		return err
	}
	format, err := git(ctx, in.Repo, nil, "rev-parse", "--show-object-format")
	if err != nil {
		return err
	}
	start := in.Base
	if head, err := git(ctx, in.Repo, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+in.Branch+"^{commit}"); err == nil && head != "" {
		start = head // a branch of that name: taken up, as git worktree add did
	}
	if _, err := git(ctx, in.Repo, nil, "update-ref", BaseRef(in.Name), in.Base); err != nil {
		return err
	}
	tmp := filepath.Join(filepath.Dir(in.Dir), "."+in.Name+".new") // Sanitize never starts a name with '.'
	if err := os.RemoveAll(tmp); err != nil {
		return err
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if _, err := git(ctx, tmp, nil, "init", "--quiet", "--object-format="+format, tmp); err != nil {
		return err
	}
	dotGit := filepath.Join(tmp, ".git")
	if err := os.WriteFile(filepath.Join(dotGit, "objects", "info", "alternates"), []byte(objects+"\n"), 0o644); err != nil {
		return err
	}
	if err := copyPersonSettings(ctx, in.Repo, tmp); err != nil {
		return err
	}
	ref := "refs/heads/" + in.Branch
	for _, args := range [][]string{
		{"update-ref", ref, start},
		{"symbolic-ref", "HEAD", ref},
		{"read-tree", "--reset", "-u", "HEAD"},
	} {
		if _, err := git(ctx, tmp, nil, args...); err != nil {
			return err
		}
	}
	if err := controlDirs(tmp, in.Sub); err != nil {
		return err
	}
	if err := os.RemoveAll(in.Dir); err != nil { // a directory without .git: nothing of a checkout
		return err
	}
	return os.Rename(tmp, in.Dir)
}

// copyPersonSettings gives the session's repository what of the person's
// decides which files a checkout has and how they read: the ignore rules
// of .git/info/exclude, the line-ending settings and whether a
// file's executable bit counts. Nothing that names a
// program is copied.
func copyPersonSettings(ctx context.Context, repo, dir string) error {
	if exclude, err := git(ctx, repo, nil, "rev-parse", "--path-format=absolute", "--git-path", "info/exclude"); err == nil {
		if b, err := os.ReadFile(exclude); err == nil {
			if err := os.WriteFile(filepath.Join(dir, ".git", "info", "exclude"), b, 0o644); err != nil {
				return err
			}
		}
	}
	for _, key := range []string{"core.autocrlf", "core.eol", "core.safecrlf", "core.fileMode"} {
		if v, err := git(ctx, repo, nil, "config", "--get", key); err == nil && v != "" {
			if _, err := git(ctx, dir, nil, "config", key, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// finishOwn ends a checkout that is a repository of its own: its branch,
// and its last checkpoint, are fetched into the person's repository (the
// session's git configuration neutralised as well as the person's: git
// upload-pack runs in it), the checkout is removed, and so is BaseRef.
// Each step may run again (an activity retry).
func finishOwn(ctx context.Context, in Info) error {
	if in.Repo == "" || in.Repo == in.Dir {
		return errors.New("finish checkout: no person's repository to bring the branch to")
	}
	refspecs := []string{"+refs/heads/" + in.Branch + ":refs/heads/" + in.Branch}
	if _, err := git(ctx, in.Dir, nil, "rev-parse", "--verify", "--quiet", CheckpointRef(in.Name)); err == nil {
		refspecs = append(refspecs, "+"+CheckpointRef(in.Name)+":"+CheckpointRef(in.Name))
	}
	args := append([]string{"fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--end-of-options", in.Dir}, refspecs...)
	if _, err := gitFrom(ctx, in.Repo, in.Dir, args...); err != nil {
		return fmt.Errorf("bring branch %s into %s: %w", in.Branch, in.Repo, err)
	}
	if err := removeOwn(in); err != nil {
		return err
	}
	return dropBaseRef(ctx, in)
}

// removeOwn removes the checkout's directory, once checked to be one of
// the worker's checkouts.
func removeOwn(in Info) error {
	if filepath.Base(filepath.Dir(in.Dir)) != Dir || in.Name == "" || filepath.Base(in.Dir) != in.Name {
		return fmt.Errorf("remove checkout %s: not a checkout directory", in.Dir)
	}
	if err := os.RemoveAll(in.Dir); err != nil {
		return fmt.Errorf("remove checkout %s: %w", in.Dir, err)
	}
	return nil
}

// dropBaseRef removes BaseRef from the person's repository: the branch
// (or nothing) now keeps what it needs.
func dropBaseRef(ctx context.Context, in Info) error {
	if in.Repo == "" || in.Repo == in.Dir || in.Name == "" {
		return nil
	}
	if _, err := os.Stat(in.Repo); err != nil {
		return nil // not on this machine: nothing of it here
	}
	if _, err := git(ctx, in.Repo, nil, "update-ref", "-d", BaseRef(in.Name)); err != nil && !strings.Contains(err.Error(), "not exist") {
		return fmt.Errorf("remove %s: %w", BaseRef(in.Name), err)
	}
	return nil
}

// controlDirs makes the .longrun the checkout lacks, empty, at its top
// and at the session's working directory: the sandbox binds a control
// directory that exists read-only over itself, and cannot protect one
// that does not (bwrap would create it on the host), so without it an
// approved command could create .longrun/ with files in it. An empty
// directory is nothing to git: no checkpoint or close records it.
func controlDirs(top, sub string) error {
	for _, d := range []string{top, filepath.Join(top, filepath.FromSlash(sub))} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			continue // the working directory is not in the base: nothing to protect there
		}
		p := filepath.Join(d, ".longrun")
		if _, err := os.Lstat(p); errors.Is(err, os.ErrNotExist) {
			if err := os.Mkdir(p, 0o755); err != nil {
				return err
			}
		}
	}
	return nil
}
