package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Apply writes the plan all-or-nothing. It first checks that no file
// changed since Plan read it; then it writes each new content through a
// temp file and a rename, and removes deleted files. If any step fails,
// every path already changed is put back from the originals held in memory
// (added files removed, deleted and moved ones restored, created
// directories removed) and the error is returned: a *PatchError when a file
// changed underneath, otherwise a system error that says whether the
// rollback succeeded.
func (pl *PatchPlan) Apply(ctx context.Context) error {
	for _, t := range pl.targets {
		now, err := readState(t.abs)
		if err != nil {
			return err
		}
		if now.exists != t.orig.exists || now.dir != t.orig.dir || !bytes.Equal(now.data, t.orig.data) {
			return &PatchError{Path: t.display, Msg: "changed on disk while the patch was being checked; re-read it and retry"}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var (
		done []*planTarget
		dirs []string // directories created, outermost first
	)
	for _, t := range pl.targets {
		if !t.changed() {
			continue
		}
		done = append(done, t)
		if err := pl.writeTarget(t, &dirs); err != nil {
			if rerr := rollback(done, dirs); rerr != nil {
				return fmt.Errorf("apply patch: %w; rollback also failed, the workspace is partly patched: %w", err, rerr)
			}
			return fmt.Errorf("apply patch: %w (every file was restored)", err)
		}
	}
	return nil
}

// writeTarget brings one path to its final state.
func (pl *PatchPlan) writeTarget(t *planTarget, dirs *[]string) error {
	if pl.writeHook != nil {
		if err := pl.writeHook(t.abs); err != nil {
			return err
		}
	}
	if !t.final.exists {
		if err := os.Remove(t.abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", t.display, err)
		}
		return nil
	}
	if err := mkdirParents(filepath.Dir(t.abs), dirs); err != nil {
		return fmt.Errorf("create directory for %s: %w", t.display, err)
	}
	return writeAtomic(t.abs, t.final.data, t.final.mode)
}

// mkdirParents creates dir and its missing ancestors, recording each one it
// creates so a rollback can remove them.
func mkdirParents(dir string, dirs *[]string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil {
			return err
		}
		*dirs = append(*dirs, missing[i])
	}
	return nil
}

// rollback restores every touched path to its original state, newest
// first, then removes the directories the apply created.
func rollback(done []*planTarget, dirs []string) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		t := done[i]
		if t.orig.exists {
			if err := writeAtomic(t.abs, t.orig.data, t.orig.mode); err != nil {
				errs = append(errs, fmt.Errorf("restore %s: %w", t.display, err))
			}
			continue
		}
		if err := os.Remove(t.abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", t.display, err))
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := os.Remove(dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove directory %s: %w", dirs[i], err))
		}
	}
	return errors.Join(errs...)
}
