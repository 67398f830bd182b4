package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
)

// RootQueue is the task queue of the workers that serve the workspace
// root: shared (the worker's --task-queue), "-root-" and the first 16 hex
// digits of the SHA-256 of the root's cleaned absolute path. Every worker
// polls it for each of its --workspace roots, besides shared; `longrun
// start` run in a directory under a root starts the session there, so
// the session (and the checkout its first activity makes) lands on a
// worker that has that directory. A hash, not the path: a task queue's
// name is short and a path may hold any byte.
func RootQueue(shared, root string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(root)))
	return shared + "-root-" + hex.EncodeToString(sum[:8])
}
