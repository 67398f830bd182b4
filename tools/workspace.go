package tools

import (
	"errors"
	"fmt"
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
)

// maxLinkHops bounds how many dangling symlinks Resolve follows by hand, like
// the kernel's ELOOP limit, so a link cycle cannot spin forever.
const maxLinkHops = 40

// Workspace confines every path a tool touches to one directory tree. The
// model names paths; a Workspace is the only way they become file-system
// paths, so a hostile or confused path ("../..", a symlink to /etc) is
// refused in one place instead of in every tool.
type Workspace struct {
	root  string // absolute, symlinks evaluated
	given string // absolute as given, before evaluating symlinks
}

// NewWorkspace returns a workspace rooted at root, which must be an existing
// directory. Symlinks in root itself are evaluated once here so that the
// containment check compares real paths.
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
	return &Workspace{root: real, given: abs}, nil
}

// Root returns the absolute, symlink-free root directory.
func (w *Workspace) Root() string { return w.root }

// Sub returns the directory dir of this workspace as a workspace of its own,
// so a session's working directory confines paths at least as tightly as
// the project root does.
func (w *Workspace) Sub(dir string) (*Workspace, error) {
	p, err := w.Resolve(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("workspace subdirectory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("workspace subdirectory %q is not a directory", dir)
	}
	return NewWorkspace(p)
}

// Resolve turns a path from the model into an absolute path inside the
// workspace. Relative paths resolve under the root and the empty path is the
// root; absolute paths must already lie inside it. Symlinks are evaluated at
// every depth, including the final component and, for a path that does not
// exist yet, its deepest existing ancestor: a path whose real location is
// outside the root is refused, and so are devices, sockets and named pipes.
// The result has its symlinks evaluated, so the caller opens the path that
// was checked. Errors name the path and are written for the model.
func (w *Workspace) Resolve(p string) (string, error) {
	if strings.ContainsRune(p, 0) {
		return "", fmt.Errorf("path %q contains a NUL byte", p)
	}
	var joined string
	switch {
	case p == "":
		joined = w.root
	case filepath.IsAbs(p):
		joined = filepath.Clean(p)
		if w.given != w.root && within(w.given, joined) && !within(w.root, joined) {
			rel, _ := filepath.Rel(w.given, joined)
			joined = filepath.Join(w.root, rel)
		}
	default:
		joined = filepath.Join(w.root, p)
	}
	if !within(w.root, joined) {
		return "", fmt.Errorf("path %q is %w %s", p, ErrOutsideWorkspace, w.root)
	}
	real, err := realPath(joined, 0)
	if err != nil {
		return "", fmt.Errorf("resolve path %q: %w", p, err)
	}
	if !within(w.root, real) {
		return "", fmt.Errorf("path %q resolves through a symlink to %s, %w %s", p, real, ErrOutsideWorkspace, w.root)
	}
	fi, err := os.Stat(real)
	if err == nil {
		if kind := specialKind(fi.Mode()); kind != "" {
			return "", fmt.Errorf("path %q is a %s, %w", p, kind, ErrSpecialFile)
		}
	}
	return real, nil
}

// realPath evaluates the symlinks of an absolute, clean path whose tail may
// not exist yet: the deepest existing ancestor is evaluated and the missing
// components (which cannot be symlinks) are appended. A dangling symlink is
// followed by hand so its target is checked too.
func realPath(p string, hops int) (string, error) {
	existing := p
	var rest []string
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = append(rest, filepath.Base(existing))
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		fi, lerr := os.Lstat(existing)
		if lerr != nil || fi.Mode()&fs.ModeSymlink == 0 {
			return "", err
		}
		if hops >= maxLinkHops {
			return "", fmt.Errorf("too many levels of symlinks at %s", existing)
		}
		target, rerr := os.Readlink(existing)
		if rerr != nil {
			return "", fmt.Errorf("read symlink %s: %w", existing, rerr)
		}
		if !filepath.IsAbs(target) {
			dir, derr := filepath.EvalSymlinks(filepath.Dir(existing))
			if derr != nil {
				return "", fmt.Errorf("resolve %s: %w", filepath.Dir(existing), derr)
			}
			target = filepath.Join(dir, target)
		}
		real, err = realPath(filepath.Clean(target), hops+1)
		if err != nil {
			return "", err
		}
	}
	for i := len(rest) - 1; i >= 0; i-- {
		real = filepath.Join(real, rest[i])
	}
	return real, nil
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

// specialKind names a file mode tools refuse, or returns "" for regular
// files and directories.
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

// rel returns abs relative to the root with forward slashes, for output the
// model reads; the root itself is ".".
func (w *Workspace) rel(abs string) string {
	r, err := filepath.Rel(w.root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(r)
}
