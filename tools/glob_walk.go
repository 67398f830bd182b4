package tools

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
)

// treeWalker visits the files below a directory the way the search tools
// see a project: the root's .gitignore applies, .git is skipped, and
// symlinks are not followed, so a walk never leaves the workspace and never
// loops.
type treeWalker struct {
	root   string // workspace root; .gitignore paths are relative to it
	ignore *Gitignore
}

// walk calls fn for every regular file below dir (an absolute path inside
// root) with its absolute path, its slash path relative to root and its
// directory entry. Unreadable directories are skipped: a search reports
// what it can read rather than failing.
func (w *treeWalker) walk(ctx context.Context, dir string, fn func(abs, rel string, d fs.DirEntry) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		name := e.Name()
		abs := filepath.Join(dir, name)
		t := e.Type()
		switch {
		case t.IsDir():
			if name == ".git" {
				continue
			}
			rel := relSlash(w.root, abs)
			// Ancestors were checked on the way down, so matching the
			// directory alone is what Gitignore.Ignored would conclude.
			if w.ignore.match(rel, true) {
				continue
			}
			if err := w.walk(ctx, abs, fn); err != nil {
				return err
			}
		case t.IsRegular():
			rel := relSlash(w.root, abs)
			if len(w.ignore.rules) > 0 && w.ignore.match(rel, false) {
				continue
			}
			if err := fn(abs, rel, e); err != nil {
				return err
			}
		}
	}
	return nil
}

// relSlash returns abs relative to root with forward slashes. Both are
// clean absolute paths with abs inside root, so a prefix cut suffices and
// is cheaper than filepath.Rel in a walk over many thousand files.
func relSlash(root, abs string) string {
	if abs == root {
		return "."
	}
	if len(abs) > len(root) && abs[:len(root)] == root && os.IsPathSeparator(abs[len(root)]) {
		return filepath.ToSlash(abs[len(root)+1:])
	}
	if root == string(filepath.Separator) && len(abs) > 1 && abs[0] == root[0] {
		return filepath.ToSlash(abs[1:])
	}
	r, err := filepath.Rel(root, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(r)
}
