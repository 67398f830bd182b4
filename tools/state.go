package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// Where a session's files live beneath the state directory:
// sessions/<session>/tool-output/shell-….log and sessions/<session>/jobs/<id>.log.
const (
	stateSessions  = "sessions"
	stateSpillDir  = "tool-output"
	stateJobLogDir = "jobs"
)

// stateDir is the worker's state directory as the tools use it: the files
// they write for a session (spilled output, job logs) go beneath it, never
// into the workspace, so no command and no file tool the model drives can
// read, plant or redirect them. Everything is created through an os.Root
// on the directory, with O_EXCL|O_NOFOLLOW, so even a symlink someone
// managed to plant there cannot send a write elsewhere.
type stateDir struct {
	dir string // configured; "" is a private temporary directory

	once sync.Once
	path string
	root *os.Root
	err  error

	// quota bounds what each session's files take together.
	quota quota
}

// newStateDir returns the state directory dir, opened on first use.
func newStateDir(dir string) *stateDir { return &stateDir{dir: dir} }

// privateState is the process's private temporary state directory, made
// once for every tool configured with no StateDir (tests, listings), so a
// test run leaves one directory behind, not one per shell.
var privateState struct {
	once sync.Once
	path string
	err  error
}

// open opens the directory (0700), making it if need be.
func (d *stateDir) open() (*os.Root, string, error) {
	d.once.Do(func() {
		path := d.dir
		if path == "" {
			privateState.once.Do(func() {
				privateState.path, privateState.err = os.MkdirTemp("", "longrun-state-")
			})
			if privateState.err != nil {
				d.err = fmt.Errorf("create a private state directory: %w", privateState.err)
				return
			}
			path = privateState.path
		}
		if err := os.MkdirAll(path, 0o700); err != nil {
			d.err = fmt.Errorf("create state directory %s: %w", path, err)
			return
		}
		d.path = path
		if d.root, d.err = os.OpenRoot(path); d.err != nil {
			d.err = fmt.Errorf("open state directory %s: %w", path, d.err)
		}
	})
	return d.root, d.path, d.err
}

// stateFile is one file beneath the state directory: rel is its name
// beneath the root, abs the full path for messages.
type stateFile struct {
	root     *os.Root
	rel, abs string
}

// sessionFile names the session's file kind/name (both made file-safe).
func (d *stateDir) sessionFile(session, kind, name string) (stateFile, error) {
	root, path, err := d.open()
	if err != nil {
		return stateFile{}, err
	}
	dir := filepath.Join(stateSessions, fileSafe(session), kind)
	if err := root.MkdirAll(dir, 0o700); err != nil {
		return stateFile{}, fmt.Errorf("create %s: %w", filepath.Join(path, dir), err)
	}
	writeSessionID(root, filepath.Dir(dir), session)
	rel := filepath.Join(dir, fileSafe(name))
	return stateFile{root: root, rel: rel, abs: filepath.Join(path, rel)}, nil
}

// create makes the file afresh for writing: an old file of that name (a
// reused session id) is removed first, and O_EXCL|O_NOFOLLOW refuse
// anything that appears in between, a symlink included.
func (f stateFile) create() (*os.File, error) {
	if err := f.root.Remove(f.rel); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("remove old %s: %w", f.abs, err)
	}
	out, err := f.root.OpenFile(f.rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", f.abs, err)
	}
	return out, nil
}

// open opens the file for reading, never through a symlink.
func (f stateFile) open() (*os.File, error) {
	return f.root.OpenFile(f.rel, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}
