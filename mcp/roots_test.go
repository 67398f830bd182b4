package mcp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/mcp/mcptest"
	"github.com/longrun/longrun/tools"
)

// cwdIn calls the test server's cwd tool as a session with its own
// checkout at dir ("" in place) and returns the directory, the server's
// pid and the probe file's text.
func cwdIn(t *testing.T, m *Manager, dir string) (string, int, string) {
	t.Helper()
	tl, ok := m.LookupIn("probe__cwd", dir)
	require.True(t, ok)
	res, err := tl.Run(context.Background(), tools.Env{}, json.RawMessage(`{}`))
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	g := regexp.MustCompile(`^cwd (\S+) pid (\d+) probe (.*)$`).FindStringSubmatch(res.Content)
	require.NotNil(t, g, res.Content)
	pid, _ := strconv.Atoi(g[2])
	return g[1], pid, g[3]
}

func probeDir(t *testing.T, text string) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(d, "probe.txt"), []byte(text), 0o644))
	return d
}

// probeConfig is mcptest's probe server: it reports its working
// directory, which the test server (run from the test binary, whose
// TestMain does not know it) does not.
func probeConfig(t *testing.T) ServerConfig {
	t.Helper()
	return ServerConfig{Command: mcptest.Python(t), Args: []string{"-c", mcptest.ProbeServer}}
}

func gone(pid int) bool { return syscall.Kill(pid, 0) == syscall.ESRCH }

// TestCheckoutGetsItsOwnServer: a call for a session's checkout runs in
// an instance of the stdio server started in that checkout, one per
// checkout, reused by its later calls and stopped by CloseRoot; a
// session in place keeps the worker-level instance.
func TestCheckoutGetsItsOwnServer(t *testing.T) {
	t.Parallel()
	ws, a, b := probeDir(t, "worker"), probeDir(t, "checkout A"), probeDir(t, "checkout B")
	m, err := New(Config{Servers: map[string]ServerConfig{"probe": probeConfig(t)}}, Options{Dir: ws})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })

	wd, wpid, probe := cwdIn(t, m, "")
	require.Equal(t, ws, wd)
	require.Equal(t, "worker", probe)

	wd, apid, probe := cwdIn(t, m, a)
	require.Equal(t, a, wd, "the checkout's server starts in the checkout")
	require.Equal(t, "checkout A", probe)
	require.NotEqual(t, wpid, apid)
	wd, bpid, probe := cwdIn(t, m, b)
	require.Equal(t, b, wd)
	require.Equal(t, "checkout B", probe)
	require.NotEqual(t, apid, bpid, "another checkout gets its own process")
	_, again, _ := cwdIn(t, m, a)
	require.Equal(t, apid, again, "a checkout's later calls reuse its server")
	require.Equal(t, []string{min(a, b), max(a, b)}, m.RootsRunning())

	m.CloseRoot(a)
	require.True(t, gone(apid), "CloseRoot stops the checkout's server")
	require.False(t, gone(bpid), "and only that checkout's")
	require.Equal(t, []string{b}, m.RootsRunning())
	_, wpid2, _ := cwdIn(t, m, "")
	require.Equal(t, wpid, wpid2, "the worker-level server is left running")
	_, anew, _ := cwdIn(t, m, a)
	require.NotEqual(t, apid, anew, "a call after the close starts it again")

	require.NoError(t, m.Close())
	require.True(t, gone(bpid), "Close stops every checkout's server")
	require.True(t, gone(anew))
	tl, _ := m.LookupIn("probe__cwd", a)
	res, err := tl.Run(context.Background(), tools.Env{}, json.RawMessage(`{}`))
	require.NoError(t, err)
	require.Contains(t, res.Content, "shutting down")
}

// TestCheckoutServerStopsWhenIdle: a checkout's server nobody calls for
// the idle timeout is stopped.
func TestCheckoutServerStopsWhenIdle(t *testing.T) {
	t.Parallel()
	a := probeDir(t, "A")
	m, err := New(Config{Servers: map[string]ServerConfig{"probe": probeConfig(t)}},
		Options{Dir: t.TempDir(), IdleTimeout: 100 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	_, pid, _ := cwdIn(t, m, a)
	require.Eventually(t, func() bool { return len(m.RootsRunning()) == 0 && gone(pid) }, 10*time.Second, 20*time.Millisecond)
}

// TestURLServerIgnoresCheckout: a server reached by URL has no working
// directory; a checkout's call goes to the worker-level connection.
func TestURLServerIgnoresCheckout(t *testing.T) {
	t.Parallel()
	ts := httpServer(t)
	m := newManager(t, map[string]ServerConfig{"kb": {URL: ts.URL}})
	tl, ok := m.LookupIn("kb__lookup_1", t.TempDir())
	require.True(t, ok)
	res, err := tl.Run(context.Background(), tools.Env{}, json.RawMessage(`{"key":"k"}`))
	require.NoError(t, err)
	require.Contains(t, res.Content, "table 1")
	require.Empty(t, m.RootsRunning())
}

// TestCheckoutServerGetsTheSessionsNetwork: the instance of a session's
// checkout is launched with that session's network setting (the worker's
// Command then gives it the network only if the session allows it); the
// worker-level instance with none (the worker decides).
func TestCheckoutServerGetsTheSessionsNetwork(t *testing.T) {
	t.Parallel()
	ws, a, b := probeDir(t, "worker"), probeDir(t, "A"), probeDir(t, "B")
	var mu sync.Mutex
	nets := map[string]*bool{}
	hook := func(l Launch) (*Process, error) {
		mu.Lock()
		nets[l.Dir] = l.Network
		mu.Unlock()
		return ExecCommand(l)
	}
	m, err := New(Config{Servers: map[string]ServerConfig{"probe": probeConfig(t)}}, Options{Dir: ws, Command: hook})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	for dir, allow := range map[string]bool{"": true, a: false, b: true} {
		tl, ok := m.LookupIn("probe__cwd", dir)
		require.True(t, ok)
		res, err := tl.Run(context.Background(), tools.Env{AllowNetwork: allow}, json.RawMessage(`{}`))
		require.NoError(t, err)
		require.False(t, res.IsError, res.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Nil(t, nets[ws])
	require.NotNil(t, nets[a])
	require.False(t, *nets[a])
	require.NotNil(t, nets[b])
	require.True(t, *nets[b])
}
