package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
)

// DefaultSessionQuotaBytes is how much disk one session's spilled output
// and job logs may take together on a worker (ShellConfig.SessionQuotaBytes):
// MaxSpillBytes bounds one command, this bounds a session that runs many.
const DefaultSessionQuotaBytes = 1 << 30

// stateSessionID is the file in a session's directory that holds the
// session's id as given: the directory's name is the id made file-safe,
// which cannot always be turned back (see fileSafe).
const stateSessionID = "session-id"

// quota counts the bytes each session's files take beneath the state
// directory, so spills and job logs share one bound per session. A
// session's count starts from what is on disk the first time it is
// asked for (a worker that restarted does not forget what is there).
type quota struct {
	max  int64 // <= 0: no bound
	mu   sync.Mutex
	used map[string]int64
}

// take grants up to n more bytes to the session's files and returns how
// many it granted: fewer than n once the quota is reached.
func (d *stateDir) take(session string, n int64) int64 {
	q := &d.quota
	if q.max <= 0 || n <= 0 {
		return n
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	used, ok := q.used[session]
	if !ok {
		used = d.onDisk(session)
	}
	grant := max(0, min(n, q.max-used))
	if q.used == nil {
		q.used = map[string]int64{}
	}
	q.used[session] = used + grant
	return grant
}

// onDisk is what the session's files take now (0 when there are none).
func (d *stateDir) onDisk(session string) int64 {
	root, _, err := d.open()
	if err != nil {
		return 0
	}
	var total int64
	_ = fs.WalkDir(root.FS(), filepath.Join(stateSessions, fileSafe(session)), func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				total += fi.Size()
			}
		}
		return nil
	})
	return total
}

// quotaNote is what a result says when the quota cut it.
func (d *stateDir) quotaNote() string {
	return fmt.Sprintf("output cut: this session's %s quota for spilled output and job logs is used up (--session-quota-bytes)", sizeText(d.quota.max))
}

// sizeText writes a byte count the way a person reads it: 1 GiB, 512 MiB,
// 1500 bytes.
func sizeText(n int64) string {
	for _, u := range []struct {
		shift uint
		name  string
	}{{40, "TiB"}, {30, "GiB"}, {20, "MiB"}, {10, "KiB"}} {
		if n >= 1<<u.shift && n%(1<<u.shift) == 0 {
			return fmt.Sprintf("%d %s", n>>u.shift, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}

// SessionFiles are the files the tools keep for sessions beneath the
// worker's state directory (spilled output, job logs), bounded by one
// quota per session. The worker makes one, hands it to the tools
// (Config.Files) and deletes a session's files once the session has
// ended (its reaper asks Temporal which have).
type SessionFiles struct{ d *stateDir }

// NewSessionFiles returns the session files beneath stateDir ("" is a
// private temporary directory), each session's bounded by quota bytes
// (<= 0: no bound).
func NewSessionFiles(stateDir string, quota int64) *SessionFiles {
	d := newStateDir(stateDir)
	d.quota.max = quota
	return &SessionFiles{d: d}
}

// Sessions returns the ids of the sessions that have files here, sorted.
func (f *SessionFiles) Sessions() ([]string, error) {
	root, path, err := f.d.open()
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(root.FS(), stateSessions)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", filepath.Join(path, stateSessions), err)
	}
	var ids []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		id := e.Name() // a directory from before the id file: its name
		if b, err := fs.ReadFile(root.FS(), filepath.Join(stateSessions, e.Name(), stateSessionID)); err == nil && len(b) > 0 {
			id = string(b)
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// Remove deletes the session's files and forgets what they took.
func (f *SessionFiles) Remove(session string) error {
	root, path, err := f.d.open()
	if err != nil {
		return err
	}
	f.d.quota.mu.Lock()
	defer f.d.quota.mu.Unlock()
	delete(f.d.quota.used, session)
	dir := filepath.Join(stateSessions, fileSafe(session))
	if err := root.RemoveAll(dir); err != nil {
		return fmt.Errorf("remove %s: %w", filepath.Join(path, dir), err)
	}
	return nil
}

// writeSessionID records the session's id in its directory once, so
// Sessions can name it (see stateSessionID).
func writeSessionID(root *os.Root, dir, session string) {
	f, err := root.OpenFile(filepath.Join(dir, stateSessionID), os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return // there already, or it cannot be: Sessions falls back to the name
	}
	_, _ = f.WriteString(session)
	_ = f.Close()
}
