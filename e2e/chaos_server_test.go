package e2e

import (
	"context"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

// TestChaosServerRestart restarts the Temporal server under a running
// session: with SIGKILL while a mutating command runs, and cleanly while a
// call waits for approval. The server keeps its state in an SQLite file
// (under LONGRUN_POSTGRES_URL, `make test-postgres`, in a PostgreSQL
// database of its own), so the session, its activities' timeouts and its
// pending approval survive; the worker and the clients, dialled to the
// same address, reconnect on their own. The session must complete with the same invariants as under
// worker kills. It uses a devserver of its own, not the shared one.
func TestChaosServerRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "temporal.db")
	logPath := filepath.Join(dir, "devserver.log")
	srv, addr, err := startDevserver(db, 0, logPath)
	require.NoError(t, err)
	defer func() {
		if srv != nil { // nil when a restart failed
			srv.stop()
		}
		if t.Failed() {
			t.Logf("devserver log (tail):\n%s", tailFile(logPath, 6000))
		}
	}()
	_, portText, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	port, err := strconv.Atoi(portText)
	require.NoError(t, err)
	c, err := client.Dial(client.Options{HostPort: addr})
	require.NoError(t, err)
	defer c.Close()

	plan := chaosPlan{Name: "r00", Steps: []string{stepAuto, stepAsk, stepMixed}, Slow: map[int]bool{0: true}}
	s := &chaosSession{t: t, plan: plan, addr: addr, c: c, timeout: 4 * time.Minute}
	require.NoError(t, s.setup())
	defer s.teardown()
	askID := plan.callID(1, 0)
	s.hold[askID] = true
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	require.NoError(t, s.start(ctx))

	restart := func(crash bool) {
		t.Helper()
		if crash {
			srv.kill()
		} else {
			srv.stop()
		}
		s.counts.ServerRestarts++
		srv, _, err = startDevserver(db, port, logPath)
		require.NoError(t, err, "restart the devserver on port %d", port)
	}

	runningID := plan.callID(0, 0)
	require.True(t, pollUntil(ctx, 2*time.Minute, func() bool {
		l, _, _ := readLedger(s.liveLedger())
		return l[runningID] > 0
	}), "the first command never started")
	restart(true)

	require.True(t, pollUntil(ctx, 2*time.Minute, func() bool { return s.isPending(ctx, askID) }),
		"the ask call never waited for approval after the crash")
	restart(false)
	s.release(askID) // approved through the restarted server

	n := s.finish(ctx)
	t.Logf("chaos server restart: %s", n)
	require.Equal(t, 1, n.Completed, "the session did not complete")
	require.Equal(t, 2, n.ServerRestarts)
}
