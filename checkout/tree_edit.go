package checkout

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"
)

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
	// The directories on the way that are directories on disk are
	// directories in the tree: a file recorded there is gone.
	if _, err := t.dir(c.under, true); err != nil {
		return err
	}
	if c.kind == kindGone {
		return t.remove(c.path)
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
