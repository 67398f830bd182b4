package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// workerIDFile holds, in the state directory, the name of the worker that
// keeps its state there: its own task queue is named after it.
const workerIDFile = "worker-id"

// workerLockFile is held (flock) by the worker process using the state
// directory, so a second process on the same directory knows it is not
// the only one.
const workerLockFile = "worker.lock"

// workerIDRe is what a stored worker id may be: it becomes part of a task
// queue's name.
var workerIDRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// ownQueue names the task queue only this worker polls: the shared
// queue's name and the worker's id. The id is kept in the state directory
// (made once, from the host name and a random suffix), so a worker
// restarted on the same state directory, after a crash, a kill or a
// deploy, polls the same queue: the calls its sessions pinned there (every
// call that touches a session's checkout, which is in that state
// directory) are picked up again instead of waiting for a worker that will
// never come. A second process on a state directory another one holds
// (release is the flock's, freed by the kernel when the holder dies, even
// by SIGKILL) gets a random queue of its own, as before, and says so:
// two processes must not serve one queue, since each holds its own
// background jobs.
func ownQueue(shared, stateDir string) (queue string, release func(), note string) {
	release = func() {}
	if stateDir == "" {
		return shared + "-worker-" + randomID(), release, "no state directory: this worker's own task queue is new at every start"
	}
	unlock, err := lockStateDir(filepath.Join(stateDir, workerLockFile))
	if err != nil {
		return shared + "-worker-" + randomID(), release, fmt.Sprintf("another worker process uses the state directory %s (%v): this one gets a task queue of its own that is new at every start; give each worker a state directory of its own", stateDir, err)
	}
	id, err := workerID(filepath.Join(stateDir, workerIDFile))
	if err != nil {
		unlock()
		return shared + "-worker-" + randomID(), release, fmt.Sprintf("worker id: %v: this worker's own task queue is new at every start", err)
	}
	return shared + "-worker-" + id, unlock, ""
}

// workerID reads the worker's id from path, or makes and stores one.
func workerID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		id := strings.TrimSpace(string(b))
		if !workerIDRe.MatchString(id) {
			return "", fmt.Errorf("%s holds %q, not a worker id (letters, digits, '.', '_', '-'); remove it to get a new one", path, id)
		}
		return id, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	id := randomID()
	if host, _ := os.Hostname(); host != "" {
		host = regexp.MustCompile(`[^A-Za-z0-9.-]`).ReplaceAllString(host, "-")
		if len(host) > 60 {
			host = host[:60]
		}
		id = host + "-" + id
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		return "", err
	}
	return id, nil
}

func randomID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
