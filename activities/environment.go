package activities

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/tools"
)

// Environment is where a session runs: see package contract.
type Environment = contract.Environment

// environment describes the working directory ws. Git is read from the
// files (.git/HEAD, or a worktree's .git file pointing at its git dir),
// never by running git: the workspace's .git/config is the model's to
// write (core.fsmonitor runs a program), and a missing git binary must
// not matter. Anything unreadable is left out, not an error.
func environment(ws *tools.Workspace) *Environment {
	env := &Environment{WorkDir: ws.Root(), OS: osName(), Shell: "bash (the shell tool runs `bash -c`)"}
	for dir := ws.Root(); ; {
		if head, ok := gitHead(dir); ok {
			env.GitRoot = dir
			// Only a branch name or a commit id is kept: a planted .git
			// file may point anywhere, and its HEAD is not for the prompt.
			if ref, ok := strings.CutPrefix(head, "ref: refs/heads/"); ok && len(ref) <= 200 && !strings.ContainsAny(ref, " \t\n") {
				env.Branch = ref
			} else if len(head) >= 40 && strings.Trim(head, "0123456789abcdef") == "" {
				env.Head = head[:7]
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return env
}

// gitHead returns the content of the HEAD of the checkout rooted at dir,
// if dir has a .git directory or a .git file ("gitdir: <path>", as a
// worktree or submodule has).
func gitHead(dir string) (string, bool) {
	dotGit := filepath.Join(dir, ".git")
	fi, err := os.Lstat(dotGit)
	if err != nil {
		return "", false
	}
	gitDir := dotGit
	if fi.Mode().IsRegular() {
		raw, err := os.ReadFile(dotGit)
		if err != nil {
			return "", false
		}
		p, ok := strings.CutPrefix(strings.TrimSpace(string(raw)), "gitdir:")
		if !ok {
			return "", false
		}
		gitDir = strings.TrimSpace(p)
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(dir, gitDir)
		}
	} else if !fi.IsDir() {
		return "", false
	}
	raw, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return "", true // a checkout whose HEAD we cannot read
	}
	return strings.TrimSpace(string(raw)), true
}

// osName is GOOS/GOARCH and, where /etc/os-release names it, the
// distribution: what decides which commands and flags exist.
func osName() string {
	name := runtime.GOOS + "/" + runtime.GOARCH
	raw, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return name
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
			if v = strings.Trim(v, `"'`); v != "" {
				return name + " (" + v + ")"
			}
		}
	}
	return name
}
