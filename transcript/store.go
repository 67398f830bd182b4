// Package transcript keeps a session's messages outside Temporal's history,
// content-addressed, so a long session's history holds a reference per turn
// instead of the whole conversation (which grows the history
// quadratically). A conversation is a chain of segments: each holds the
// messages of one step and the reference of the segment before it.
package transcript

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/longrun/longrun/durable"
)

// Store holds blobs by the SHA-256 of their content. Put of content already
// held is a no-op and returns the same reference, which is what makes a
// retried activity idempotent. Get returns exactly the bytes that hash to
// ref, or an error: a store never hands back content that does not match
// its reference.
type Store interface {
	Put(ctx context.Context, data []byte) (string, error)
	Get(ctx context.Context, ref string) ([]byte, error)
}

// refPrefix names the hash in every reference, so another one can be
// introduced later without ambiguity.
const refPrefix = "sha256:"

var (
	// ErrCorrupt marks stored content that no longer hashes to its
	// reference.
	ErrCorrupt = errors.New("content does not match its reference (corrupted)")
	// ErrBadRef marks a reference that is not sha256:<64 hex digits>.
	ErrBadRef = errors.New("not a transcript reference (want sha256:<64 hex digits>)")
)

// Ref is the reference of data: "sha256:" and the hex digest.
func Ref(data []byte) string {
	sum := sha256.Sum256(data)
	return refPrefix + hex.EncodeToString(sum[:])
}

// parseRef returns the hex digest of ref, checked: a reference becomes a
// file name, so anything but 64 lower-case hex digits is refused (no path
// can be smuggled in).
func parseRef(ref string) (string, error) {
	h, ok := strings.CutPrefix(ref, refPrefix)
	if !ok || len(h) != sha256.Size*2 {
		return "", fmt.Errorf("%q: %w", ref, ErrBadRef)
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", fmt.Errorf("%q: %w", ref, ErrBadRef)
		}
	}
	return h, nil
}

// Dir is a Store in a local directory: each blob is the file
// <dir>/<first 2 hex digits>/<hex digest>. It serves one machine. Workers
// on several machines must share the store, since a session's next turn
// may run on any of them: mount one directory on all of them, or use an
// S3-compatible bucket (S3).
type Dir struct {
	dir string
	w   durable.Writer // a test sees through it which directories are synced
}

// NewDir returns the store in dir, creating the directory if needed.
func NewDir(dir string) (*Dir, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("transcript store %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("transcript store: %w", err)
	}
	return &Dir{dir: abs}, nil
}

// Path returns the directory the store keeps its files in.
func (d *Dir) Path() string { return d.dir }

func (d *Dir) file(h string) string { return filepath.Join(d.dir, h[:2], h) }

// Put stores data unless a file of the same size is already there. It
// writes a temporary file, syncs it, renames it into place and syncs the
// directory, so a crash never leaves a partial blob under a reference,
// nor loses the whole blob: the reference goes into the session's
// history as soon as Put returns, and must then be readable even after
// the worker's machine lost its power (a rename not yet synced is lost
// with it, the blob's data with its name).
func (d *Dir) Put(ctx context.Context, data []byte) (string, error) {
	ref := Ref(data)
	if err := d.putBlob(ctx, ref, data); err != nil {
		return "", err
	}
	return ref, nil
}

// putBlob stores blob under ref as Put describes; the blob is data itself
// or, in a Sealed store, data encrypted.
func (d *Dir) putBlob(ctx context.Context, ref string, blob []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	path := d.file(ref[len(refPrefix):])
	dir := filepath.Dir(path)
	// Same size is enough to skip: a file with the right name holds what
	// hashes to it unless it was damaged, and Get catches damage. A young
	// one may be a Put's that failed at its directory's sync (and is
	// retried now): the sync is made again, as the file system may not
	// have committed its name yet.
	if fi, err := os.Stat(path); err == nil && fi.Size() == int64(len(blob)) {
		if time.Since(fi.ModTime()) < uncommittedAge {
			if err := d.w.Sync(dir); err != nil {
				return fmt.Errorf("store %s at %s: %w", ref, path, err)
			}
		}
		return nil
	}
	// One mkdir says whether the fan-out directory is new (nil) or was
	// there (ErrExist), without a stat before it on every Put. A store
	// directory removed under the worker is made again.
	err := os.Mkdir(dir, 0o755)
	if errors.Is(err, os.ErrNotExist) {
		err = os.MkdirAll(dir, 0o755)
	}
	switch {
	case err == nil:
		// A new fan-out directory: its name in the store's own
		// directory must last as well.
		if err := d.w.Sync(d.dir); err != nil {
			return fmt.Errorf("store %s: %w", ref, err)
		}
	case !errors.Is(err, os.ErrExist):
		return fmt.Errorf("store %s: %w", ref, err)
	}
	if err := d.w.WriteFile(path, blob, 0o644); err != nil {
		return fmt.Errorf("store %s at %s: %w", ref, path, err)
	}
	return nil
}

// uncommittedAge is how long a file system may keep a new name in memory
// before it commits it by itself (ext4 commits every 5 s, XFS's log
// within 30 s by default): an older file's name has lasted already.
const uncommittedAge = time.Minute

// Get reads the blob ref names and checks that it still hashes to ref.
func (d *Dir) Get(ctx context.Context, ref string) ([]byte, error) {
	data, where, err := d.getBlob(ctx, ref)
	if err != nil {
		return nil, err
	}
	return verify(ref, where, data)
}

// getBlob reads what is stored under ref, unchecked, and says where it
// was for messages.
func (d *Dir) getBlob(ctx context.Context, ref string) ([]byte, string, error) {
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	h, err := parseRef(ref)
	if err != nil {
		return nil, "", err
	}
	path := d.file(h)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("read %s: %w", ref, err)
	}
	return data, "at " + path, nil
}

// verify returns data if it hashes to ref, else ErrCorrupt.
func verify(ref, where string, data []byte) ([]byte, error) {
	if got := Ref(data); got != ref {
		return nil, fmt.Errorf("read %s %s: %w: it hashes to %s", ref, where, ErrCorrupt, got)
	}
	return data, nil
}
