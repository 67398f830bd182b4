package checkout

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strconv"
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
// files in it. Anything git add would refuse or treat otherwise is
// errFullLook.
func inspect(dir, sub string, paths []string) ([]changed, error) {
	seen := map[string]bool{}
	var out []changed
	dirOK := map[string]error{} // a directory on the way: nil, or why not
	for _, p := range paths {
		if p == "" || strings.HasPrefix(p, "/") {
			return nil, errFullLook
		}
		full := path.Join(sub, p)
		if full == "." || full == ".." || strings.HasPrefix(full, "../") || !plainPath(full) {
			return nil, errFullLook
		}
		if seen[full] {
			continue
		}
		seen[full] = true
		c, isDir, err := look(dir, full, dirOK)
		if err != nil {
			return nil, err
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
		out = append(out, changed{path: full, kind: kindGone, isDir: true})
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
// repository, which git add records as a gitlink).
func look(dir, full string, dirOK map[string]error) (changed, bool, error) {
	c := changed{path: full}
	parts := strings.Split(full, "/")
	for i := 1; i < len(parts); i++ {
		d := strings.Join(parts[:i], "/")
		err, known := dirOK[d]
		if !known {
			err = realDir(filepath.Join(dir, filepath.FromSlash(d)))
			dirOK[d] = err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return c, false, nil // gone with its directory
		}
		if err != nil {
			return c, false, err
		}
	}
	fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(full)))
	switch {
	case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
		return c, false, nil
	case err != nil:
		return c, false, err
	case fi.Mode().IsRegular():
		c.kind, c.exec = kindFile, fi.Mode().Perm()&0o100 != 0
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(filepath.Join(dir, filepath.FromSlash(full)))
		if err != nil {
			return c, false, err
		}
		c.kind, c.target = kindLink, t
	case fi.IsDir():
		return c, true, nil
	default:
		return c, false, errFullLook // a fifo, a socket, a device
	}
	return c, false, nil
}

// realDir is nil for a directory that is not a symbolic link and holds no
// .git, fs.ErrNotExist for none (or a file: what was under it is gone),
// errFullLook otherwise.
func realDir(d string) error {
	fi, err := os.Lstat(d)
	switch {
	case errors.Is(err, fs.ErrNotExist) || isNotDir(err):
		return fs.ErrNotExist
	case err != nil:
		return err
	case fi.Mode()&fs.ModeSymlink != 0:
		return errFullLook // git add will not look beyond a symbolic link
	case !fi.IsDir():
		return fs.ErrNotExist
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
		c, _, err := look(dir, rel, map[string]error{})
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

// checkpointConfig reads the settings that change what git add records.
func checkpointConfig(ctx context.Context, dir string) (map[string]string, error) {
	out, code, err := gitCode(ctx, dir, nil, "", "config", "-z", "--get-regexp",
		`^(core\.(autocrlf|safecrlf|filemode|symlinks|ignorecase|precomposeunicode|sparsecheckout|sharedrepository)|extensions\.objectformat)$`)
	if code == 1 {
		return map[string]string{}, nil // none set
	}
	if err != nil {
		return nil, err
	}
	cfg := map[string]string{}
	for _, kv := range strings.Split(out, "\x00") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "\n")
		if !ok {
			v = "true" // a key with no value is a true boolean
		}
		cfg[k] = v // the last one wins, as in git
	}
	return cfg, nil
}

// configBool is git's reading of a boolean setting; def when unset, and
// when unreadable (git would refuse to run; the full look then fails
// the same way).
func configBool(cfg map[string]string, key string, def bool) bool {
	v, ok := cfg[key]
	if !ok {
		return def
	}
	switch strings.ToLower(v) {
	case "true", "yes", "on", "1", "":
		return true
	case "false", "no", "off", "0":
		return false
	}
	if n, err := strconv.Atoi(v); err == nil {
		return n != 0
	}
	return def
}

// convertAttrs are the attributes that make git add store something other
// than the file's bytes.
var convertAttrs = []string{"text", "eol", "crlf", "filter", "ident", "working-tree-encoding"}

// checkAttr reads convertAttrs for files. The index it would read (all
// of it, for .gitattributes files missing from the working tree) is none:
// the checkpoints' index holds no .gitattributes the files lack, since a
// change to one is always a full look.
func checkAttr(ctx context.Context, dir string, dirs repoDirs, files []string) (map[string]map[string]string, error) {
	res := map[string]map[string]string{}
	if len(files) == 0 {
		return res, nil
	}
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(dirs.git, "longrun-no-index")}
	args := append([]string{"check-attr", "-z", "--stdin"}, convertAttrs...)
	out, _, err := gitCode(ctx, dir, env, strings.Join(files, "\x00")+"\x00", args...)
	if err != nil {
		return nil, err
	}
	f := strings.Split(out, "\x00")
	for i := 0; i+2 < len(f); i += 3 {
		if res[f[i]] == nil {
			res[f[i]] = map[string]string{}
		}
		res[f[i]][f[i+1]] = f[i+2]
	}
	return res, nil
}

