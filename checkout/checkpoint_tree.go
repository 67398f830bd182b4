package checkout

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// The paths mode builds a checkpoint's tree from the previous one's
// without any index: the changed files are hashed into blobs, only the
// trees on their directories are read and written again, and so its cost
// is that of the changed paths whatever the size of the repository
// (reading, checking and writing a 100,000-entry index is hundreds of
// milliseconds). It gives the tree `git add --all` would give through an
// index holding the previous checkpoint's tree, or errFullLook when it
// cannot be sure to (attributes that convert, a symbolic link or a nested
// repository on the way, a case-insensitive file system...): the caller
// then takes the full look.

// errFullLook says the paths mode cannot give the full look's tree.
var errFullLook = errors.New("checkpoint paths: a full look is needed")

// maxWalk bounds the files of the new directories a changed path may be.
const maxWalk = 1000

// diskKind is what a changed path is on disk.
type diskKind int

const (
	kindGone diskKind = iota // not there, or under something not a directory
	kindFile                 // a regular file
	kindLink                 // a symbolic link
)

// changed is one changed path, relative to the checkout's top.
type changed struct {
	path   string
	kind   diskKind
	exec   bool   // kindFile: the owner may execute it
	target string // kindLink: what it points to
	blob   string // kindFile, kindLink: its blob, once hashed
	isDir  bool   // a reported path that is a directory now (kindGone: the files in it follow)
	under  string // the deepest directory on its way that is one on disk ("" the top)
}

// pathsResult is what the paths mode found: the tree, the state the
// commit needs, the paths it looked at (relative to the checkout's top),
// and whether it trusted the executable bit (core.fileMode).
type pathsResult struct {
	tree     string
	st       ckptState
	paths    []string
	fileMode bool
}

// pathsTree is the tree of the checkout's files when only paths
// (relative to in.Sub) can have changed since prev. It writes blobs and
// trees into the repository, nothing else: no index, no ref.
func pathsTree(ctx context.Context, in Info, dirs repoDirs, prev string, paths []string) (pathsResult, error) {
	var res pathsResult
	tree, st, fileMode, ch, err := buildTree(ctx, in, dirs, prev, paths)
	if err != nil {
		return res, err
	}
	res.tree, res.st, res.fileMode = tree, st, fileMode
	for _, c := range ch {
		res.paths = append(res.paths, c.path)
	}
	return res, nil
}

func buildTree(ctx context.Context, in Info, dirs repoDirs, prev string, paths []string) (string, ckptState, bool, []changed, error) {
	var st ckptState
	ch, err := inspect(in.Dir, in.Sub, paths)
	if err != nil {
		return "", st, false, nil, err
	}
	var files, present []string // regular files; files and links
	for _, c := range ch {
		if c.kind == kindFile {
			files = append(files, c.path)
		}
		if c.kind != kindGone {
			present = append(present, c.path)
		}
	}
	// Four git processes at once, each a few milliseconds mostly to
	// start: the previous checkpoint and HEAD (and later its trees), the
	// config, the attributes, the ignore rules.
	var (
		wg              sync.WaitGroup
		cat             *catFile
		cfg             map[string]string
		attrs           map[string]map[string]string
		ignored         map[string]bool
		catErr, cfgErr  error
		attrErr, ignErr error
	)
	wg.Add(4)
	go func() {
		defer wg.Done()
		cat, st, catErr = openState(ctx, in.Dir, prev)
	}()
	go func() { defer wg.Done(); cfg, cfgErr = checkpointConfig(ctx, in.Dir) }()
	go func() { defer wg.Done(); attrs, attrErr = checkAttr(ctx, in.Dir, dirs, files) }()
	go func() { defer wg.Done(); ignored, ignErr = checkIgnore(ctx, in.Dir, present) }()
	wg.Wait()
	if cat != nil {
		defer cat.close()
	}
	for _, err := range []error{catErr, cfgErr, attrErr, ignErr} {
		if err != nil {
			return "", st, false, nil, err
		}
	}
	fileMode, err := usable(cfg, attrs, in.Dir, files)
	if err != nil {
		return "", st, false, nil, err
	}
	objects := looseObjects{filepath.Join(dirs.common, "objects")}
	if err := writeBlobs(objects, in.Dir, ch); err != nil {
		return "", st, false, nil, err
	}
	t := &treeEdit{cat: cat, objects: objects, nodes: map[string]*treeNode{}}
	if t.nodes[""], err = t.load(st.prevTree); err != nil {
		return "", st, false, nil, err
	}
	// What each path was in the previous checkpoint, before any edit: a
	// file recorded there is tracked, and the ignore rules do not apply to
	// it (git add --all keeps tracked files).
	orig := make([]treeEntry, len(ch))
	for i, c := range ch {
		if orig[i], err = t.lookup(c.path); err != nil {
			return "", st, false, nil, err
		}
	}
	// What is gone goes first: a directory reported after the files in
	// it (a file that became one) takes out whatever it replaced, and
	// the files then come back.
	for _, gone := range []bool{true, false} {
		for i, c := range ch {
			if (c.kind == kindGone) != gone {
				continue
			}
			if err := t.apply(c, orig[i], ignored[c.path], fileMode); err != nil {
				return "", st, false, nil, err
			}
		}
	}
	tree, err := t.write(st.prevTree)
	return tree, st, fileMode, ch, err
}

