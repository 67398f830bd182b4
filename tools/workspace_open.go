package tools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/longrun/longrun/permission"
)

// errSwapped reports that a directory or file changed identity between
// being looked at and being opened; the walk starts over.
var errSwapped = errors.New("changed while it was being opened")

// entry is one path located beneath the workspace: an open handle on the
// real directory holding it and its name there. Operations on an entry act
// on that one name inside that handle, so nothing is reached by an
// absolute name and no symlink leads out.
type entry struct {
	top *os.Root // the project root
	dir *os.Root // the directory holding the entry; top itself or beneath it
	// name is the entry's name in dir, "." for the project root. When
	// parents are missing it is the missing part, "new/dir/file.go".
	name string
	// real is the path relative to the project root with every symlink
	// followed, slash-separated.
	real string
	// info describes the entry (not following a symlink: there is none
	// left) as it was located; nil when it does not exist.
	info fs.FileInfo
	// fileInWay names a file found where a directory of the path should
	// be; the entry then does not exist and cannot be created.
	fileInWay string
}

// Close releases the entry's handles.
func (e *entry) Close() {
	if e.dir != e.top {
		_ = e.dir.Close()
	}
	_ = e.top.Close()
}

// locate finds p (a path from the model, relative to the workspace root)
// beneath the project root, following symlinks that stay inside the
// workspace and refusing those that lead out. Errors are written for the
// model.
func (w *Workspace) locate(p string) (*entry, error) {
	rel, err := w.Resolve(p)
	if err != nil {
		return nil, err
	}
	top, err := os.OpenRoot(w.top)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", w.top, err)
	}
	want := path.Join(w.sub, rel)
	hops := 0
	for try := 0; ; try++ {
		e, next, err := w.walk(top, p, want, &hops)
		switch {
		case err == nil && next == "":
			return e, nil
		case err == nil:
			want = next // a symlink: start over from the root with its target
			try--
		case errors.Is(err, errSwapped) && try < maxLocateTries:
		default:
			_ = top.Close()
			if errors.Is(err, errSwapped) {
				return nil, fmt.Errorf("path %q %w %d times; try again", p, err, maxLocateTries)
			}
			return nil, err
		}
	}
}

// walk follows want (clean, slash-separated, relative to the project root)
// from the root one component at a time. It returns the entry, or the path
// to walk next when it met a symlink. display is the path as the model
// named it, for errors.
func (w *Workspace) walk(top *os.Root, display, want string, hops *int) (*entry, string, error) {
	if !withinSlash(w.sub, want) {
		return nil, "", fmt.Errorf("path %q resolves through a symlink to %s, %w %s", display, w.abs(want), ErrOutsideWorkspace, w.Root())
	}
	if want == "." {
		fi, err := top.Lstat(".")
		if err != nil {
			return nil, "", fmt.Errorf("stat workspace %s: %w", w.top, err)
		}
		return &entry{top: top, dir: top, name: ".", real: ".", info: fi}, "", nil
	}
	parts := strings.Split(want, "/")
	dir, dirReal := top, "."
	closeDir := func() {
		if dir != top {
			_ = dir.Close()
		}
	}
	for i, name := range parts {
		fi, err := dir.Lstat(name)
		if errors.Is(err, fs.ErrNotExist) {
			return &entry{top: top, dir: dir, name: strings.Join(parts[i:], "/"), real: want}, "", nil
		}
		if err != nil {
			closeDir()
			return nil, "", fmt.Errorf("resolve path %q: %w", display, err)
		}
		last := i == len(parts)-1
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			*hops++
			if *hops > maxLinkHops {
				closeDir()
				return nil, "", fmt.Errorf("resolve path %q: too many levels of symlinks at %s", display, w.abs(path.Join(dirReal, name)))
			}
			target, err := dir.Readlink(name)
			closeDir()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.EINVAL) {
					return nil, "", errSwapped // no longer a symlink
				}
				return nil, "", fmt.Errorf("read symlink %s: %w", path.Join(dirReal, name), err)
			}
			next, ok := w.linkTarget(dirReal, target)
			if !ok {
				return nil, "", fmt.Errorf("path %q resolves through a symlink to %s, %w %s", display, linkShown(w.abs(dirReal), target), ErrOutsideWorkspace, w.Root())
			}
			return nil, path.Join(append([]string{next}, parts[i+1:]...)...), nil
		case last:
			if kind := specialKind(fi.Mode()); kind != "" {
				closeDir()
				return nil, "", fmt.Errorf("path %q is a %s, %w", display, kind, ErrSpecialFile)
			}
			return &entry{top: top, dir: dir, name: name, real: want, info: fi}, "", nil
		case !fi.IsDir():
			return &entry{top: top, dir: dir, name: strings.Join(parts[i:], "/"), real: want, fileInWay: path.Join(dirReal, name)}, "", nil
		}
		sub, err := openDirAt(dir, name, fi)
		closeDir()
		if err != nil {
			return nil, "", err
		}
		dir, dirReal = sub, path.Join(dirReal, name)
	}
	panic("unreachable: the last component returns")
}