// checkIgnore gives which of paths the ignore rules exclude, as they
// would for a file not in the index.
func checkIgnore(ctx context.Context, dir string, paths []string) (map[string]bool, error) {
	res := map[string]bool{}
	if len(paths) == 0 {
		return res, nil
	}
	out, code, err := gitCode(ctx, dir, nil, strings.Join(paths, "\x00")+"\x00", "check-ignore", "--no-index", "-z", "--stdin")
	if code == 1 {
		return res, nil // none ignored
	}
	if err != nil {
		return nil, err
	}
	for _, p := range strings.Split(out, "\x00") {
		if p != "" {
			res[p] = true
		}
	}
	return res, nil
}

// writeBlobs writes the blobs of the files and links in ch, as they are
// (usable says whether git add would convert them): a file's bytes, a
// link's target.
func writeBlobs(objects looseObjects, dir string, ch []changed) error {
	for i, c := range ch {
		var body []byte
		switch c.kind {
		case kindGone:
			continue
		case kindLink:
			body = []byte(c.target)
		default:
			b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(c.path)))
			if err != nil {
				return errFullLook // changed meanwhile: let git add look
			}
			body = b
		}
		oid, err := objects.write("blob", body)
		if err != nil {
			return err
		}
		ch[i].blob = oid
	}
	return nil
}

// usable says whether the blobs hashed as they are are what git add
// would store, and whether to trust the executable bit: no conversion
// configured (core.autocrlf), none by attribute unless it has nothing to
// convert (text, eol and crlf only turn CRLF into LF), symbolic links
// and a case-sensitive file system as git sees them, SHA-1 objects.
func usable(cfg map[string]string, attrs map[string]map[string]string, dir string, files []string) (bool, error) {
	if v := strings.ToLower(cfg["core.autocrlf"]); v != "" && v != "false" {
		return false, errFullLook
	}
	if f := cfg["extensions.objectformat"]; f != "" && f != "sha1" {
		return false, errFullLook // the objects written are SHA-1's
	}
	switch strings.ToLower(cfg["core.sharedrepository"]) {
	case "", "false", "umask", "0", "no", "off":
	default:
		return false, errFullLook // the objects written would need the group's permissions
	}
	if !configBool(cfg, "core.symlinks", true) || configBool(cfg, "core.ignorecase", false) ||
		configBool(cfg, "core.precomposeunicode", false) || configBool(cfg, "core.sparsecheckout", false) {
		return false, errFullLook
	}
	safeCRLF := strings.ToLower(cfg["core.safecrlf"])
	for _, f := range files {
		text := false
		for k, v := range attrs[f] {
			if v == "unspecified" || v == "unset" {
				continue
			}
			switch k {
			case "text", "eol", "crlf":
				text = true
			default:
				return false, errFullLook
			}
		}
		if !text {
			continue
		}
		if safeCRLF != "" && safeCRLF != "false" && safeCRLF != "warn" {
			return false, errFullLook
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil || bytes.IndexByte(b, '\r') >= 0 {
			return false, errFullLook
		}
	}
	return configBool(cfg, "core.filemode", true), nil
}

// gitCode runs git with stdin and gives its exit code too (-1: it did
// not run).
func gitCode(ctx context.Context, dir string, env []string, stdin string, args ...string) (string, int, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string(nil), gitSafe...), args...)...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), gitIdentity...), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err == nil {
		return out.String(), 0, nil
	}
	code := -1
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	}
	msg := strings.TrimSpace(errb.String())
	if msg == "" {
		msg = err.Error()
	}
	return out.String(), code, fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
}

// treeEntry is one entry of a tree: its mode as git writes it ("100644",
// "100755", "120000", "40000", "160000") and its object.
type treeEntry struct{ mode, oid string }

const (
	modeTree    = "40000"
	modeGitlink = "160000"
)

func (e treeEntry) isTree() bool { return e.mode == modeTree }

// treeNode is a directory being edited: its entries, and whether they
// changed.
type treeNode struct {
	entries map[string]treeEntry
	dirty   bool
}

// treeEdit edits the previous checkpoint's tree: nodes by directory
// ("" the top), read from cat as they are needed.
type treeEdit struct {
	cat     *catFile
	objects looseObjects
	nodes   map[string]*treeNode
}

