package tools

import (
	"path/filepath"
	"strings"
)

// checkoutsDir is where a worker keeps sessions' own checkouts, under its
// state directory (package checkout's Dir; not imported, to keep tools
// free of it).
const checkoutsDir = "checkouts"

// checkoutGitDirs are the git directories a session's own checkout needs
// inside the sandbox, bound read-only: the repository's common directory
// (objects, refs) and, through it, the checkout's own (HEAD, index) that
// its .git file names. Only a root inside the worker's checkouts directory
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
