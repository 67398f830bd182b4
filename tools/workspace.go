package tools

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Sentinel errors of workspace confinement, so callers can tell a refused
// path from an I/O failure with errors.Is.
var (
	// ErrOutsideWorkspace marks a path that lexically or through a symlink
	// leaves the workspace root.
	ErrOutsideWorkspace = errors.New("outside the workspace")
	// ErrSpecialFile marks a device, socket or named pipe: reading one can
	// hang or leak host state, so tools never touch them.
	ErrSpecialFile = errors.New("not a regular file or directory")
	// ErrControlFile marks a change to a control file (see IsControlPath)
	// that no person approved.
	ErrControlFile = errors.New("control file")
	// ErrNoDirectory marks a path DirPath was asked for that is not an
	// existing directory.
	ErrNoDirectory = errors.New("not an existing directory")
)

// maxLinkHops bounds how many symlinks one path may pass through, like the
// kernel's ELOOP limit, so a link cycle cannot spin forever.
const maxLinkHops = 40

// maxLocateTries bounds how often locate starts over because a directory
// was swapped (for a symlink, say) between looking at it and opening it.
const maxLocateTries = 64

// Workspace confines every path a tool touches to one directory tree. The
// model names paths; a Workspace is the only way they reach the file
// system, so a hostile or confused path ("../..", a symlink to /etc) is
// refused in one place instead of in every tool.
//
// Files are never opened by an absolute name after a check. Every
// operation opens the project root as an os.Root and walks down from it
// one component at a time, each directory opened beneath the one before
// (os.Root never follows a symlink out of it), and then acts on one name
// inside the last directory handle. Symlinks are followed by reading them,
// so the real path of what is touched is known (the stale-write guard
// keys on it, and a control file reached through a symlink is recognised)
// and a symlink leading out is refused with its target named. A directory
// swapped between being looked at and being opened is noticed (the opened
// handle is not the directory looked at) and the walk starts over.
type Workspace struct {
	top      string // project root: absolute, symlinks evaluated; every handle is opened beneath it
	topGiven string // the project root as given, absolute, before evaluating symlinks
	sub      string // this workspace's directory below top, slash-separated; "." for top itself
}

// NewWorkspace returns a workspace rooted at root, which must be an existing
// directory. Symlinks in root itself are evaluated once here; root is the
// project root, so the model cannot change the directories above it.
func NewWorkspace(root string) (*Workspace, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	fi, err := os.Stat(real)
	if err != nil {
		return nil, fmt.Errorf("workspace root %s: %w", root, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace root %s: not a directory", root)
	}
	return &Workspace{top: real, topGiven: abs, sub: "."}, nil
}

// Root returns the absolute, symlink-free root directory. It is a name for
// other processes (a command's working directory, the sandbox's mounts)
// and for messages; tools open files through the Workspace's methods.
func (w *Workspace) Root() string { return w.abs(w.sub) }

// abs is the absolute name of a path relative to the project root.
func (w *Workspace) abs(real string) string {
	if real == "." {
		return w.top
	}
	return filepath.Join(w.top, filepath.FromSlash(real))
}

// Sub returns the directory dir of this workspace as a workspace of its own,
// so a session's working directory confines paths at least as tightly as
// the project root does. Its files are still opened beneath the project
// root, so swapping the directory for a symlink later leads nowhere else.
func (w *Workspace) Sub(dir string) (*Workspace, error) {
	e, err := w.locate(dir)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	switch {
	case e.info == nil:
		return nil, fmt.Errorf("workspace subdirectory %s: %w", dir, fs.ErrNotExist)
	case !e.info.IsDir():
		return nil, fmt.Errorf("workspace subdirectory %q is not a directory", dir)
	}
	return &Workspace{top: w.top, topGiven: w.topGiven, sub: e.real}, nil
}

// Resolve turns a path from the model into a clean, slash-separated path
// relative to the workspace root ("." for the root), without touching the
// file system: the empty path is the root, an absolute path must lie
// inside the root (and is made relative), and ".." may not climb out.
// Symlinks are judged when the path is opened (see Workspace). Errors name
// the path and are written for the model.
func (w *Workspace) Resolve(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	root := w.Root()
	rel := filepath.Clean(p)
	if filepath.IsAbs(p) {
		r, ok := relInside(root, rel)
		if !ok {
			r, ok = relInside(filepath.Join(w.topGiven, filepath.FromSlash(w.sub)), rel)
		}
		if !ok {
			return "", fmt.Errorf("path %q is %w %s", p, ErrOutsideWorkspace, root)
		}
		rel = r
	}
	rel = filepath.ToSlash(rel)
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("path %q is %w %s", p, ErrOutsideWorkspace, root)
	}
	return rel, nil
}