func (t *treeEdit) load(oid string) (*treeNode, error) {
	typ, body, err := t.cat.get(oid)
	if err != nil {
		return nil, err
	}
	if typ != "tree" {
		return nil, fmt.Errorf("git cat-file: %s is a %s, not a tree", oid, typ)
	}
	n := &treeNode{entries: map[string]treeEntry{}}
	for len(body) > 0 {
		sp := bytes.IndexByte(body, ' ')
		nul := bytes.IndexByte(body, 0)
		if sp < 0 || nul < sp || len(body) < nul+21 {
			return nil, fmt.Errorf("git cat-file: tree %s is malformed", oid)
		}
		n.entries[string(body[sp+1:nul])] = treeEntry{string(body[:sp]), fmt.Sprintf("%x", body[nul+1:nul+21])}
		body = body[nul+21:]
	}
	return n, nil
}

// dir gives the node of directory d, nil when there is none and create
// is false. With create, files on the way are replaced by directories
// (a path that became a directory). A gitlink on the way: errFullLook.
func (t *treeEdit) dir(d string, create bool) (*treeNode, error) {
	if n := t.nodes[d]; n != nil {
		return n, nil
	}
	parentDir, name := path.Split(d)
	parent, err := t.dir(strings.TrimSuffix(parentDir, "/"), create)
	if parent == nil || err != nil {
		return nil, err
	}
	e, ok := parent.entries[name]
	switch {
	case ok && e.mode == modeGitlink:
		return nil, errFullLook
	case ok && e.isTree() && e.oid != "":
		n, err := t.load(e.oid)
		if err != nil {
			return nil, err
		}
		t.nodes[d] = n
		return n, nil
	case !create:
		return nil, nil
	}
	n := &treeNode{entries: map[string]treeEntry{}}
	parent.entries[name] = treeEntry{mode: modeTree} // its oid once written
	t.nodes[d] = n
	t.touch(d)
	return n, nil
}

// lookup gives the entry at p in the tree as edited so far.
func (t *treeEdit) lookup(p string) (treeEntry, error) {
	d, name := path.Split(p)
	n, err := t.dir(strings.TrimSuffix(d, "/"), false)
	if n == nil || err != nil {
		return treeEntry{}, err
	}
	e := n.entries[name]
	if e.mode == modeGitlink {
		return e, errFullLook
	}
	return e, nil
}

// touch marks d and the directories above it changed.
func (t *treeEdit) touch(d string) {
	for {
		if n := t.nodes[d]; n != nil {
			n.dirty = true
		}
		if d == "" {
			return
		}
		parent, _ := path.Split(d)
		d = strings.TrimSuffix(parent, "/")
	}
}

// set puts e at p, replacing whatever was there (a directory: all of it).
func (t *treeEdit) set(p string, e treeEntry) error {
	d, name := path.Split(p)
	d = strings.TrimSuffix(d, "/")
	n, err := t.dir(d, true)
	if err != nil {
		return err
	}
	if old := n.entries[name]; old.mode == modeGitlink {
		return errFullLook
	}
	t.drop(p)
	n.entries[name] = e
	t.touch(d)
	return nil
}

// remove takes p out, whatever it is (a directory: all of it).
func (t *treeEdit) remove(p string) error {
	d, name := path.Split(p)
	d = strings.TrimSuffix(d, "/")
	n, err := t.dir(d, false)
	if n == nil || err != nil {
		return err
	}
	old, ok := n.entries[name]
	if !ok {
		return nil
	}
	if old.mode == modeGitlink {
		return errFullLook
	}
	t.drop(p)
	delete(n.entries, name)
	t.touch(d)
	return nil
}

// drop forgets the nodes of directory p and those under it.
func (t *treeEdit) drop(p string) {
	for d := range t.nodes {
		if d == p || strings.HasPrefix(d, p+"/") {
			delete(t.nodes, d)
		}
	}
}

// apply records c as git add --all would: a file or link in (unless it
// is new and ignored), whatever it replaced out, a gone path out. orig
// is what the previous checkpoint had at c.path.
func (t *treeEdit) apply(c changed, orig treeEntry, ignored, fileMode bool) error {
	if c.isDir && orig.isTree() {
		return errFullLook // a directory before too: what changed in it is unknown
	}
	if c.kind == kindGone {
		return t.remove(c.path)
	}
	d, _ := path.Split(c.path)
	if _, err := t.dir(strings.TrimSuffix(d, "/"), true); err != nil {
		return err // the directories on the way, files there replaced
	}
	tracked := orig.mode != "" && !orig.isTree()
	if !tracked && ignored {
		return t.remove(c.path) // a directory it replaced is gone too
	}
	mode := "100644"
	switch {
	case c.kind == kindLink:
		mode = "120000"
	case !fileMode:
		if orig.mode == "100755" || orig.mode == "100644" {
			mode = orig.mode // git keeps the recorded bit
		}
	case c.exec:
		mode = "100755"
	}
	return t.set(c.path, treeEntry{mode, c.blob})
}