// openDirAt opens the directory name in dir, which Lstat described as fi,
// and checks that what was opened is that directory: a symlink or another
// directory swapped in between is errSwapped. The open itself cannot leave
// dir, whatever was swapped in.
func openDirAt(dir *os.Root, name string, fi fs.FileInfo) (*os.Root, error) {
	sub, err := dir.OpenRoot(name)
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, err
		}
		// Anything else (a symlink leading out or looping, a name gone)
		// is what a swap produces; checking again could meet the
		// directory swapped back, so start over instead.
		return nil, errSwapped
	}
	st, err := sub.Lstat(".")
	if err != nil || !os.SameFile(fi, st) {
		_ = sub.Close()
		return nil, errSwapped
	}
	return sub, nil
}

// linkTarget turns a symlink's target, read in the directory dirReal, into
// a clean path relative to the project root; ok is false when it leads out.
// An absolute target inside the root is followed too.
func (w *Workspace) linkTarget(dirReal, target string) (string, bool) {
	if filepath.IsAbs(target) {
		t := filepath.Clean(target)
		r, ok := relInside(w.top, t)
		if !ok {
			r, ok = relInside(w.topGiven, t)
		}
		return filepath.ToSlash(r), ok
	}
	next := path.Join(dirReal, filepath.ToSlash(target))
	if next == ".." || strings.HasPrefix(next, "../") {
		return "", false
	}
	return next, true
}

// linkShown is where a symlink in dir leads, for a message.
func linkShown(dir, target string) string {
	if filepath.IsAbs(target) {
		return filepath.Clean(target)
	}
	return filepath.Join(dir, target)
}