// DirPath returns the absolute real path of the directory p, creating it
// (and its parents, beneath the root) when create is set. It is for a
// name that must be handed to another process, such as a command's
// working directory; never open a file by joining a name to it.
func (w *Workspace) DirPath(p string, create bool) (string, error) {
	for range maxLocateTries {
		dir, err := w.dirPathOnce(p, create)
		if !errors.Is(err, errSwapped) {
			return dir, err
		}
	}
	return "", fmt.Errorf("path %q %w %d times; try again", p, errSwapped, maxLocateTries)
}

func (w *Workspace) dirPathOnce(p string, create bool) (string, error) {
	e, err := w.locate(p)
	if err != nil {
		return "", err
	}
	defer e.Close()
	switch {
	case e.info == nil && create && e.fileInWay == "":
		if err := e.mkdirParents(nil, true); err != nil {
			return "", fmt.Errorf("create %s: %w", p, err)
		}
	case e.info == nil || !e.info.IsDir():
		return "", fmt.Errorf("%q is %w", p, ErrNoDirectory)
	}
	return w.abs(e.real), nil
}

// relInside returns p relative to root when p (clean, absolute) is root or
// lies below it.
func relInside(root, p string) (string, bool) {
	if !within(root, p) {
		return "", false
	}
	r, err := filepath.Rel(root, p)
	return r, err == nil
}

// within reports whether p is root or lies below it, comparing clean
// absolute paths lexically.
func within(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	if err != nil || filepath.IsAbs(rel) {
		return false
	}
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// withinSlash is within for clean slash paths relative to the project
// root, where "." is the root.
func withinSlash(dir, p string) bool {
	return dir == "." || p == dir || strings.HasPrefix(p, dir+"/")
}

// specialKind names a file mode tools refuse, or returns "" for regular
// files, directories and symlinks.
func specialKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeIrregular != 0:
		return "irregular file"
	}
	return ""
}

// display turns a real path relative to the project root into one relative
// to this workspace, as the model names paths.
func (w *Workspace) display(real string) string {
	switch {
	case w.sub == ".":
		return real
	case real == w.sub:
		return "."
	}
	return strings.TrimPrefix(real, w.sub+"/")
}

// lockKey is the key LockFile takes for a located path.
func (w *Workspace) lockKey(e *entry) string { return w.abs(e.real) }

// Open opens the file or directory p for reading, beneath the root, for
// code outside the tools (the activities reading AGENTS.md, say). A path
// that does not exist is an *fs.PathError wrapping fs.ErrNotExist whose
// Path is where p leads (relative to the workspace root): p itself, or the
// missing target of a symlink. Other errors name p and are written for the
// person or the model.
func (w *Workspace) Open(p string) (*os.File, error) {
	for range maxLocateTries {
		f, err := w.openOnce(p)
		if !errors.Is(err, errSwapped) {
			return f, err
		}
	}
	return nil, fmt.Errorf("path %q %w %d times; try again", p, errSwapped, maxLocateTries)
}

func (w *Workspace) openOnce(p string) (*os.File, error) {
	e, err := w.locate(p)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	if e.info == nil {
		return nil, &fs.PathError{Op: "open", Path: w.display(e.real), Err: fs.ErrNotExist}
	}
	return e.open()
}

// ReadFile reads the file p whole, as Open finds it.
func (w *Workspace) ReadFile(p string) ([]byte, error) {
	f, err := w.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
