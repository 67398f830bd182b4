package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Apply writes the plan all-or-nothing. It first locates every path again
// and checks that no file changed since Plan read it (nor now leads, through
// a new symlink, somewhere else); then it writes each new content through a
// temp file and a rename beneath the directory handle it checked, and
// removes deleted files. If any step fails, every path already changed is
// put back from the originals held in memory (added files removed, deleted
// and moved ones restored, created directories removed) and the error is
// returned: a *PatchError when a file changed underneath, otherwise a
// system error that says whether the rollback succeeded.
func (pl *PatchPlan) Apply(ctx context.Context) error {
	entries := make(map[*planTarget]*entry, len(pl.targets))
	defer func() {
		for _, e := range entries {
			e.Close()
		}
	}()
	for _, t := range pl.targets {
		e, err := pl.ws.locate(pl.ws.display(t.real))
		if err != nil {
			return &PatchError{Path: t.display, Msg: err.Error()}
		}
		entries[t] = e
		now, err := readState(e)
		if err != nil && !errors.Is(err, errSwapped) {
			return err
		}
		if err != nil || e.real != t.real || now.exists != t.orig.exists || now.dir != t.orig.dir || !bytes.Equal(now.data, t.orig.data) {
			return &PatchError{Path: t.display, Msg: "changed on disk while the patch was being checked; re-read it and retry"}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var (
		done []*planTarget
		dirs []string // directories created, outermost first, relative to the project root
	)
	for _, t := range pl.targets {
		if !t.changed() {
			continue
		}
		done = append(done, t)
		if err := pl.writeTarget(t, entries[t], &dirs); err != nil {
			if rerr := pl.rollback(done, entries, dirs); rerr != nil {
				return fmt.Errorf("apply patch: %w; rollback also failed, the workspace is partly patched: %w", err, rerr)
			}
			return fmt.Errorf("apply patch: %w (every file was restored)", err)
		}
	}
	return nil
}

// writeTarget brings one path to its final state through its located
// entry.
func (pl *PatchPlan) writeTarget(t *planTarget, e *entry, dirs *[]string) error {
	if pl.writeHook != nil {
		if err := pl.writeHook(pl.ws.abs(t.real)); err != nil {
			return err
		}
	}
	if !t.final.exists {
		if err := e.remove(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("remove %s: %w", t.display, err)
		}
		return nil
	}
	if e.info == nil && strings.Contains(e.name, "/") {
		if err := e.mkdirParents(dirs, false); err != nil {
			return fmt.Errorf("create directory for %s: %w", t.display, err)
		}
	}
	return e.writeAtomic(t.final.data, t.final.mode)
}

// rollback restores every touched path to its original state, newest
// first, then removes the directories the apply created.
func (pl *PatchPlan) rollback(done []*planTarget, entries map[*planTarget]*entry, dirs []string) error {
	var errs []error
	for i := len(done) - 1; i >= 0; i-- {
		t, e := done[i], entries[done[i]]
		if t.orig.exists {
			if err := e.writeAtomic(t.orig.data, t.orig.mode); err != nil {
				errs = append(errs, fmt.Errorf("restore %s: %w", t.display, err))
			}
			continue
		}
		if err := e.remove(); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, fmt.Errorf("remove %s: %w", t.display, err))
		}
	}
	if len(dirs) > 0 {
		top, err := os.OpenRoot(pl.ws.top)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("open workspace %s: %w", pl.ws.top, err))...)
		}
		defer top.Close()
		for i := len(dirs) - 1; i >= 0; i-- {
			if err := top.Remove(dirs[i]); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove directory %s: %w", dirs[i], err))
			}
		}
	}
	return errors.Join(errs...)
}
