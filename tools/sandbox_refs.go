package tools

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Refs and git directories of the shared repository that belong to a
// session (checkout package's names: branch longrun/<name>, checkpoints
// refs/longrun/checkpoints/<name>, worktree directory worktrees/<name>).
const (
	sessionBranches    = "refs/heads/longrun"
	sessionCheckpoints = "refs/longrun/checkpoints"
)

// sandboxRefsDir is where, under the state directory, the worker keeps
// each checkout's filtered packed-refs (sessionGitView).
const sandboxRefsDir = "sandbox-refs"

// sessionGitView is for a checkout that is a worktree of the person's
// repository, as package checkout made them before each session got a
// repository of its own (own.go there; such a checkout has nothing of
// another session's to hide, and gets nothing here). It hides from a
// command in a session's checkout the other sessions' part of the
// repository all checkouts share (checkoutGitDirs binds its common
// directory): their branches, checkpoint refs, reflogs
// and worktree directories (index, HEAD) each get an empty tmpfs, with the
// session's own bound back read-only, and the packed-refs file is
// replaced by a copy without the other sessions' refs. Before, `git show
// refs/longrun/checkpoints/<other>:file` printed another running session's
// uncommitted file. What it cannot hide: the objects, which every checkout
// shares; a command that enumerates them (git cat-file
// --batch-all-objects) still finds other sessions' checkpointed blobs. A
// failure to write the filtered copy is an error: no command runs with
// the other sessions' refs in view.
func sessionGitView(stateDir, root string) (hide []string, back []mount, err error) {
	state := realDir(stateDir)
	binds := checkoutGitDirs(stateDir, root)
	if state == "" || len(binds) == 0 {
		return nil, nil, nil
	}
	common := binds[0]
	rel, _ := filepath.Rel(filepath.Join(state, checkoutsDir), root)
	name := strings.Split(rel, string(filepath.Separator))[0]
	top := filepath.Join(state, checkoutsDir, name)
	b, err := readBounded(filepath.Join(top, ".git"), 4096)
	if err != nil {
		return nil, nil, nil
	}
	own, _ := cutGitdir(string(b))
	addDir := func(dir string) {
		if realDir(dir) == dir {
			hide = append(hide, dir)
		}
	}
	addBack := func(p string) {
		if real, err := filepath.EvalSymlinks(p); err == nil && strictlyUnder(common, real) {
			back = append(back, mount{path: p, src: real})
		}
	}
	for _, dir := range []string{sessionBranches, sessionCheckpoints, "logs/" + sessionBranches, "logs/" + sessionCheckpoints} {
		addDir(filepath.Join(common, filepath.FromSlash(dir)))
	}
	addBack(filepath.Join(common, filepath.FromSlash(sessionBranches), name))
	addBack(filepath.Join(common, filepath.FromSlash(sessionCheckpoints), name))
	if strictlyUnder(filepath.Join(common, "worktrees"), own) {
		addDir(filepath.Join(common, "worktrees"))
		addBack(own)
	}
	packed := filepath.Join(common, "packed-refs")
	if fi, err := os.Lstat(packed); err == nil && fi.Mode().IsRegular() {
		copyPath, err := filteredPackedRefs(state, name, packed)
		if err != nil {
			return nil, nil, err
		}
		back = append(back, mount{path: packed, src: copyPath})
	}
	return hide, back, nil
}

// filteredPackedRefs writes <state>/sandbox-refs/<name>.packed-refs: the
// repository's packed-refs without the other sessions' branches and
// checkpoints (and their peeled lines), replaced atomically so a command
// starting meanwhile reads a whole file.
func filteredPackedRefs(state, name, packed string) (string, error) {
	raw, err := readBounded(packed, 256<<20)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", packed, err)
	}
	var out strings.Builder
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	dropping := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "^") {
			if !dropping {
				out.WriteString(line + "\n")
			}
			continue
		}
		dropping = false
		if _, ref, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") {
			for _, prefix := range []string{sessionBranches + "/", sessionCheckpoints + "/"} {
				if rest, ok := strings.CutPrefix(ref, prefix); ok && rest != name {
					dropping = true
				}
			}
		}
		if !dropping {
			out.WriteString(line + "\n")
		}
	}
	dir := filepath.Join(state, sandboxRefsDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("filter packed-refs: %w", err)
	}
	f, err := os.CreateTemp(dir, name+".packed-refs.*")
	if err != nil {
		return "", fmt.Errorf("filter packed-refs: %w", err)
	}
	_, werr := f.WriteString(out.String())
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	target := filepath.Join(dir, name+".packed-refs")
	if werr == nil {
		werr = os.Rename(f.Name(), target)
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("filter packed-refs: %w", werr)
	}
	return target, nil
}
