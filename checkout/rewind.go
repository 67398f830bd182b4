package checkout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrCheckpointGone marks a checkpoint commit that is in none of the
// repositories a fork or rewind may take it from.
var ErrCheckpointGone = errors.New("the checkpoint is not in the session's repository")

// FetchCommit brings commit into the repository at dir from the first of
// sources (local repositories: the original session's checkout, the
// person's repository) that has it, unless dir has it already. A fork
// takes its turn's checkpoint this way: checkpoints before the last are
// on no ref, so it is fetched by id (protocol v2 serves any object).
func FetchCommit(ctx context.Context, dir, commit string, sources ...string) error {
	if has(ctx, dir, commit) {
		return nil
	}
	var tried []string
	for _, src := range sources {
		if src == "" {
			continue
		}
		if _, err := os.Stat(src); err != nil {
			tried = append(tried, src+" (gone)")
			continue
		}
		if !has(ctx, src, commit) {
			tried = append(tried, src)
			continue
		}
		if _, err := gitFrom(ctx, dir, src, "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--end-of-options", src, commit); err != nil {
			return fmt.Errorf("fetch checkpoint %s from %s: %w", commit, src, err)
		}
		return nil
	}
	return fmt.Errorf("%w: %s is in none of %s", ErrCheckpointGone, commit, strings.Join(tried, ", "))
}

func has(ctx context.Context, dir, commit string) bool {
	_, err := git(ctx, dir, nil, "cat-file", "-e", commit+"^{commit}")
	return err == nil
}

// ResetTo puts the files of the checkout at dir back to those of commit
// (a checkpoint; "" is the branch's head): files commit does not hold are
// removed (ignored ones stay, as checkpoints leave them out), the others
// written as commit has them. The branch and its index stay where they
// are, so what the session changed is again what it had changed at that
// checkpoint. Only git's plumbing runs, through this package's door (no
// hook, filter or program of the repository), and the removals go through
// os.Root, so no link in the checkout is followed out of it. The
// checkpoints' own index is dropped: the next checkpoint looks at every
// file.
func ResetTo(ctx context.Context, dir, commit string) error {
	target := commit
	if target == "" {
		target = "HEAD"
	}
	if !has(ctx, dir, target) {
		return fmt.Errorf("reset %s: %w: %s", dir, ErrCheckpointGone, target)
	}
	if err := removeUntracked(ctx, dir, target); err != nil {
		return fmt.Errorf("reset %s to %s: %w", dir, target, err)
	}
	for _, args := range [][]string{
		{"read-tree", "--reset", "-u", target}, // the files: commit's
		{"read-tree", "HEAD"},                  // the index: the branch's again
	} {
		if _, err := git(ctx, dir, nil, args...); err != nil {
			return fmt.Errorf("reset %s to %s: %w", dir, target, err)
		}
	}
	dirs, err := gitDirs(ctx, dir)
	if err != nil {
		return fmt.Errorf("reset %s: %w", dir, err)
	}
	index := filepath.Join(dirs.git, checkpointIndex)
	for _, f := range []string{index, indexLag(index), indexAdding(index)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("reset %s: %w", dir, err)
		}
	}
	return nil
}

// removeUntracked removes the files git does not track and does not
// ignore that target does not hold: the session made them after it.
func removeUntracked(ctx context.Context, dir, target string) error {
	tree, err := gitRaw(ctx, dir, nil, "ls-tree", "-r", "-z", "--name-only", target)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, p := range strings.Split(tree, "\x00") {
		keep[p] = true
	}
	untracked, err := gitRaw(ctx, dir, nil, "ls-files", "-o", "--exclude-standard", "-z", "--full-name")
	if err != nil {
		return err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	for _, p := range strings.Split(untracked, "\x00") {
		if p == "" || keep[p] || p == ".git" || strings.HasPrefix(p, ".git/") {
			continue
		}
		if err := root.Remove(filepath.FromSlash(p)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}
