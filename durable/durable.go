// Package durable writes files that must outlast a crash of the machine,
// not only of the process: a transcript blob whose reference is already
// in a session's durable history, the worker id its sessions' calls are
// queued under. A file written and renamed is whole after a process
// crash; only the syncs below make its data and its name last through a
// power loss.
package durable

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Writer writes files durably. Its zero value syncs with SyncDir.
type Writer struct {
	// SyncDir, when set, replaces SyncDir: a test sees through it which
	// directories are synced.
	SyncDir func(dir string) error
}

// WriteFile writes data to path with perm, whole or not at all, and
// lasting: into a temporary file beside it (.tmp-*), synced, renamed into
// place, and then path's directory synced. A failure leaves no temporary
// file.
func (w Writer) WriteFile(path string, data []byte, perm fs.FileMode) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return w.Sync(dir)
}

// Sync makes the names in dir last (w.SyncDir, or SyncDir).
func (w Writer) Sync(dir string) error {
	if w.SyncDir != nil {
		return w.SyncDir(dir)
	}
	return SyncDir(dir)
}

// SyncDir makes the names in dir last: a file renamed into it, or a
// directory made in it, is on the disk under its name once this returns.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close() // read only: its close loses nothing
	return d.Sync()
}
