package tools

import (
	"context"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// treeWalker visits the files below a directory the way the search tools
// see a project: the workspace root's .gitignore applies, .git is skipped,
// and symlinks are not followed, so a walk never leaves the workspace and
// never loops. Every directory is opened beneath the one above it (see
// openDirAt): one swapped for a symlink mid-walk is skipped, not entered.
type treeWalker struct {
	ignore *Gitignore
}

// walkDir is a directory being walked: its handle beneath the root, the
// directory itself (for its entries and, on Linux, for opening its files
// by descriptor), and how many holders still need them. The walk holds
// one reference while it lists the directory; fn is handed one per file
// and must call release when done with the file.
type walkDir struct {
	root *os.Root
	file *os.File
	refs atomic.Int32

	connOnce sync.Once
	conn     syscall.RawConn
	connErr  error
}

// rawConn is the directory's descriptor for opening its files, made once.
func (d *walkDir) rawConn() (syscall.RawConn, error) {
	d.connOnce.Do(func() { d.conn, d.connErr = d.file.SyscallConn() })
	return d.conn, d.connErr
}

// release drops one reference and closes the directory with the last.
func (d *walkDir) release() {
	if d.refs.Add(-1) == 0 {
		_ = d.file.Close()
		_ = d.root.Close()
	}
}

// walk calls fn for every regular file below dir, whose slash path relative
// to the workspace root is rel, with the directory holding the file, its
// name there and its path relative to the workspace root. The
// walk takes dir over and closes it. Unreadable directories are skipped: a
// search reports what it can read rather than failing.
func (w *treeWalker) walk(ctx context.Context, dir *os.Root, rel string, fn func(d *walkDir, name, rel string) error) error {
	f, err := listingFile(dir)
	if err != nil {
		_ = dir.Close()
		return nil
	}
	d := &walkDir{root: dir, file: f}
	d.refs.Store(1)
	defer d.release()
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	for _, e := range entries {
		name := e.Name()
		t := e.Type()
		switch {
		case t.IsDir():
			if name == ".git" {
				continue
			}
			sub := path.Join(rel, name)
			// Ancestors were checked on the way down, so matching the
			// directory alone is what Gitignore.Ignored would conclude.
			if w.ignore.match(sub, true) {
				continue
			}
			fi, err := dir.Lstat(name) // never e.Info (see listingFile)
			if err != nil || !fi.IsDir() {
				continue
			}
			subDir, err := openDirAt(dir, name, fi)
			if err != nil {
				continue
			}
			if err := w.walk(ctx, subDir, sub, fn); err != nil {
				return err
			}
		case t.IsRegular():
			file := path.Join(rel, name)
			if len(w.ignore.rules) > 0 && w.ignore.match(file, false) {
				continue
			}
			d.refs.Add(1)
			if err := fn(d, name, file); err != nil {
				return err
			}
		}
	}
	return nil
}

// relBelow returns rel (a slash path relative to the workspace root) below
// base (another, a directory holding it); "." when they are the same.
func relBelow(base, rel string) string {
	switch {
	case base == ".":
		return rel
	case rel == base:
		return "."
	}
	return rel[len(base)+1:]
}
