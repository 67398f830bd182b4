package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/longrun/longrun/durable"
)

// workerIDFile holds, in the state directory, the name of the worker that
// keeps its state there: the queue of its checkouts is named after it.
const workerIDFile = "worker-id"

// workerLockFile is held (flock) by the worker process using the state
// directory, so a second process on the same directory knows it is not
// the only one.
const workerLockFile = "worker.lock"

// workerIDRe is what a stored worker id may be: it becomes part of a task
// queue's name.
var workerIDRe = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// ownQueue names the task queue only this worker process polls: the
// shared queue's name, the host and a random suffix, so two workers on one
// host, or one restarted, never share it. Calls about background jobs go
// there: a job dies with its process, so a restarted worker must not be
// asked about it (the call finds nobody and says the worker is gone).
func ownQueue(shared string) string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s-worker-%s-%s", shared, host, randomID())
}

// checkoutQueue names the task queue of the checkouts in this worker's
// state directory: the shared queue's name and the id kept there (made
// once, from the host name and a random suffix). Unlike ownQueue it is
// the same after a restart on the same state directory (a crash, a kill,
// a deploy), because the checkouts are still there: the calls sessions
// pinned to their checkout are picked up again instead of waiting for a
// worker that will never come. A second process on a state directory
// another one holds (the flock, freed by the kernel when the holder dies,
// even by SIGKILL) gets a random queue, as before, and says so.
func checkoutQueue(shared, stateDir string) (queue string, release func(), note string) {
	release = func() {}
	if stateDir == "" {
		return shared + "-checkouts-" + randomID(), release, "no state directory: the queue of this worker's checkouts is new at every start"
	}
	unlock, err := lockStateDir(filepath.Join(stateDir, workerLockFile))
	if err != nil {
		return shared + "-checkouts-" + randomID(), release, fmt.Sprintf("another worker process uses the state directory %s (%v): this one gets a queue for its checkouts that is new at every start, so its sessions' calls are lost with it; give each worker a state directory of its own", stateDir, err)
	}
	id, err := workerID(filepath.Join(stateDir, workerIDFile))
	if err != nil {
		unlock()
		return shared + "-checkouts-" + randomID(), release, fmt.Sprintf("worker id: %v: the queue of this worker's checkouts is new at every start", err)
	}
	return shared + "-checkouts-" + id, unlock, ""
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
	// The id must outlast a power loss of the machine: its sessions'
	// calls wait on the queue named after it, and an id lost (or left
	// empty, which is refused) would start the worker on a new queue.
	if err := (durable.Writer{}).WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", err
	}
	return id, nil
}

func randomID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%x", b)
}
