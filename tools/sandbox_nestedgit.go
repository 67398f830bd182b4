package tools

import (
	"os"
	"path/filepath"
	"strings"
)

// Bounds of the walk for nested .git entries, which runs before every
// sandboxed command: a workspace of a few thousand directories costs a
// few milliseconds, and a huge tree (a home directory, a monorepo with
// node_modules) must not cost every command seconds or give bwrap
// thousands of mounts. The walk is breadth first, so what it misses past
// the bound is the deepest; what it misses is still a control path for
// every file tool and is never recorded by the worker's git.
const (
	nestedGitMaxEntries = 20000
	nestedGitMaxFound   = 64
)

// nestedGitEntries are the .git entries (directories, files, symlinks)
// below root but not at its top, breadth first, within the bounds above:
// a .git directory is not walked into, nor is a symlink followed.
func nestedGitEntries(root string) []string {
	var found []string
	queue := []string{root}
	seen := 0
	for len(queue) > 0 && seen < nestedGitMaxEntries && len(found) < nestedGitMaxFound {
		dir := queue[0]
		queue = queue[1:]
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			seen++
			p := filepath.Join(dir, e.Name())
			if strings.EqualFold(e.Name(), ".git") {
				if dir != root && len(found) < nestedGitMaxFound {
					found = append(found, p)
				}
				continue
			}
			if e.IsDir() {
				queue = append(queue, p)
			}
		}
	}
	return found
}
