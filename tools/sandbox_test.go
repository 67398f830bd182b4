package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// requireSandbox skips a test that needs bwrap working on this machine.
func requireSandbox(t *testing.T) {
	t.Helper()
	if p := hostSandbox(); p.sb == nil {
		t.Skipf("sandbox tests need bwrap: %s (install the bubblewrap package; .ci/run does)", p.why)
	}
}

// sandboxed runs command in the sandbox (mode on) in ws.
func sandboxed(t *testing.T, ws *Workspace, allowNetwork bool, command string) Result {
	t.Helper()
	return runTool(t, context.Background(), NewShell(ShellConfig{Sandbox: SandboxOn}),
		Env{Workspace: ws, AllowNetwork: allowNetwork}, ShellParams{Command: command, Timeout: 60})
}

func TestSandboxFileSystem(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	ws := testWorkspace(t, map[string]string{"sub/keep.txt": "x"})
	mark := randomName(t)

	t.Cleanup(func() { os.Remove("/etc/" + mark) })
	res := sandboxed(t, ws, false, "touch /etc/"+mark)
	require.True(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "Read-only file system")
	require.NoFileExists(t, "/etc/"+mark)
	// A worker running as root must not hand its capabilities to the
	// command: with them, remounting / read-write would undo the sandbox.
	res = sandboxed(t, ws, false, "mount -o remount,rw / 2>/dev/null; touch /etc/"+mark)
	require.True(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "Read-only file system")
	require.NoFileExists(t, "/etc/"+mark)

	res = sandboxed(t, ws, false, "echo hello > sub/out.txt && mkdir -p new/dir && touch new/dir/f && cat sub/keep.txt")
	require.False(t, res.IsError, res.Content)
	got, err := os.ReadFile(filepath.Join(ws.Root(), "sub", "out.txt"))
	require.NoError(t, err)
	require.Equal(t, "hello\n", string(got))
	require.FileExists(t, filepath.Join(ws.Root(), "new", "dir", "f"))

	// The workspace lives under the host's /tmp (t.TempDir), which the
	// sandbox replaces: it stays visible because it is mounted on top.
	// Anything else in /tmp is not, and what a command leaves in its /tmp
	// never reaches the host's.
	hostFile, err := os.CreateTemp("", "longrun-host-*")
	require.NoError(t, err)
	hostFile.Close()
	t.Cleanup(func() { os.Remove(hostFile.Name()) })
	res = sandboxed(t, ws, false, fmt.Sprintf("test ! -e %s && echo host-tmp-hidden; echo x > /tmp/%s && cat /tmp/%s", hostFile.Name(), mark, mark))
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "host-tmp-hidden\nx\n")
	require.NoFileExists(t, filepath.Join("/tmp", mark))
	require.NoFileExists(t, filepath.Join(os.TempDir(), mark))
}

func TestSandboxHidesHome(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	ws := testWorkspace(t, nil)
	mark := randomName(t)
	t.Cleanup(func() { os.Remove(filepath.Join(home, mark)) })

	// Writing to ~ works (a tmpfs) but never reaches the real home.
	res := sandboxed(t, ws, false, "touch ~/"+mark+" && test -e ~/"+mark+" && echo made")
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "made\n")
	require.NoFileExists(t, filepath.Join(home, mark))

	// A credential in the real home cannot be read.
	secret, err := os.CreateTemp(home, ".longrun-sandbox-test-*")
	if err != nil {
		t.Logf("home %s not writable, credential check skipped: %v", home, err)
		return
	}
	_, _ = secret.WriteString("hunter2")
	secret.Close()
	t.Cleanup(func() { os.Remove(secret.Name()) })
	res = sandboxed(t, ws, false, "cat "+secret.Name())
	require.True(t, res.IsError, res.Content)
	require.NotContains(t, res.Content, "hunter2")
	require.Contains(t, res.Content, "No such file or directory")
}

// TestSandboxNetwork: without the network a command reaches nothing;
// with it (pasta), still not the host's loopback, where the Temporal
// frontend and its Web UI listen. Before pasta the sandbox shared the
// host's network, and the second connect printed "hello from the host".
//
// Not parallel, like every test that starts pasta, so requireNoPasta sees
// only its own.
func TestSandboxNetwork(t *testing.T) {
	requireSandbox(t)
	requirePasta(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("hello from the host\n"))
			c.Close()
		}
	}()
	ws := testWorkspace(t, nil)
	connect := fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && cat <&3", ln.Addr().(*net.TCPAddr).Port)

	for _, network := range []bool{false, true} {
		res := sandboxed(t, ws, network, connect)
		require.True(t, res.IsError, res.Content)
		require.Contains(t, res.Content, "Connection refused", "network %v", network)
		require.NotContains(t, res.Content, "hello from the host")
	}
	// The sandbox has a network of its own: an interface besides lo with
	// a default route.
	res := sandboxed(t, ws, true, "ip -o route show default | grep -q . && echo has-route")
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "has-route\n")
	requireNoPasta(t)
}

