package checkout

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// CopyLimit bounds the directory a session outside git gets a copy of.
type CopyLimit struct {
	Bytes int64
	Files int
}

// DefaultCopyLimit is a directory a copy is cheap for: a project, not a
// home directory. A larger one should be a git repository (a worktree
// costs no copy) or run --in-place.
var DefaultCopyLimit = CopyLimit{Bytes: 1 << 30, Files: 100_000}

// ErrTooLarge marks a directory past the copy limit.
var ErrTooLarge = errors.New("too large to copy")

// CreateCopy gives a session whose working directory is not in a git
// repository a copy of it under <stateDir>/checkouts/<name>, made a git
// repository of its own there: one commit of the directory as it was (the
// base; files its .gitignore names are copied but not committed) on the
// branch longrun/<session>. Everything else then works as for a worktree:
// the session's changes are what the copy holds against that commit
// (Diff, Stats, Close), and ApplyCopy brings them back. Everything is
// copied, hidden files and ignored ones included (a build may need them),
// symlinks as symlinks, except the directory's own .git (a broken one:
// git found no repository), every nested .git (a repository inside it, a
// vendored library's or a tarball's: its configuration names programs
// the worker's git on the host would run once it recorded that directory
// as a gitlink; Info.Dropped lists them, their directories' files are
// copied as plain files) and what is not a file, directory or symlink.
// A retry finds a finished copy; a half-made one is made again.
func CreateCopy(ctx context.Context, workDir, stateDir, session string, limit CopyLimit) (Info, error) {
	if stateDir == "" {
		return Info{}, errors.New("create copy: the worker has no state directory")
	}
	src, err := filepath.Abs(workDir)
	if err != nil {
		return Info{}, fmt.Errorf("create copy: %w", err)
	}
	name := Sanitize(session)
	in := Info{Repo: src, Name: name, Branch: BranchPrefix + name, BaseRef: "copy", Dir: filepath.Join(stateDir, Dir, name), Copy: true}
	if base, err := git(ctx, in.Dir, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+in.Branch+"~0"); err == nil && isOwnRepo(in.Dir) {
		first, err := git(ctx, in.Dir, nil, "rev-list", "--max-parents=0", base)
		if err == nil {
			in.Base = strings.Fields(first)[0]
			in.Dropped = nestedGit(src)
			return in, nil // made by an earlier attempt
		}
	}
	files, bytes, err := MeasureCopy(src, limit)
	if err != nil {
		return Info{}, err
	}
	if err := os.RemoveAll(in.Dir); err != nil {
		return Info{}, fmt.Errorf("create copy: %w", err)
	}
	if err := os.MkdirAll(in.Dir, 0o700); err != nil {
		return Info{}, fmt.Errorf("create copy: %w", err)
	}
	var gitLike bool
	if in.Dropped, gitLike, err = copyTree(ctx, src, in.Dir); err != nil {
		return Info{}, fmt.Errorf("copy %s (%d files, %s): %w", src, files, Size(bytes), err)
	}
	if _, err := git(ctx, in.Dir, nil, "init", "--quiet", "--initial-branch="+in.Branch); err != nil {
		return Info{}, fmt.Errorf("create copy: %w", err)
	}
	// A plain git add, not addAll: copyTree left out every .git under
	// the copy, so it holds no repository git could record as a gitlink
	// or go into, and the index is new, with no gitlink in it. Unless it
	// copied a .GIT, which a file system that folds case takes for one.
	if gitLike {
		_, err = addAll(ctx, in.Dir, nil)
	} else {
		_, err = git(ctx, in.Dir, nil, "add", "--all")
	}
	if err != nil {
		return Info{}, fmt.Errorf("create copy: %w", err)
	}
	if _, err := git(ctx, in.Dir, nil, append(noMaintenance, "commit", "--quiet", "--no-verify", "--allow-empty", "-m", "longrun: copy of "+src)...); err != nil {
		return Info{}, fmt.Errorf("create copy: %w", err)
	}
	if in.Base, err = git(ctx, in.Dir, nil, "rev-parse", "HEAD"); err != nil {
		return Info{}, fmt.Errorf("create copy: %w", err)
	}
	if !gitLike {
		rememberGitlinks(in.Base, nil) // none, for the same reason
	}
	return in, nil
}

// nestedGit are the nested .git entries under src, as copyTree leaves
// them out (for a retry that finds the copy made: the report is the
// same); what cannot be walked is left unsaid.
func nestedGit(src string) []string {
	var out []string
	_ = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == src || d.Name() != ".git" {
			return nil
		}
		if filepath.Dir(p) != src {
			if rel, err := filepath.Rel(src, p); err == nil {
				out = append(out, filepath.ToSlash(rel))
			}
		}
		if d.IsDir() {
			return fs.SkipDir
		}
		return nil
	})
	return out
}

// isOwnRepo reports whether dir holds a repository of its own (a copy),
// not a worktree's .git file or a directory inside another repository.
func isOwnRepo(dir string) bool {
	st, err := os.Stat(filepath.Join(dir, ".git"))
	return err == nil && st.IsDir()
}