// write writes the changed trees, deepest first, and gives the top one;
// a directory left empty goes.
func (t *treeEdit) write(unchanged string) (string, error) {
	var todo []string
	for d, n := range t.nodes {
		if n.dirty {
			todo = append(todo, d)
		}
	}
	if len(todo) == 0 {
		return unchanged, nil
	}
	depth := func(d string) int {
		if d == "" {
			return -1
		}
		return strings.Count(d, "/")
	}
	sort.Slice(todo, func(i, j int) bool { return depth(todo[i]) > depth(todo[j]) })
	for _, d := range todo {
		n := t.nodes[d]
		parentDir, name := path.Split(d)
		parent := t.nodes[strings.TrimSuffix(parentDir, "/")]
		if len(n.entries) == 0 && d != "" {
			delete(parent.entries, name)
			continue
		}
		body, err := treeBody(n.entries)
		if err != nil {
			return "", err
		}
		oid, err := t.objects.write("tree", body)
		if err != nil {
			return "", err
		}
		if d == "" {
			return oid, nil
		}
		parent.entries[name] = treeEntry{modeTree, oid}
	}
	return "", errors.New("checkpoint paths: the top tree was not written")
}

// batch is a git process answering requests on its stdin, one at a time.
type batch struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	errb bytes.Buffer
	name string
}

func startBatch(ctx context.Context, dir string, args ...string) (*batch, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string(nil), gitSafe...), args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), gitIdentity...)
	b := &batch{cmd: cmd, name: "git " + strings.Join(args, " ")}
	cmd.Stderr = &b.errb
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", b.name, err)
	}
	b.in, b.out = in, bufio.NewReader(out)
	return b, nil
}

// line sends req and reads one line of answer.
func (b *batch) line(req []byte) (string, error) {
	if _, err := b.in.Write(req); err != nil {
		return "", b.fail(err)
	}
	l, err := b.out.ReadString('\n')
	if err != nil {
		return "", b.fail(err)
	}
	return strings.TrimSuffix(l, "\n"), nil
}

func (b *batch) fail(err error) error {
	b.close()
	if msg := strings.TrimSpace(b.errb.String()); msg != "" {
		return fmt.Errorf("%s: %s", b.name, msg)
	}
	return fmt.Errorf("%s: %w", b.name, err)
}

func (b *batch) close() {
	if b.in != nil {
		b.in.Close()
		b.in = nil
		b.cmd.Wait()
	}
}

// catFile reads objects through one git cat-file --batch.
type catFile struct{ *batch }

// get gives the object named name (an id, or HEAD), its type and body; a
// missing one is errFullLook.
func (c *catFile) get(name string) (string, []byte, error) {
	h, err := c.line([]byte(name + "\n"))
	if err != nil {
		return "", nil, err
	}
	f := strings.Fields(h)
	if len(f) != 3 {
		return "", nil, errFullLook // "<name> missing" or ambiguous
	}
	size, err := strconv.Atoi(f[2])
	if err != nil {
		return "", nil, fmt.Errorf("git cat-file: unexpected header %q", h)
	}
	body := make([]byte, size+1)
	if _, err := io.ReadFull(c.out, body); err != nil {
		return "", nil, c.fail(err)
	}
	return f[1], body[:size], nil
}

// openState starts git cat-file --batch and reads HEAD and the previous
// checkpoint through it: the checkpoint's state, as checkpointState.
func openState(ctx context.Context, dir, prev string) (*catFile, ckptState, error) {
	var st ckptState
	b, err := startBatch(ctx, dir, "cat-file", "--batch")
	if err != nil {
		return nil, st, err
	}
	c := &catFile{b}
	h, err := c.line([]byte("HEAD\n"))
	if err != nil {
		return c, st, err
	}
	f := strings.Fields(h)
	if len(f) != 3 || f[1] != "commit" {
		return c, st, errFullLook
	}
	if _, err := io.CopyN(io.Discard, c.out, mustAtoi(f[2])+1); err != nil {
		return c, st, c.fail(err)
	}
	st.head = f[0]
	typ, body, err := c.get(prev)
	if err != nil {
		return c, st, err
	}
	if typ != "commit" {
		return c, st, errFullLook
	}
	for _, l := range strings.Split(string(body), "\n") {
		if l == "" {
			break // the end of the headers
		}
		if v, ok := strings.CutPrefix(l, "tree "); ok {
			st.prevTree = v
		}
		if v, ok := strings.CutPrefix(l, "parent "); ok && st.prevParent == "" {
			st.prevParent = v
		}
	}
	if st.prevTree == "" || st.prevParent == "" {
		return c, st, errFullLook
	}
	return c, st, nil
}

func mustAtoi(s string) int64 {
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}
