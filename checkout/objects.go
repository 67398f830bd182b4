package checkout

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// looseObjects writes objects into a repository's object directory as
// git writes loose ones (zlib over "<type> <size>\0<body>", named by the
// SHA-1 of that, made read-only under a temporary name and linked into
// place), so a checkpoint's few blobs and trees cost no git process. Only
// for SHA-1 repositories without core.sharedRepository (the caller
// checks both).
type looseObjects struct{ dir string }

// write stores the object and gives its id. One already there is
// freshened, as git does, so a gc running now does not prune it as
// unreferenced just before the checkpoint refers to it.
func (o looseObjects) write(typ string, body []byte) (string, error) {
	h := sha1.New()
	fmt.Fprintf(h, "%s %d\x00", typ, len(body))
	h.Write(body)
	oid := hex.EncodeToString(h.Sum(nil))
	dir := filepath.Join(o.dir, oid[:2])
	file := filepath.Join(dir, oid[2:])
	if _, err := os.Stat(file); err == nil {
		now := time.Now()
		if err := os.Chtimes(file, now, now); err == nil {
			return oid, nil
		}
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return "", fmt.Errorf("write object %s: %w", oid, err)
	}
	tmp, err := os.CreateTemp(dir, "tmp_obj_")
	if err != nil {
		return "", fmt.Errorf("write object %s: %w", oid, err)
	}
	defer os.Remove(tmp.Name())
	z := zlib.NewWriter(tmp)
	fmt.Fprintf(z, "%s %d\x00", typ, len(body))
	_, werr := z.Write(body)
	if err := z.Close(); werr == nil {
		werr = err
	}
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o444)
	}
	if werr == nil {
		if werr = os.Link(tmp.Name(), file); errors.Is(werr, fs.ErrExist) {
			werr = nil // written meanwhile: the same bytes
		}
	}
	if werr != nil {
		return "", fmt.Errorf("write object %s: %w", oid, werr)
	}
	return oid, nil
}

// treeBody is a tree object's body: its entries in git's order (by name,
// a tree's name as if it ended in "/"), each "<mode> <name>\0" and the
// object's 20 bytes.
func treeBody(entries map[string]treeEntry) ([]byte, error) {
	names := make([]string, 0, len(entries))
	for name := range entries {
		names = append(names, name)
	}
	key := func(name string) string {
		if entries[name].isTree() {
			return name + "/"
		}
		return name
	}
	sort.Slice(names, func(i, j int) bool { return key(names[i]) < key(names[j]) })
	var b bytes.Buffer
	for _, name := range names {
		e := entries[name]
		raw, err := hex.DecodeString(e.oid)
		if err != nil || len(raw) != sha1.Size || strings.ContainsAny(name, "/\x00") {
			return nil, fmt.Errorf("checkpoint paths: bad tree entry %q %q", name, e.oid)
		}
		b.WriteString(e.mode + " " + name + "\x00")
		b.Write(raw)
	}
	return b.Bytes(), nil
}
