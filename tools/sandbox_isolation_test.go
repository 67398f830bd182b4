package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// requirePasta skips a test that needs pasta, loudly.
func requirePasta(t *testing.T) {
	t.Helper()
	if hostSandbox().sb.pasta == "" {
		t.Skip("network sandbox tests need pasta: install the passt package (.ci/run does)")
	}
}

// requireNoPasta waits, bounded, until no pasta started by this process is
// left: each command's network helper ends with the command.
func requireNoPasta(t *testing.T) {
	t.Helper()
	pastas := func() []int {
		var out []int
		entries, _ := os.ReadDir("/proc")
		for _, en := range entries {
			pid, err := strconv.Atoi(en.Name())
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(filepath.Join("/proc", en.Name(), "stat"))
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...
			s := string(stat)
			end := strings.LastIndexByte(s, ')')
			// pasta is passt's other name: its process is passt or
			// passt.avx2, not pasta.
			if end < 0 || !(strings.Contains(s[:end], "(pasta") || strings.Contains(s[:end], "(passt")) {
				continue
			}
			if f := strings.Fields(s[end+1:]); len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) {
				out = append(out, pid)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(pastas()) == 0 }, 3*time.Second, 20*time.Millisecond,
		"pasta processes left behind: %v", pastas())
}

// runEnv runs command with env in ws, sandbox mode on.
func runEnv(t *testing.T, env Env, command string) Result {
	t.Helper()
	return runTool(t, context.Background(), NewShell(ShellConfig{Sandbox: SandboxOn}), env, ShellParams{Command: command, Timeout: 60})
}

// TestSandboxReadOnly: a command nobody approved runs with the working
// directory read-only, no network even when the session allows it, a
// private /tmp and an empty home; so does a background job.
func TestSandboxReadOnly(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	ws := testWorkspace(t, map[string]string{"keep.txt": "victim\n"})
	env := Env{Workspace: ws, ReadOnlySandbox: true, AllowNetwork: true}

	res := runEnv(t, env, "cat keep.txt; rm -f keep.txt; echo x > new.txt; echo y >> keep.txt")
	require.True(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "victim\n")
	require.Contains(t, res.Content, "Read-only file system")
	got, err := os.ReadFile(filepath.Join(ws.Root(), "keep.txt"))
	require.NoError(t, err)
	require.Equal(t, "victim\n", string(got))
	require.NoFileExists(t, filepath.Join(ws.Root(), "new.txt"))

	res = runEnv(t, env, `echo t > /tmp/x && cat /tmp/x && echo h > "$HOME/x" && cat "$HOME/x" && ip -o route show default | grep -q . || echo no-route`)
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "t\nh\nno-route\n")

	// A background job: the same sandbox.
	jobs := NewJobs()
	t.Cleanup(jobs.Close)
	sh := NewShell(ShellConfig{Sandbox: SandboxOn})
	sh.jobs = jobs
	env.Session, env.JobID = "s-ro", "job-1"
	res = runTool(t, context.Background(), sh, env, ShellParams{Command: "echo z > bg.txt", Background: true})
	require.False(t, res.IsError, res.Content)
	jb, missing := jobs.lookup("s-ro", "job-1")
	require.Nil(t, missing)
	waitEnded(t, jb)
	require.NoFileExists(t, filepath.Join(ws.Root(), "bg.txt"))
	b, _ := os.ReadFile(jb.log.abs)
	require.Contains(t, string(b), "Read-only file system")
}