// open opens the located file for reading and checks it is the file that
// was located (a swap in between is errSwapped); the open cannot leave the
// entry's directory.
func (e *entry) open() (*os.File, error) {
	f, err := e.dir.Open(e.name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil || !os.SameFile(fi, e.info) {
		_ = f.Close()
		if err != nil {
			return nil, err
		}
		return nil, errSwapped
	}
	return f, nil
}

// readAll reads the located file whole.
func (e *entry) readAll() ([]byte, error) {
	f, err := e.open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// openDir opens the located directory.
func (e *entry) openDir() (*os.Root, error) {
	if e.name == "." {
		return e.dir.OpenRoot(".")
	}
	return openDirAt(e.dir, e.name, e.info)
}

// mkdirParents creates the missing directories of a path that does not
// exist yet, one at a time beneath the handle of the deepest existing one,
// and moves the entry into the last. With all set the whole missing path
// is made a directory (for DirPath). Each directory it creates is added to
// created (relative to the project root), so a rollback can remove it.
// A directory that appears meanwhile is used; anything else that appears
// is errSwapped, and the caller locates again.
func (e *entry) mkdirParents(created *[]string, all bool) error {
	parts := strings.Split(e.name, "/")
	if !all {
		parts = parts[:len(parts)-1]
	}
	base := strings.TrimSuffix(e.real, "/"+e.name)
	if e.real == e.name {
		base = "."
	}
	for _, name := range parts {
		err := e.dir.Mkdir(name, 0o755)
		switch {
		case err == nil:
			if created != nil {
				*created = append(*created, path.Join(base, name))
			}
		case !errors.Is(err, fs.ErrExist):
			return err
		}
		// Made just now, or meanwhile by someone else (another file of
		// the same patch): either way it must be a directory, not a
		// symlink, and it is opened beneath the one before.
		base = path.Join(base, name)
		fi, err := e.dir.Lstat(name)
		if err != nil || !fi.IsDir() {
			return errSwapped
		}
		sub, err := openDirAt(e.dir, name, fi)
		if err != nil {
			return err
		}
		if e.dir != e.top {
			_ = e.dir.Close()
		}
		e.dir = sub
	}
	e.name = path.Base(e.real)
	if all {
		e.name = "."
	}
	return nil
}

// writeAtomic writes data to a new temporary file in the entry's directory
// and renames it over the entry's name, so a crash or a concurrent reader
// never sees a half-written file. Both happen beneath the directory
// handle; neither follows a symlink.
func (e *entry) writeAtomic(data []byte, mode fs.FileMode) error {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmpName := "." + e.name + ".tmp-" + hex.EncodeToString(rnd[:])
	tmp, err := e.dir.OpenFile(tmpName, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create temp file for %s: %w", e.real, err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = tmp.Close()
			_ = e.dir.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write file %s: %w", e.real, err)
	}
	if err := tmp.Chmod(mode); err != nil {
		return fmt.Errorf("chmod %s: %w", e.real, err)
	}
	if err := tmp.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", e.real, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("close %s: %w", e.real, err)
	}
	if err := e.dir.Rename(tmpName, e.name); err != nil {
		return fmt.Errorf("rename %s to %s: %w", tmpName, e.real, err)
	}
	ok = true
	return nil
}

// remove deletes the located file (a symlink swapped in is removed itself,
// never followed).
func (e *entry) remove() error { return e.dir.Remove(e.name) }

// IsControlPath reports whether rel, a slash-separated path relative to
// the project root (or any directory in it), names a control file: anything
// under a .longrun or .git directory (or a .git file, as a worktree has),
// or an AGENTS.md at any depth, names compared without case. It is
// permission.IsControlPath, so the engine that asks and the tools that
// refuse share one definition; the tools call it on the path with every
// symlink followed.
func IsControlPath(rel string) bool { return permission.IsControlPath(rel) }

// locateChange locates the file a write or edit changes, refusing a
// control file no person approved (controlRefusal). The caller closes the
// entry.
func (w *Workspace) locateChange(env Env, named string) (*entry, error) {
	e, err := w.locate(named)
	if err != nil {
		return nil, err
	}
	if err := w.controlRefusal(env, named, e); err != nil {
		e.Close()
		return nil, err
	}
	return e, nil
}

// locateDir locates the directory a listing walks; onFile is what to say
// when named is a file. The caller closes the entry.
func (w *Workspace) locateDir(named, onFile string) (*entry, error) {
	e, err := w.locate(named)
	if err != nil {
		return nil, err
	}
	switch {
	case e.info == nil:
		e.Close()
		return nil, fmt.Errorf("directory not found: %s", named)
	case !e.info.IsDir():
		e.Close()
		return nil, fmt.Errorf("%s is a file, not a directory; %s", named, onFile)
	}
	return e, nil
}

// controlRefusal is the message for a change to a control file that no
// person approved, or "" when the change may go ahead. named is the path
// as the model gave it, real the located one.
func (w *Workspace) controlRefusal(env Env, named string, e *entry) error {
	if env.ApprovedByPerson || !IsControlPath(e.real) {
		return nil
	}
	shown := w.display(e.real)
	msg := fmt.Sprintf("%s is a %v: .longrun/, .git/ and AGENTS.md decide what later sessions may do, so a person must approve every change to them, and nobody approved this call. Nothing was written.", shown, ErrControlFile)
	if clean, err := w.Resolve(named); err != nil || clean != shown {
		msg = fmt.Sprintf("%s leads (through a symlink) to %s, a %v: .longrun/, .git/ and AGENTS.md decide what later sessions may do, so a person must approve every change to them. Name %s directly so the session asks a person. Nothing was written.", named, shown, ErrControlFile, shown)
	}
	return &controlFileError{msg}
}

// controlFileError is a refused change to a control file; it is
// ErrControlFile for errors.Is, with the whole message for the model.
type controlFileError struct{ msg string }

func (e *controlFileError) Error() string        { return e.msg }
func (e *controlFileError) Is(target error) bool { return target == ErrControlFile }

// retrySwapped runs one attempt of a tool again while what it opened was
// swapped underneath it (errSwapped), and tells the model after too many.
func retrySwapped(display string, attempt func() (Result, error)) (Result, error) {
	for range maxLocateTries {
		res, err := attempt()
		if !errors.Is(err, errSwapped) {
			return res, err
		}
	}
	return Errorf("path %q %v %d times; try again", display, errSwapped, maxLocateTries), nil
}

// readDirSorted lists the directory name in dir, sorted by name as
// os.ReadDir does.
func readDirSorted(dir *os.Root, name string) ([]fs.DirEntry, error) {
	f, err := dir.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// gitignore reads the .gitignore at the workspace root. One that is
// missing, unreadable or a symlink out of the workspace is an empty
// matcher: it only trims listings, which must not fail over it.
func (w *Workspace) gitignore(top *os.Root) *Gitignore {
	data, err := top.ReadFile(path.Join(w.sub, ".gitignore"))
	if err != nil {
		return &Gitignore{}
	}
	return ParseGitignore(string(data))
}
