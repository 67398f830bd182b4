package tools

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// hostileRepo makes a git repository in a new workspace whose
// configuration makes git run evil.sh (in the workspace) from its file
// system monitor, external diff, a textconv driver, a clean and smudge
// filter and an alias. evil.sh prints EVIL-RAN and touches a canary in
// the workspace and one outside it; it returns the workspace and both
// canaries.
func hostileRepo(t *testing.T) (ws *Workspace, canaries []string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git tests need git")
	}
	outside := filepath.Join(t.TempDir(), "canary-outside")
	ws = testWorkspace(t, map[string]string{"a.txt": "hello\n", ".gitattributes": "a.txt filter=evil diff=evil\n"})
	inside := filepath.Join(ws.Root(), "canary-inside")
	evil := filepath.Join(ws.Root(), "evil.sh")
	require.NoError(t, os.WriteFile(evil, []byte("#!/bin/sh\necho EVIL-RAN >&2\ntouch "+inside+" "+outside+"\ncat \"$@\" 2>/dev/null || cat\n"), 0o755))
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = ws.Root()
		cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, string(out))
	}
	git("init", "-q")
	git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "0")
	git("add", "a.txt", ".gitattributes")
	git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "-m", "1")
	for _, kv := range [][2]string{
		{"core.fsmonitor", evil}, {"diff.external", evil}, {"diff.evil.textconv", evil},
		{"filter.evil.clean", evil}, {"filter.evil.smudge", evil}, {"alias.st", "!" + evil},
	} {
		git("config", kv[0], kv[1])
	}
	require.NoError(t, os.WriteFile(filepath.Join(ws.Root(), "a.txt"), []byte("hello\nchanged\n"), 0o644))
	return ws, []string{inside, outside}
}

// TestSandboxGitNeutralised: `git status`, `git diff`, `git log -p` and an
// alias in a repository whose configuration names programs run none of
// them in the sandbox, read-only or writable, and still show the change.
// Unsandboxed (no neutralisation) the same commands run evil.sh: the
// repository is hostile for real.
func TestSandboxGitNeutralised(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	commands := []string{"git status", "git diff", "git log -p", "git diff HEAD", "git st", "git add -n a.txt"}

	ws, canaries := hostileRepo(t)
	ran := 0
	for _, c := range commands {
		res := runTool(t, context.Background(), NewShell(ShellConfig{Sandbox: SandboxOff}), Env{Workspace: ws}, ShellParams{Command: c})
		if strings.Contains(res.Content, "EVIL-RAN") {
			ran++
		}
	}
	require.Equal(t, len(commands), ran, "unsandboxed, every command should run the repository's program")
	for _, c := range canaries {
		require.FileExists(t, c)
	}

	for _, readOnly := range []bool{false, true} {
		ws, canaries := hostileRepo(t)
		for _, c := range commands {
			res := runEnv(t, Env{Workspace: ws, ReadOnlySandbox: readOnly}, c)
			require.NotContains(t, res.Content, "EVIL-RAN", "read-only=%v %s", readOnly, c)
			switch c {
			case "git status":
				require.False(t, res.IsError, res.Content)
				require.Contains(t, res.Content, "modified:   a.txt")
			case "git diff", "git diff HEAD":
				require.False(t, res.IsError, res.Content)
				require.Contains(t, res.Content, "+changed")
			case "git log -p":
				require.False(t, res.IsError, res.Content)
				require.Contains(t, res.Content, "+hello")
			}
		}
		for _, c := range canaries {
			require.NoFileExists(t, c, "read-only=%v", readOnly)
		}
	}
}

func TestGitNeutralEnv(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gitDir := filepath.Join(dir, ".git")
	require.NoError(t, os.MkdirAll(filepath.Join(gitDir, "modules", "sub"), 0o755))
	write := func(name, content string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644))
	}
	write(".git/config", `[core]
	fsmonitor = /x/evil
	sshCommand = "evil ssh" ; comment
[filter "lfs"]
	clean = evil
[diff.Old]
	textconv = evil
[include]
	path = ../inc.cfg
[includeIf "gitdir:/nowhere/"]
	path = /dev/zero
[alias]
	st = !evil
[remote "origin"]
	url = x
	uploadpack = evil
`)
	write("inc.cfg", "[merge \"m\"]\n\tdriver = evil\n")
	write(".git/modules/sub/config", "[diff \"d\"]\n\tcommand = evil\n")
	// A FIFO where a config file should be must not hang the worker.
	require.NoError(t, syscall.Mkfifo(filepath.Join(gitDir, "config.worktree"), 0o644))

	// The working directory's .git is a symlink to the repository: git
	// follows it, so its configuration counts.
	wd := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(wd, "deep", "er"), 0o755))
	require.NoError(t, os.Symlink(gitDir, filepath.Join(wd, ".git")))

	env, err := gitNeutralEnv(filepath.Join(wd, "deep", "er"))
	require.NoError(t, err)
	got := map[string]string{}
	var count string
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if name == "GIT_CONFIG_COUNT" {
			count = value
		}
		if strings.HasPrefix(name, "GIT_CONFIG_KEY_") {
			got[value] = "?"
		}
	}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if i, ok := strings.CutPrefix(name, "GIT_CONFIG_VALUE_"); ok {
			for _, kk := range env {
				if kk2, v2, _ := strings.Cut(kk, "="); kk2 == "GIT_CONFIG_KEY_"+i {
					got[v2] = value
				}
			}
		}
	}
	require.Contains(t, env, "GIT_CONFIG_NOSYSTEM=1")
	require.NotEmpty(t, count)
	want := map[string]string{
		"core.fsmonitor": "false", "core.hooksPath": "/dev/null", "core.pager": "cat",
		"core.sshcommand": "ssh", "filter.lfs.clean": "", "filter.lfs.smudge": "", "filter.lfs.process": "",
		"filter.lfs.required": "false", "diff.old.textconv": "cat", "merge.m.driver": "false",
		"diff.d.command": gitExternalDiff, "alias.st": "", "remote.origin.uploadpack": "git-upload-pack",
	}
	for k, v := range want {
		require.Contains(t, got, k)
		require.Equal(t, v, got[k], k)
	}
}

// TestGitNeutralEnvLimits: a configuration too large or with too many
// includes to read is refused, not half neutralised.
func TestGitNeutralEnvLimits(t *testing.T) {
	t.Parallel()
	loop := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(loop, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(loop, ".git", "config"), []byte("[include]\n\tpath = config\n"), 0o644))
	_, err := gitNeutralEnv(loop)
	require.ErrorContains(t, err, "refusing to run commands")

	big := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(big, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(big, ".git", "config"), []byte("#"+strings.Repeat("x", gitConfigMaxBytes)+"\n"), 0o644))
	_, err = gitNeutralEnv(big)
	require.ErrorContains(t, err, "larger than")

	// The shell says so, and runs nothing.
	if hostSandbox().sb != nil {
		ws, err := NewWorkspace(loop)
		require.NoError(t, err)
		res := runEnv(t, Env{Workspace: ws}, "touch ran")
		require.True(t, res.IsError, res.Content)
		require.Contains(t, res.Content, "refusing to run commands")
		require.NoFileExists(t, filepath.Join(loop, "ran"))
	}
}