// TestSandboxReadOnlyFailsClosed: without a working sandbox, a command
// nobody approved does not run at all, foreground or background, whatever
// the mode; it says how to get it run.
func TestSandboxReadOnlyFailsClosed(t *testing.T) {
	t.Parallel()
	missing := probeSandbox(func(string) (string, error) { return "", exec.ErrNotFound })
	for _, mode := range []SandboxMode{SandboxOff, SandboxAuto, SandboxOn} {
		for _, background := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s background=%v", mode, background), func(t *testing.T) {
				t.Parallel()
				ws := testWorkspace(t, nil)
				sh := NewShell(ShellConfig{Sandbox: mode})
				sh.probe = func() sandboxProbe { return missing }
				sh.jobs = NewJobs()
				t.Cleanup(sh.jobs.Close)
				out := filepath.Join(ws.Root(), "ran")
				raw, err := json.Marshal(ShellParams{Command: "touch " + out, Background: background})
				require.NoError(t, err)
				res, err := sh.Run(context.Background(), Env{Workspace: ws, ReadOnlySandbox: true, Session: "s", JobID: "job-1"}, raw)
				require.NoError(t, err)
				require.True(t, res.IsError, res.Content)
				require.Contains(t, res.Content, "no working sandbox")
				require.Contains(t, res.Content, "approve")
				time.Sleep(50 * time.Millisecond)
				require.NoFileExists(t, out)
			})
		}
	}
}

// TestSandboxHidesSockets: unix sockets of the host (under /run, /var/tmp,
// and one elsewhere that the start-up scan finds) cannot be reached from a
// command; before, `--ro-bind / /` left every one of them connectable.
func TestSandboxHidesSockets(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("socket test needs curl to connect to a unix socket")
	}
	serve := func(dir string) string {
		require.NoError(t, os.MkdirAll(dir, 0o755))
		sock := filepath.Join(dir, "s.sock")
		ln, err := net.Listen("unix", sock)
		require.NoError(t, err)
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintln(w, "host-socket-reached")
		})}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { srv.Close(); os.RemoveAll(dir) })
		return sock
	}
	name := randomName(t)
	socks := []string{
		serve(filepath.Join("/var/tmp", name)),
		serve(filepath.Join("/run", name)),
		serve(filepath.Join("/var/lib", name)), // not a socket directory: found by the scan
	}
	// The scan runs at start-up, so this probe is the test's own.
	probe := probeSandbox(exec.LookPath)
	require.NotNil(t, probe.sb, probe.why)
	sh := NewShell(ShellConfig{Sandbox: SandboxOn})
	sh.probe = func() sandboxProbe { return probe }
	ws := testWorkspace(t, nil)
	// A socket the scan found that is gone by the time a command runs
	// must not break the sandbox (bwrap cannot create its mount point on
	// the read-only root).
	gone := serve(filepath.Join("/var/lib", name+"-gone"))
	again := probeSandbox(exec.LookPath)
	require.Contains(t, again.sb.sockets, gone)
	require.NoError(t, os.Remove(gone))
	shGone := NewShell(ShellConfig{Sandbox: SandboxOn})
	shGone.probe = func() sandboxProbe { return again }
	res := runTool(t, context.Background(), shGone, Env{Workspace: ws}, ShellParams{Command: "echo still-works"})
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "still-works\n")

	for _, sock := range socks {
		// The host reaches it: the server works.
		out, err := exec.Command("curl", "-sS", "--unix-socket", sock, "http://x/").CombinedOutput()
		require.NoError(t, err, string(out))
		require.Contains(t, string(out), "host-socket-reached")
		for _, ro := range []bool{false, true} {
			res := runTool(t, context.Background(), sh, Env{Workspace: ws, ReadOnlySandbox: ro},
				ShellParams{Command: "curl -sS -m 5 --unix-socket " + sock + " http://x/"})
			require.True(t, res.IsError, "%s read-only=%v: %s", sock, ro, res.Content)
			require.NotContains(t, res.Content, "host-socket-reached", sock)
		}
	}
}