func TestSandboxGoBuild(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	if hostSandbox().sb.goModCache == "" {
		t.Skip("no go command on PATH for the sandbox to find")
	}
	ws := testWorkspace(t, map[string]string{
		"go.mod":  "module example.com/hello\n\ngo 1.26\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built in the sandbox\") }\n",
	})
	// The sandbox's build cache, kept between test runs: a cold one costs
	// a minute of compiling the standard library.
	cache, err := os.UserCacheDir()
	require.NoError(t, err)
	sh := NewShell(ShellConfig{Sandbox: SandboxOn})
	sh.stateDir = filepath.Join(cache, "longrun-test-state")
	sandboxed := func(t *testing.T, ws *Workspace, network bool, command string) Result {
		return runTool(t, context.Background(), sh, Env{Workspace: ws, AllowNetwork: network}, ShellParams{Command: command, Timeout: 300})
	}
	res := sandboxed(t, ws, false, "go build -o hello . && ./hello")
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "built in the sandbox\n")
	require.FileExists(t, filepath.Join(ws.Root(), "hello"))

	// The module cache is read-only without the network, writable with it.
	probe := `f="$(go env GOMODCACHE)/` + randomName(t) + `" && touch "$f" && rm "$f" && echo writable`
	res = sandboxed(t, ws, false, probe)
	require.True(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "Read-only file system")
	if hostSandbox().sb.pasta != "" {
		res = sandboxed(t, ws, true, probe)
		require.False(t, res.IsError, res.Content)
		require.Contains(t, res.Content, "writable\n")
	}

	// The build cache is the worker's own, never the host's, which the
	// person's own builds trust.
	hostCache, err := exec.Command("go", "env", "GOCACHE").Output()
	require.NoError(t, err)
	res = sandboxed(t, ws, false, "go env GOCACHE")
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, filepath.Join(sh.stateDir, "go-build")+"\n")
	require.NotContains(t, res.Content, strings.TrimSpace(string(hostCache))+"\n")
	res = sandboxed(t, ws, false, "touch "+strings.TrimSpace(string(hostCache))+"/"+randomName(t))
	require.True(t, res.IsError, res.Content)

	// A command nobody approved builds with a cache of its own, and cannot
	// write the one approved commands use.
	readOnly := func(command string) Result {
		return runTool(t, context.Background(), sh, Env{Workspace: ws, ReadOnlySandbox: true}, ShellParams{Command: command, Timeout: 300})
	}
	res = readOnly("go env GOCACHE && touch " + filepath.Join(sh.stateDir, "go-build", randomName(t)))
	require.True(t, res.IsError, res.Content)
	require.Contains(t, res.Content, filepath.Join(sh.stateDir, "go-build-unapproved")+"\n")
	res = readOnly("go build -o /tmp/hello . && /tmp/hello")
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "built in the sandbox\n")
}

// A process that leaves the command's process group (setsid) is beyond
// the group kill; in the sandbox it still dies, with the pid namespace.
// The sandbox's /proc shows only its own processes, so it cannot read the
// worker's environment (which holds its API keys) from /proc/PID/environ.
func TestSandboxProcesses(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	ws := testWorkspace(t, nil)
	mark := randomName(t)
	host := exec.Command("bash", "-c", "sleep 60; : "+mark+"-host")
	require.NoError(t, host.Start())
	t.Cleanup(func() { _ = host.Process.Kill(); _ = host.Wait() })

	// "[l]ongrun..." matches the marker but not itself, so grep and the
	// command's own bash do not count.
	res := sandboxed(t, ws, false, fmt.Sprintf(
		`setsid bash -c 'sleep 60; : %s-escaped' & grep -lsa '[%s]%s-host' /proc/[0-9]*/cmdline || echo host-processes-hidden`,
		mark, mark[:1], mark[1:]))
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "host-processes-hidden\n")
	requireEventuallyNone(t, mark+"-escaped")
}

