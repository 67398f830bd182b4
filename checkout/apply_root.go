package checkout

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"time"
)

// ErrLink marks a change apply refuses because a directory on its path
// in the person's checkout is a symbolic link: apply never writes through
// a link, to wherever it points.
var ErrLink = errors.New("apply never writes through a symbolic link")

// applyRoot is the person's checkout as apply writes to it: every path
// is opened beneath the directory with os.Root, which never follows a
// link out of it, and no directory on a path's way may be a link at all.
type applyRoot struct {
	root *os.Root
	dir  string
}

func openApplyRoot(dir string) (*applyRoot, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open the checkout %s: %w", dir, err)
	}
	return &applyRoot{root: r, dir: dir}, nil
}

func (a *applyRoot) Close() error { return a.root.Close() }

// checkWay refuses a slash-separated path whose parent directories in the
// checkout include a symbolic link (or something other than a directory);
// missing ones are fine, apply creates them. The last element may be a
// link: apply replaces or removes the link itself, never what it points to.
func (a *applyRoot) checkWay(p string) error {
	if p == "" || path.IsAbs(p) || p != path.Clean(p) || p == ".." || strings.HasPrefix(p, "../") {
		return fmt.Errorf("%s: not a path inside the checkout %s", p, a.dir)
	}
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		way := strings.Join(parts[:i], "/")
		info, err := a.root.Lstat(way)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return fmt.Errorf("%s: %w", p, err)
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := a.root.Readlink(way)
			return fmt.Errorf("%w: %s in %s is a symbolic link (to %s), and the change to %s lies beyond it; nothing was changed. "+
				"Replace the link with a directory, or apply the change yourself", ErrLink, way, a.dir, target, p)
		case !info.IsDir():
			return fmt.Errorf("%s: %s in %s is not a directory", p, way, a.dir)
		}
	}
	return nil
}

// writeFile replaces p with the bytes of r and permissions perm: written
// to a new file beside it, then renamed over it, so a link at p is
// replaced, not followed, and a reader never sees half a file.
func (a *applyRoot) writeFile(p string, r io.Reader, perm fs.FileMode) error {
	if err := a.mkdirs(p); err != nil {
		return err
	}
	tmp := a.tmpName(p)
	f, err := a.root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	_, err = io.Copy(f, r)
	if err == nil {
		err = f.Chmod(perm) // the umask narrowed OpenFile's
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = a.replace(tmp, p)
	}
	if err != nil {
		_ = a.root.Remove(tmp)
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// writeLink makes p a symbolic link to target, replacing what is there.
func (a *applyRoot) writeLink(p, target string) error {
	if err := a.mkdirs(p); err != nil {
		return err
	}
	tmp := a.tmpName(p)
	if err := a.root.Symlink(target, tmp); err != nil {
		return fmt.Errorf("link %s: %w", p, err)
	}
	if err := a.replace(tmp, p); err != nil {
		_ = a.root.Remove(tmp)
		return fmt.Errorf("link %s: %w", p, err)
	}
	return nil
}

// replace renames tmp over p; an empty directory at p (left by a change
// that turned a directory into a file) is removed first.
func (a *applyRoot) replace(tmp, p string) error {
	if info, err := a.root.Lstat(p); err == nil && info.IsDir() {
		if err := a.root.Remove(p); err != nil {
			return err
		}
	}
	return a.root.Rename(tmp, p)
}

// remove removes p (a link itself, never its target) if it is there, and
// then the directories the removal left empty, as git does.
func (a *applyRoot) remove(p string) error {
	if err := a.root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", p, err)
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if a.root.Remove(d) != nil {
			break // not empty, or not there
		}
	}
	return nil
}

func (a *applyRoot) mkdirs(p string) error {
	if d := path.Dir(p); d != "." {
		if err := a.root.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("create the directory of %s: %w", p, err)
		}
	}
	return nil
}

func (a *applyRoot) tmpName(p string) string {
	return path.Join(path.Dir(p), ".longrun-apply-"+strconv.FormatInt(time.Now().UnixNano(), 36))
}
