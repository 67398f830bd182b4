package e2e

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
	srv := startOwnServer(t)
	addr, c := srv.addr, srv.c
	if os.Getenv(postgresURLEnv) == "" { // the SQLite file; PostgreSQL has none
		requireWriteAheadLog(t, srv.db)
	}

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
		srv.down(crash)
		s.counts.ServerRestarts++
		srv.up()
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