// requireEventuallyNone waits for no live process to have s in its command
// line.
func requireEventuallyNone(t *testing.T, s string) {
	t.Helper()
	alive := func() []int {
		var out []int
		entries, _ := os.ReadDir("/proc")
		for _, en := range entries {
			cmd, err := os.ReadFile(filepath.Join("/proc", en.Name(), "cmdline"))
			var pid int
			if _, perr := fmt.Sscan(en.Name(), &pid); perr == nil && err == nil && strings.Contains(string(cmd), s) && pidAlive(pid) {
				out = append(out, pid)
			}
		}
		return out
	}
	require.Eventually(t, func() bool { return len(alive()) == 0 }, 3*time.Second, 20*time.Millisecond,
		"processes with %q survived: %v", s, alive())
}

func TestSandboxModes(t *testing.T) {
	t.Parallel()
	missing := func(string) (string, error) { return "", exec.ErrNotFound }
	broken := func(name string) (string, error) {
		if name == "bwrap" {
			return "/bin/false", nil
		}
		return exec.LookPath(name)
	}
	tests := []struct {
		name     string
		mode     SandboxMode
		lookPath func(string) (string, error)
		wantErr  string // Run fails with this; "" means the command runs unsandboxed
		wantWhy  string
	}{
		{name: "on without bwrap", mode: SandboxOn, lookPath: missing, wantErr: "sandbox unavailable: sandbox mode on, but bwrap (bubblewrap) is not installed"},
		{name: "on with a broken bwrap", mode: SandboxOn, lookPath: broken, wantErr: "/bin/false does not work here"},
		{name: "auto without bwrap falls back", mode: SandboxAuto, lookPath: missing, wantWhy: "bwrap (bubblewrap) is not installed"},
		{name: "empty mode is auto", mode: "", lookPath: broken, wantWhy: "/bin/false does not work here"},
		{name: "off even with bwrap", mode: SandboxOff, lookPath: exec.LookPath, wantWhy: "sandbox mode off"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			probe := probeSandbox(tt.lookPath)
			sb, why, resolveErr := resolveSandbox(tt.mode, probe)
			require.Nil(t, sb)
			sh := NewShell(ShellConfig{Sandbox: tt.mode})
			sh.probe = func() sandboxProbe { return probe }
			ws := testWorkspace(t, nil)
			// Unsandboxed, the command writes to the host's /tmp.
			out := filepath.Join(t.TempDir(), "ran")
			raw, err := json.Marshal(ShellParams{Command: "echo ok > " + out})
			require.NoError(t, err)
			res, runErr := sh.Run(context.Background(), Env{Workspace: ws}, raw)
			if tt.wantErr != "" {
				require.ErrorIs(t, resolveErr, ErrSandboxUnavailable)
				require.ErrorContains(t, resolveErr, tt.wantErr)
				require.ErrorIs(t, runErr, ErrSandboxUnavailable)
				require.NoFileExists(t, out, "a required sandbox must not fall back")
				return
			}
			require.NoError(t, resolveErr)
			require.Contains(t, why, tt.wantWhy)
			require.NoError(t, runErr)
			require.False(t, res.IsError, res.Content)
			require.FileExists(t, out)
		})
	}
}

func TestCheckSandbox(t *testing.T) {
	t.Parallel()
	sandboxed, why, err := CheckSandbox(ShellConfig{Sandbox: SandboxOff})
	require.NoError(t, err)
	require.False(t, sandboxed)
	require.Contains(t, why, "off")

	p := hostSandbox()
	sandboxed, why, err = CheckSandbox(ShellConfig{Sandbox: SandboxAuto})
	require.NoError(t, err)
	require.Equal(t, p.sb != nil, sandboxed)
	require.Equal(t, p.why, why)
	_, _, err = CheckSandbox(ShellConfig{Sandbox: SandboxOn})
	require.Equal(t, p.sb == nil, errors.Is(err, ErrSandboxUnavailable))
}