// TestSandboxControlFiles: .git, .longrun and AGENTS.md at the working
// directory stay read-only for a command that may write everything else;
// so does the git directory a worktree's .git file names.
func TestSandboxControlFiles(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	ws := testWorkspace(t, map[string]string{
		".longrun/permissions.json": "{}\n",
		"AGENTS.md":                 "be nice\n",
		"src/main.go":               "package main\n",
		"wt/.git":                   "gitdir: ../repo-git\n",
		"wt/file":                   "x\n",
		"repo-git/config":           "[core]\n",
	})
	require.NoError(t, exec.Command("git", "init", "-q", ws.Root()).Run())
	for _, cmd := range []string{
		"echo '{\"allow\":[\"*\"]}' > .longrun/permissions.json",
		"echo evil > .longrun/mcp.json",
		"echo evil >> AGENTS.md",
		"rm -f AGENTS.md",
		"git config core.fsmonitor /bin/evil",
		"echo evil > .git/hooks/pre-commit",
		"mv .git git-moved",
	} {
		res := runEnv(t, Env{Workspace: ws}, cmd)
		require.True(t, res.IsError, "%s: %s", cmd, res.Content)
	}
	got, err := os.ReadFile(filepath.Join(ws.Root(), ".longrun", "permissions.json"))
	require.NoError(t, err)
	require.Equal(t, "{}\n", string(got))
	got, err = os.ReadFile(filepath.Join(ws.Root(), "AGENTS.md"))
	require.NoError(t, err)
	require.Equal(t, "be nice\n", string(got))
	require.NoFileExists(t, filepath.Join(ws.Root(), ".longrun", "mcp.json"))
	require.NoFileExists(t, filepath.Join(ws.Root(), ".git", "hooks", "pre-commit"))
	cfg, err := os.ReadFile(filepath.Join(ws.Root(), ".git", "config"))
	require.NoError(t, err)
	require.NotContains(t, string(cfg), "evil")

	// The rest of the working directory is the command's.
	res := runEnv(t, Env{Workspace: ws}, "echo ok >> src/main.go && mkdir -p out && touch out/x")
	require.False(t, res.IsError, res.Content)

	// A linked worktree as the working directory: its .git file is
	// read-only (the git directory it names is outside, read-only anyway).
	sub, err := ws.Sub("wt")
	require.NoError(t, err)
	res = runEnv(t, Env{Workspace: sub}, "echo gitdir: /tmp > .git")
	require.True(t, res.IsError, res.Content)
	res = runEnv(t, Env{Workspace: sub}, "echo x >> ../repo-git/config")
	require.True(t, res.IsError, res.Content)
}

// TestSandboxSessionDirectory: a command of a session working in a
// subdirectory can write there and nowhere else of the workspace.
func TestSandboxSessionDirectory(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	ws := testWorkspace(t, map[string]string{"a/keep": "a\n", "b/keep": "b\n"})
	sub, err := ws.Sub("a")
	require.NoError(t, err)
	// Under /tmp (the test's workspace) the neighbours are not even
	// visible; elsewhere they are, read-only.
	res := runEnv(t, Env{Workspace: sub}, "echo x > mine && echo x > ../b/theirs")
	require.True(t, res.IsError, res.Content)
	require.FileExists(t, filepath.Join(ws.Root(), "a", "mine"))
	require.NoFileExists(t, filepath.Join(ws.Root(), "b", "theirs"))
}

// TestSandboxCommand: the public wrapper runs an arbitrary program (an MCP
// stdio server, say) in the same sandbox, talking over its stdin and
// stdout; without a sandbox it refuses with ErrNoSandbox.
func TestSandboxCommand(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	dir := t.TempDir()
	cfg := Config{Shell: ShellConfig{Sandbox: SandboxOn}}
	c, err := SandboxCommand(cfg, SandboxSpec{
		Argv: []string{"sh", "-c", `read line; echo "got $line $MCP_X $HOME"; echo x > f || echo read-only`},
		Dir:  dir, Root: dir, ReadOnly: true, Env: []string{"MCP_X=set"},
	})
	require.NoError(t, err)
	defer c.Close()
	c.Cmd.Stdin = strings.NewReader("hello\n")
	var out strings.Builder
	c.Cmd.Stdout, c.Cmd.Stderr = &out, &out
	require.NoError(t, c.Start())
	require.Positive(t, c.PID())
	require.NoError(t, c.Wait())
	require.Contains(t, out.String(), "got hello set /")
	require.Contains(t, out.String(), "read-only\n")
	require.NoFileExists(t, filepath.Join(dir, "f"))

	_, err = SandboxCommand(Config{Shell: ShellConfig{Sandbox: SandboxOff}}, SandboxSpec{Argv: []string{"true"}, Dir: dir})
	require.ErrorIs(t, err, ErrNoSandbox)
}
