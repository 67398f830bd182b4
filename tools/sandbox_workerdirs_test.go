package tools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// visibleBase returns a writable directory the sandbox would show
// without the worker's directories hidden: outside the home, /tmp and the
// socket directories, where a state or config directory such as
// /var/lib/longrun lives. It skips loudly when there is none.
func visibleBase(t *testing.T) string {
	t.Helper()
	for _, dir := range []string{"/var/cache", "/var/lib"} {
		real := realDir(dir)
		if real == "" || hostSandbox().sb.hidden(real+"/x") {
			continue
		}
		f, err := os.CreateTemp(real, "longrun-probe-")
		if err != nil {
			continue
		}
		f.Close()
		os.Remove(f.Name())
		return real
	}
	t.Skip("hiding the worker's directories is tested in /var/cache or /var/lib, and neither is writable here (run as root, as .ci/run does)")
	return ""
}

// TestSandboxHidesWorkerDirs: the worker's state directory (every
// session's transcripts, job logs, spills) and config directory (its
// permission rules, its MCP servers' secrets) are hidden from every
// sandboxed command, read-only or approved, also where no other hidden
// directory covers them; the sandbox's Go build cache under the state
// directory still works and is the one on the host. Before they were
// hidden, ls listed the planted files and cat printed them.
func TestSandboxHidesWorkerDirs(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	base := visibleBase(t)
	// The state directory is kept between runs, as the go-build test
	// keeps its own, so its build cache is cold only once.
	state := filepath.Join(base, "longrun-test-state")
	require.NoError(t, os.MkdirAll(state, 0o700))
	config, err := os.MkdirTemp(base, "longrun-test-config-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(config) })
	mark := randomName(t)
	planted := map[string]string{
		filepath.Join(state, "sessions", mark, "jobs", "job-1.log"): "state-secret-" + mark,
		filepath.Join(config, "permissions.json"):                   "config-secret-" + mark,
	}
	for p, content := range planted {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o700))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Join(state, "sessions", mark)) })

	ws := testWorkspace(t, map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.26\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built in the sandbox\") }\n",
	})
	sh := NewShell(ShellConfig{Sandbox: SandboxOn})
	sh.stateDir, sh.configDir = state, config
	run := func(readOnly bool, command string) Result {
		return runTool(t, context.Background(), sh, Env{Workspace: ws, ReadOnlySandbox: readOnly}, ShellParams{Command: command, Timeout: 300})
	}
	var look []string
	for p := range planted {
		look = append(look, "ls -AR "+filepath.Dir(p)+"; cat "+p)
	}
	look = append(look, "ls -A "+state+" "+config)
	for _, readOnly := range []bool{true, false} {
		res := run(readOnly, strings.Join(look, "; "))
		for p, content := range planted {
			require.NotContains(t, res.Content, content, "read-only %v", readOnly)
			require.NotContains(t, res.Content, filepath.Base(p)+"\n", "read-only %v", readOnly)
		}
		require.NotContains(t, res.Content, "\nsessions\n", "read-only %v", readOnly)
	}

	if hostSandbox().sb.goModCache == "" {
		t.Log("no go command on PATH for the sandbox to find: the Go build under a hidden state directory is not tested")
		return
	}
	// The build cache is bound back over the hidden state directory: what
	// the command writes there is on the host, so the next build is warm.
	res := run(false, `go build -o hello . && ./hello && touch "$(go env GOCACHE)/`+mark+`"`)
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "built in the sandbox\n")
	cached := filepath.Join(state, "go-build", mark)
	t.Cleanup(func() { os.Remove(cached) })
	require.FileExists(t, cached)
}

// TestSandboxHidesHidePaths: the other files and directories the worker
// knows about (Config.HidePaths: a key file, a checkpoint remote, a
// transcript store) are hidden from shell commands and from
// SandboxCommand's (MCP servers'): a file reads empty, a directory is
// empty. Before, cat printed the key line and ls the remote's refs.
func TestSandboxHidesHidePaths(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	base := visibleBase(t)
	mark := randomName(t)
	keys := filepath.Join(base, "longrun-test-keys-"+mark)
	require.NoError(t, os.WriteFile(keys, []byte("k1=key-secret-"+mark+"\n"), 0o600))
	t.Cleanup(func() { os.Remove(keys) })
	remote, err := os.MkdirTemp(base, "longrun-test-remote-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(remote) })
	require.NoError(t, os.WriteFile(filepath.Join(remote, "packed-refs"), []byte("remote-secret-"+mark), 0o600))

	look := "cat " + keys + "; ls -A " + remote + "; cat " + remote + "/packed-refs; true"
	ws := testWorkspace(t, nil)
	sh := NewShell(ShellConfig{Sandbox: SandboxOn})
	sh.hidePaths = []string{keys, remote}
	for _, readOnly := range []bool{true, false} {
		res := runTool(t, context.Background(), sh, Env{Workspace: ws, ReadOnlySandbox: readOnly}, ShellParams{Command: look})
		require.NotContains(t, res.Content, "secret-"+mark, "read-only %v", readOnly)
		require.NotContains(t, res.Content, "packed-refs\n", "read-only %v", readOnly)
	}
	c, err := SandboxCommand(Config{Shell: ShellConfig{Sandbox: SandboxOn}, HidePaths: []string{keys, remote}},
		SandboxSpec{Argv: []string{"sh", "-c", look}, Dir: ws.Root(), Root: ws.Root(), ReadOnly: true})
	require.NoError(t, err)
	defer c.Close()
	var out strings.Builder
	c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
	require.NoError(t, c.Start())
	require.NoError(t, c.Wait())
	require.NotContains(t, out.String(), "secret-"+mark)
}