func TestParseSandboxMode(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]SandboxMode{"": SandboxAuto, "auto": SandboxAuto, "ON": SandboxOn, " off ": SandboxOff} {
		got, err := ParseSandboxMode(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := ParseSandboxMode("yes")
	require.ErrorContains(t, err, `sandbox mode "yes": want auto, on or off`)
}

// TestSandboxArgs checks the mount order, which decides what is visible:
// a later mount hides what is under it.
func TestSandboxArgs(t *testing.T) {
	t.Parallel()
	sb := &sandbox{
		bwrap:      "bwrap",
		hide:       []string{"/home/u", "/run/user/1000", "/run"},
		visible:    []string{"/home/u/sdk/go/bin"},
		goModCache: "/home/u/go/pkg/mod",
	}
	tests := []struct {
		name     string
		root     string
		network  bool
		readOnly bool
		modCache string
		// hideFiles and programs are sandboxRun's.
		hideFiles []string
		programs  []mount
		order     [][]string // these argument runs appear in this order
		absent    []string   // "flag path" pairs that must not appear
	}{
		{name: "workspace under home", root: "/home/u/proj", order: [][]string{
			{"--tmpfs", "/home/u"}, {"--bind", "/home/u/proj", "/home/u/proj"},
			{"--ro-bind", "/home/u/sdk/go/bin", "/home/u/sdk/go/bin"}, {"--ro-bind", "/home/u/go/pkg/mod", "/home/u/go/pkg/mod"},
			{"--bind", "/home/u/.cache/longrun/go-build", "/home/u/.cache/longrun/go-build"},
			{"--chdir", "/home/u/proj/sub", "--", "bash", "-c", "true"},
		}},
		{name: "workspace under tmp", root: "/tmp/ws", order: [][]string{{"--unshare-net"}, {"--tmpfs", "/tmp"}, {"--bind", "/tmp/ws", "/tmp/ws"}}},
		{name: "workspace is the home", root: "/home/u", order: [][]string{{"--tmpfs", "/home/u"}, {"--bind", "/home/u", "/home/u"}}},
		{name: "home inside the workspace", root: "/", order: [][]string{{"--bind", "/", "/"}, {"--tmpfs", "/tmp"}, {"--tmpfs", "/home/u"}}},
		// The host's module cache is read-only even to a command that may
		// download: that one gets the worker's own, writable.
		{name: "network allowed", root: "/srv/ws", network: true, modCache: "/var/lib/longrun/go-mod", order: [][]string{
			{"--unshare-net"}, {"--bind", "/var/lib/longrun/go-mod", "/var/lib/longrun/go-mod"}, {"--ro-bind", "/home/u/go/pkg/mod", "/home/u/go/pkg/mod"},
		}, absent: []string{"--bind /home/u/go/pkg/mod"}},
		{name: "worker files hidden", root: "/srv/ws", hideFiles: []string{"/etc/longrun/keys"}, programs: []mount{{path: "/tmp/bin/gopls", src: "/tmp/bin/gopls"}}, order: [][]string{
			{"--tmpfs", "/tmp"}, {"--ro-bind", "/dev/null", "/etc/longrun/keys"}, {"--ro-bind", "/tmp/bin/gopls", "/tmp/bin/gopls"},
		}},
		{name: "read-only", root: "/srv/ws", readOnly: true, order: [][]string{
			{"--tmpfs", "/run"}, {"--ro-bind", "/srv/ws", "/srv/ws"},
			{"--ro-bind", "/dev/null", "/srv/app/s.sock"}, {"--ro-bind", "/srv/ws/.git", "/srv/ws/.git"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args := sb.args(sandboxRun{root: tt.root, dir: "/home/u/proj/sub", network: tt.network, readOnly: tt.readOnly,
				goCache: "/home/u/.cache/longrun/go-build", modCache: tt.modCache, hideFiles: tt.hideFiles, programs: tt.programs,
				protect: []string{tt.root + "/.git"}, sockets: []string{"/srv/app/s.sock"},
				infoFD: 3, blockFD: -1, argv: []string{"bash", "-c", "true"}})
			require.Equal(t, []string{"--ro-bind", "/", "/"}, args[:3])
			require.Contains(t, args, "--cap-drop")
			require.Contains(t, args, "--new-session")
			require.Contains(t, args, "--die-with-parent")
			require.Contains(t, args, "--unshare-pid")
			at := 0
			for _, run := range tt.order {
				i := indexRun(args[at:], run)
				require.GreaterOrEqual(t, i, 0, "%v not found after position %d in %v", run, at, args)
				at += i + len(run)
			}
			for _, a := range tt.absent {
				require.Equal(t, -1, indexRun(args, strings.Fields(a)), "%s in %v", a, args)
			}
		})
	}
}

func indexRun(args, run []string) int {
	for i := range args {
		if i+len(run) <= len(args) && slices.Equal(args[i:i+len(run)], run) {
			return i
		}
	}
	return -1
}

func randomName(t *testing.T) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "longrun-sandbox-")
	require.NoError(t, err)
	f.Close()
	return filepath.Base(f.Name())
}

func TestCheckSandboxNetwork(t *testing.T) {
	t.Parallel()
	ok, why := CheckSandboxNetwork(ShellConfig{Sandbox: SandboxOff})
	require.False(t, ok)
	require.Contains(t, why, "off")
	p := hostSandbox()
	ok, _ = CheckSandboxNetwork(ShellConfig{Sandbox: SandboxAuto})
	require.Equal(t, p.sb != nil && p.sb.pasta != "", ok)
}