// inspect cleans paths (relative to sub) into paths relative to the
// checkout's top and looks at each on disk; a new directory gives the
// files in it, and a file where a directory on a path's way was is looked
// at too. Anything git add would refuse or treat otherwise is
// errFullLook.
func inspect(dir, sub string, paths []string) ([]changed, error) {
	var todo []string
	for _, p := range paths {
		if p == "" || strings.HasPrefix(p, "/") {
			return nil, errFullLook
		}
		full := path.Join(sub, p)
		if full == "." || full == ".." || strings.HasPrefix(full, "../") || !plainPath(full) {
			return nil, errFullLook
		}
		todo = append(todo, full)
	}
	seen := map[string]bool{}
	var out []changed
	dirOK := map[string]error{} // a directory on the way: nil, or why not
	for len(todo) > 0 {
		full := todo[0]
		todo = todo[1:]
		if seen[full] {
			continue
		}
		seen[full] = true
		c, isDir, file, err := look(dir, full, dirOK)
		if err != nil {
			return nil, err
		}
		if file != "" {
			todo = append(todo, file)
		}
		if !isDir {
			out = append(out, c)
			continue
		}
		walked, err := walkNew(dir, full, seen)
		if err != nil {
			return nil, err
		}
		// The directory's own entry (a file it replaced) is gone; the
		// files in it are looked at like reported ones.
		c.kind, c.isDir = kindGone, true
		out = append(out, c)
		out = append(out, walked...)
	}
	if len(out) > maxWalk {
		return nil, errFullLook
	}
	return out, nil
}

// plainPath reports whether every component of p is one git records
// without question: no ".git" lookalike (nor .gitignore, .gitattributes,
// .gitmodules: a change to them changes how other files are seen), no
// control character or backslash, not starting with a quote (which git
// unquotes in some inputs).
func plainPath(p string) bool {
	if strings.HasPrefix(p, `"`) {
		return false
	}
	for _, c := range strings.Split(p, "/") {
		l := strings.ToLower(c)
		if c == "" || c == "." || c == ".." || strings.HasPrefix(l, ".git") || strings.HasPrefix(l, "git~") {
			return false
		}
		for i := 0; i < len(c); i++ {
			if c[i] < 0x20 || c[i] == 0x7f || c[i] == '\\' {
				return false
			}
		}
	}
	return true
}

// look lstats full (relative to dir) and the directories on its way,
// which must be real directories with no .git in them (a nested
// repository, which git add records as a gitlink). isDir: full is a
// directory. file: a file on full's way, where a directory was, to look
// at too.
func look(dir, full string, dirOK map[string]error) (c changed, isDir bool, file string, err error) {
	c = changed{path: full}
	parts := strings.Split(full, "/")
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		derr, known := dirOK[d]
		if !known {
			derr = realDir(filepath.Join(dir, filepath.FromSlash(d)))
			dirOK[d] = derr
		}
		switch {
		case errors.Is(derr, errIsFile):
			return c, false, d, nil // gone, and the file in its place is new
		case errors.Is(derr, fs.ErrNotExist):
			return c, false, "", nil // gone with its directory
		case derr != nil:
			return c, false, "", derr
		}
		c.under = d
	}
	fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(full)))
	switch {
	case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
		return c, false, "", nil
	case err != nil:
		return c, false, "", err
	case fi.Mode().IsRegular() && fi.Size() > maxPathsBlob:
		return c, false, "", errFullLook // git add streams it; the paths mode would hold it in memory
	case fi.Mode().IsRegular():
		c.kind, c.exec = kindFile, fi.Mode().Perm()&0o100 != 0
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(filepath.Join(dir, filepath.FromSlash(full)))
		if err != nil {
			return c, false, "", err
		}
		c.kind, c.target = kindLink, t
	case fi.IsDir():
		return c, true, "", nil
	default:
		return c, false, "", errFullLook // a fifo, a socket, a device
	}
	return c, false, "", nil
}

// maxPathsBlob is the largest file the paths mode hashes itself: it reads
// a file whole to write its blob, so a larger one (a build output, a data
// file a tool wrote) is left to the full look's git add, which streams it.
const maxPathsBlob = 16 << 20

// errIsFile says a directory on a path's way is a file now.
var errIsFile = errors.New("not a directory")

// realDir is nil for a directory that is not a symbolic link and holds no
// .git, fs.ErrNotExist for none, errIsFile for a file, errFullLook
// otherwise.
func realDir(d string) error {
	fi, err := os.Lstat(d)
	switch {
	case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
		return fs.ErrNotExist
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return errFullLook // git add will not look beyond a symbolic link
	case fi.Mode().IsRegular():
		return errIsFile
	case !fi.IsDir():
		return errFullLook
	}
	if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
		return errFullLook
	}
	return nil
}

func isNotDir(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && errors.Is(pe.Err, syscall.ENOTDIR)
}

// walkNew lists the files under full, a directory that was not one in
// the previous checkpoint... or was: the caller finds out once it has
// the tree (apply refuses a directory recorded there).
func walkNew(dir, full string, seen map[string]bool) ([]changed, error) {
	var out []changed
	root := filepath.Join(dir, filepath.FromSlash(full))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if len(out) > maxWalk {
			return errFullLook
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !plainPath(rel) {
			return errFullLook
		}
		if d.IsDir() {
			if _, err := os.Lstat(filepath.Join(p, ".git")); err == nil {
				return errFullLook
			}
			return nil
		}
		if seen[rel] {
			return nil
		}
		seen[rel] = true
		c, _, _, err := look(dir, rel, map[string]error{})
		if err != nil {
			return err
		}
		c.path = rel
		out = append(out, c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
