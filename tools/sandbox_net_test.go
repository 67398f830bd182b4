package tools

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// testHost makes a host outside this machine's loopback: a network
// namespace with one end of a veth pair (10.213.N.2/24; this side is
// .1), and an HTTP server listening there that answers body. It returns
// the server's URL. It needs root (ip netns add); without it the test is
// skipped, loudly.
func testHost(t *testing.T, body string) string {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("network test needs ip (iproute2) to make a test host")
	}
	n := 1 + rand.IntN(250)
	tag := fmt.Sprintf("%d%03d", os.Getpid()%10000, n)
	ns, host, peer := "lrt"+tag, "lrh"+tag, "lrp"+tag
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := ip("netns", "add", ns); err != nil {
		t.Skipf("SKIPPED LOUDLY: cannot make a test host, ip netns add is not permitted here: %v", err)
	}
	t.Cleanup(func() { _ = ip("netns", "del", ns) })
	require.NoError(t, ip("link", "add", host, "type", "veth", "peer", "name", peer))
	t.Cleanup(func() { _ = ip("link", "del", host) })
	hostAddr, peerAddr := fmt.Sprintf("10.213.%d.1", n), fmt.Sprintf("10.213.%d.2", n)
	for _, args := range [][]string{
		{"link", "set", peer, "netns", ns},
		{"addr", "add", hostAddr + "/24", "dev", host},
		{"link", "set", host, "up"},
		{"-n", ns, "addr", "add", peerAddr + "/24", "dev", peer},
		{"-n", ns, "link", "set", peer, "up"},
		{"-n", ns, "link", "set", "lo", "up"},
	} {
		require.NoError(t, ip(args...))
	}
	ln := listenInNetns(t, "/run/netns/"+ns, peerAddr+":0")
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, body) })}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return "http://" + ln.Addr().String() + "/"
}

// listenInNetns opens a TCP listener inside the network namespace at
// nsPath: a socket belongs to the namespace it was made in, so a thread
// enters it, listens, and is then thrown away (never unlocked).
func listenInNetns(t *testing.T, nsPath, addr string) net.Listener {
	t.Helper()
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread dies with this goroutine
		f, err := os.Open(nsPath)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer f.Close()
		if _, _, errno := syscall.RawSyscall(unix.SYS_SETNS, f.Fd(), syscall.CLONE_NEWNET, 0); errno != 0 {
			done <- result{err: fmt.Errorf("setns %s: %w", nsPath, errno)}
			return
		}
		ln, err := net.Listen("tcp", addr)
		done <- result{ln, err}
	}()
	r := <-done
	require.NoError(t, r.err)
	return r.ln
}

// TestSandboxNetworkReachesOutside: with the network allowed a command
// reaches a host outside this machine's loopback (through pasta), and
// without it does not; no pasta is left behind, also for background jobs.
// Not parallel: see TestSandboxNetwork.
func TestSandboxNetworkReachesOutside(t *testing.T) {
	requireSandbox(t)
	requirePasta(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("network test needs curl")
	}
	url := testHost(t, "hello from outside\n")
	// The host itself reaches it: the test host works.
	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()

	ws := testWorkspace(t, nil)
	fetch := "curl -sS -m 10 " + url
	res := sandboxed(t, ws, true, fetch)
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "hello from outside\n")
	requireNoPasta(t)

	res = sandboxed(t, ws, false, fetch)
	require.True(t, res.IsError, res.Content)
	require.NotContains(t, res.Content, "hello from outside")
	res = runEnv(t, Env{Workspace: ws, AllowNetwork: true, ReadOnlySandbox: true}, fetch)
	require.True(t, res.IsError, res.Content)
	require.NotContains(t, res.Content, "hello from outside")

	// Background jobs: one that ends, one that is killed.
	jobs := NewJobs()
	t.Cleanup(jobs.Close)
	sh := NewShell(ShellConfig{Sandbox: SandboxOn})
	sh.jobs = jobs
	env := Env{Workspace: ws, AllowNetwork: true, Session: "s-net"}
	env.JobID = "job-1"
	res = runTool(t, context.Background(), sh, env, ShellParams{Command: fetch, Background: true})
	require.False(t, res.IsError, res.Content)
	jb := jobByID(t, jobs, "s-net", "job-1")
	waitEnded(t, jb)
	b, err := os.ReadFile(jb.log.abs)
	require.NoError(t, err)
	require.Contains(t, string(b), "hello from outside\n")
	requireNoPasta(t)

	env.JobID = "job-2"
	res = runTool(t, context.Background(), sh, env, ShellParams{Command: fetch + " && sleep 60", Background: true})
	require.False(t, res.IsError, res.Content)
	jb = jobByID(t, jobs, "s-net", "job-2")
	waitLog(t, jb, "hello from outside")
	require.True(t, jb.kill(killByTool))
	waitEnded(t, jb)
	requireNoPasta(t)
}

// TestSandboxNetworkNeedsPasta: a worker without pasta refuses a command
// that may use the network rather than give it the host's.
func TestSandboxNetworkNeedsPasta(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	p := hostSandbox()
	noPasta := *p.sb
	noPasta.pasta = ""
	sh := NewShell(ShellConfig{Sandbox: SandboxOn})
	sh.probe = func() sandboxProbe { return sandboxProbe{sb: &noPasta} }
	ws := testWorkspace(t, nil)
	res := runTool(t, context.Background(), sh, Env{Workspace: ws, AllowNetwork: true}, ShellParams{Command: "touch ran"})
	require.True(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "passt")
	require.NoFileExists(t, ws.Root()+"/ran")
	// Without the network it runs.
	res = runTool(t, context.Background(), sh, Env{Workspace: ws}, ShellParams{Command: "touch ran"})
	require.False(t, res.IsError, res.Content)
}

// jobByID returns a job of the manager.
func jobByID(t *testing.T, jobs *Jobs, session, id string) *job {
	t.Helper()
	jb, missing := jobs.lookup(session, id)
	require.Nil(t, missing)
	return jb
}
