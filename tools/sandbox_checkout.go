package tools

import (
	"os"
	"path/filepath"
	"strings"
)

// checkoutsDir is where a worker keeps sessions' own checkouts, under its
// state directory (package checkout's Dir; not imported, to keep tools
// free of it).
const checkoutsDir = "checkouts"

// checkoutGitDirs are the git directories a session's own checkout needs
// inside the sandbox, bound read-only. A checkout that is a repository of
// its own (package checkout now makes them so): ownRepoGitDirs. A
// worktree of the person's repository (made before): the repository's
// common directory (objects, refs) and, through it, the checkout's own
// (HEAD, index) that its .git file names. Only a root inside the worker's checkouts directory
// gets them: those .git files were written by git worktree add for the
// worker, and are bound read-only over themselves (controlFiles), so a
// command cannot point them somewhere else. The checkout itself is the
// writable root; the state directory around it, and so every other
// session's checkout, stays hidden. git inside can read (status, diff,
// log) but not commit: the session's changes are committed by the worker
// at its end. Anywhere else: none.
func checkoutGitDirs(stateDir, root string) []string {
	state := realDir(stateDir)
	if state == "" || root == "" {
		return nil
	}
	base := filepath.Join(state, checkoutsDir)
	rel, err := filepath.Rel(base, root)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return nil
	}
	top := filepath.Join(base, strings.Split(rel, string(filepath.Separator))[0])
	if fi, err := os.Lstat(filepath.Join(top, ".git")); err == nil && fi.IsDir() {
		return ownRepoGitDirs(top, root)
	}
	b, err := readBounded(filepath.Join(top, ".git"), 4096)
	if err != nil {
		return nil
	}
	g, ok := cutGitdir(string(b))
	if !ok || !filepath.IsAbs(g) {
		return nil
	}
	common := g
	if c, err := readBounded(filepath.Join(g, "commondir"), 4096); err == nil {
		common = strings.TrimSpace(string(c))
		if !filepath.IsAbs(common) {
			common = filepath.Join(g, common)
		}
	}
	var out []string
	if d := realDir(common); d != "" && d != "/" {
		out = append(out, d)
	}
	if top != root {
		out = append(out, filepath.Join(top, ".git")) // the file git finds from root upwards
	}
	return out
}

// maxAlternates bounds the object directories followed through
// objects/info/alternates (git itself stops at 5 levels).
const maxAlternates = 16

// ownRepoGitDirs are what a checkout that is a repository of its own
// needs beyond itself: the object directories its
// objects/info/alternates names (the person's object store, and the ones
// that one borrows from), and its .git when root is below its top (the
// state directory around the top is hidden). Only object directories:
// the person's refs, configuration and hooks stay out of view, and every
// other session's objects and refs are in that session's own repository,
// which this sandbox never sees. The checkout's .git is a control file,
// bound read-only over itself (controlFiles), so a command can neither
// commit nor point alternates anywhere else.
func ownRepoGitDirs(top, root string) []string {
	var out []string
	seen := map[string]bool{}
	queue := []string{filepath.Join(top, ".git", "objects")}
	for len(queue) > 0 && len(out) < maxAlternates {
		objects := queue[0]
		queue = queue[1:]
		b, err := readBounded(filepath.Join(objects, "info", "alternates"), 64<<10)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			line = strings.TrimSpace(line)
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if !filepath.IsAbs(line) {
				line = filepath.Join(objects, line)
			}
			d := realDir(line)
			if d == "" || d == "/" || seen[d] || len(out) >= maxAlternates {
				continue
			}
			seen[d] = true
			out = append(out, d)
			queue = append(queue, d)
		}
	}
	if top != root {
		out = append(out, filepath.Join(top, ".git"))
	}
	return out
}