// MeasureCopy counts what copying src would write (files, bytes), and
// refuses past limit with ErrTooLarge.
func MeasureCopy(src string, limit CopyLimit) (int, int64, error) {
	var (
		files int
		bytes int64
	)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != src && d.Name() == ".git" {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil // not copied
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			files++
			bytes += info.Size()
		}
		if (limit.Files > 0 && files > limit.Files) || (limit.Bytes > 0 && bytes > limit.Bytes) {
			return fmt.Errorf("%s holds more than %d files or %s, the most a session outside git gets a copy of: %w", src, limit.Files, Size(limit.Bytes), ErrTooLarge)
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return 0, 0, fmt.Errorf("measure %s: %w", src, err)
	}
	return files, bytes, err
}

// copyTree copies src's contents into dst (which exists), but for the
// .git entries: src's own is left, nested ones are left and returned
// (slash-separated, relative to src). gitLike says whether it copied an
// entry named .git but for its case.
func copyTree(ctx context.Context, src, dst string) (dropped []string, gitLike bool, err error) {
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		if d.Name() == ".git" {
			if filepath.Dir(p) != src {
				dropped = append(dropped, filepath.ToSlash(rel))
			}
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		gitLike = gitLike || strings.EqualFold(d.Name(), ".git")
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(target, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case d.Type().IsRegular():
			return copyFile(p, target, info.Mode().Perm())
		}
		return nil // a socket, device or pipe: nothing a session edits
	})
	return dropped, gitLike, err
}

func copyFile(src, dst string, mode fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// ApplyCopy brings what a session changed in its copy back to the
// directory it was copied from (dest, "" for in.Repo): each file it
// added, changed or deleted is written or removed there. It refuses with
// ErrConflict, changing nothing, when one of those files in dest is no
// longer as it was when the copy was made (a person or another session
// changed it since), listing them.
func ApplyCopy(ctx context.Context, in Info, dest string) ([]string, error) {
	if dest == "" {
		dest = in.Repo
	}
	env, done, err := indexCopy(ctx, in.Dir)
	if err != nil {
		return nil, fmt.Errorf("apply copy: %w", err)
	}
	defer done()
	if _, err := addAll(ctx, in.Dir, env); err != nil {
		return nil, fmt.Errorf("apply copy: %w", err)
	}
	out, err := gitRaw(ctx, in.Dir, env, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--cached", "--name-status", "-z", "--no-renames", in.Base, "--")
	if err != nil {
		return nil, fmt.Errorf("apply copy: %w", err)
	}
	tree, err := gitRaw(ctx, in.Dir, nil, "ls-tree", "-r", "-z", "--full-tree", in.Base)
	if err != nil {
		return nil, fmt.Errorf("apply copy: %w", err)
	}
	blobs := map[string]string{} // path -> blob id at the base
	for _, rec := range strings.Split(tree, "\x00") {
		meta, path, ok := strings.Cut(rec, "\t")
		if f := strings.Fields(meta); ok && len(f) == 3 {
			blobs[path] = f[2]
		}
	}
	type change struct{ status, path string }
	var changes []change
	recs := strings.Split(out, "\x00")
	for i := 0; i+1 < len(recs); i += 2 {
		changes = append(changes, change{recs[i], recs[i+1]})
	}
	root, err := openApplyRoot(dest)
	if err != nil {
		return nil, fmt.Errorf("apply copy: %w", err)
	}
	defer root.Close()
	var moved []string
	for _, c := range changes {
		if err := root.checkWay(c.path); err != nil {
			return nil, fmt.Errorf("apply copy: %w", err)
		}
		if !root.sameAsBase(c.path, blobs[c.path]) {
			moved = append(moved, c.path)
		}
	}
	if len(moved) > 0 {
		return nil, fmt.Errorf("%w: changed in %s since the session's copy was made: %s", ErrConflict, dest, strings.Join(moved, ", "))
	}
	var applied []string
	for _, c := range changes {
		if c.status == "D" {
			if err := root.remove(c.path); err != nil {
				return applied, fmt.Errorf("apply copy: %w", err)
			}
			applied = append(applied, c.path)
			continue
		}
		if err := copyIn(root, in.Dir, c.path); err != nil {
			return applied, fmt.Errorf("apply copy: %w", err)
		}
		applied = append(applied, c.path)
	}
	return applied, nil
}

// copyIn writes the session copy's file p (a link as a link) into the
// person's directory, through its root.
func copyIn(root *applyRoot, copyDir, p string) error {
	from := filepath.Join(copyDir, filepath.FromSlash(p))
	info, err := os.Lstat(from)
	if err != nil {
		return err
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		link, err := os.Readlink(from)
		if err != nil {
			return err
		}
		return root.writeLink(p, link)
	}
	f, err := os.Open(from)
	if err != nil {
		return err
	}
	defer f.Close()
	return root.writeFile(p, f, info.Mode().Perm())
}

// sameAsBase reports whether the file at p in the person's directory is
// the base's blob (blob "": the file was not there, and must still not
// be). It reads through the root, as apply writes.
func (a *applyRoot) sameAsBase(p, blob string) bool {
	info, err := a.root.Lstat(p)
	if blob == "" {
		return errors.Is(err, os.ErrNotExist)
	}
	if err != nil {
		return false
	}
	var b []byte
	if info.Mode()&fs.ModeSymlink != 0 {
		l, err := a.root.Readlink(p)
		if err != nil {
			return false
		}
		b = []byte(l)
	} else if b, err = a.root.ReadFile(p); err != nil {
		return false
	}
	h := sha1.New()
	h.Write([]byte("blob " + strconv.Itoa(len(b)) + "\x00"))
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)) == blob
}
