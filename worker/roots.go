package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/workflows"
)

// rootList is --workspace, which may be given more than once: the roots
// of the directories people start sessions in. The first is the default:
// a session started without a directory (a script, a schedule, the
// temporal CLI) works there, as it did when there was only one.
// LONGRUN_WORKSPACE (else ".") stands until the first flag replaces it.
type rootList struct {
	dirs []string
	set  bool // a flag was given: LONGRUN_WORKSPACE no longer counts
}

func (r *rootList) String() string { return strings.Join(r.dirs, ",") }

func (r *rootList) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("an empty workspace root")
	}
	if !r.set {
		r.dirs, r.set = nil, true
	}
	r.dirs = append(r.dirs, v)
	return nil
}

// servedRoot is one workspace root the worker serves: the sessions
// started under it run on its task queues with activities confined to it.
type servedRoot struct {
	ws *tools.Workspace
	// given is the root as the flag spelled it, made absolute (it may
	// lead through a symlink); ws.Root() is its real path.
	given string
	// cfg is what the worker's configuration says for this root (trust,
	// MCP servers, notes).
	cfg workerConfig
	// tools is the tool configuration for sessions under this root (what
	// their sandboxes hide, whether their skills are read).
	tools tools.Config
}

// queues are the task queues of the root (workflows.RootQueue) under
// shared: one for its real path and, when the flag named it through a
// symlink, one for that spelling too, so `longrun start` finds it
// whichever way the person's shell names the directory.
func (r servedRoot) queues(shared string) []string {
	q := []string{workflows.RootQueue(shared, r.ws.Root())}
	if r.given != r.ws.Root() {
		q = append(q, workflows.RootQueue(shared, r.given))
	}
	return q
}

// openRoots opens every --workspace root, each on its own (a check one
// root must pass runs here, per root), and drops a root named twice.
func openRoots(dirs []string) ([]servedRoot, error) {
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	var out []servedRoot
	seen := map[string]bool{}
	for _, d := range dirs {
		ws, err := tools.NewWorkspace(d)
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		if seen[ws.Root()] {
			continue
		}
		seen[ws.Root()] = true
		given, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("workspace %s: %w", d, err)
		}
		out = append(out, servedRoot{ws: ws, given: filepath.Clean(given)})
	}
	return out, nil
}

// rootCheckoutQueue is the queue of the checkouts made from root i: the
// first root keeps the name a worker with one root always had (sessions
// pinned to it before an upgrade find it), the others get their root's
// hash on it, so a pinned call reaches the activities of its own root.
func rootCheckoutQueue(checkouts string, i int, r servedRoot) string {
	if i == 0 {
		return checkouts
	}
	return workflows.RootQueue(checkouts, r.ws.Root())
}
