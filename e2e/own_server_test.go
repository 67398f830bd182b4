package e2e

import (
	"net"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/client"
)

// ownServer is a devserver of one test's own, which the test may take
// down (stop or kill) and bring up again on the same database and port:
// workers and clients already dialled to it reconnect on their own.
type ownServer struct {
	t           *testing.T
	proc        *groupProc // nil while it is down
	addr        string
	port        int
	db, logPath string
	c           client.Client
}

// startOwnServer starts the test's devserver and a client dialled to it;
// both end with the test, and a failed test gets the server's log tail.
func startOwnServer(t *testing.T) *ownServer {
	t.Helper()
	dir := t.TempDir()
	s := &ownServer{t: t, db: filepath.Join(dir, "temporal.db"), logPath: filepath.Join(dir, "devserver.log")}
	proc, addr, err := startDevserver(s.db, 0, s.logPath)
	require.NoError(t, err)
	s.proc, s.addr = proc, addr
	t.Cleanup(func() {
		if s.proc != nil {
			s.proc.stop()
		}
		if t.Failed() {
			t.Logf("devserver log (tail):\n%s", tailFile(s.logPath, 6000))
		}
	})
	_, portText, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	s.port, err = strconv.Atoi(portText)
	require.NoError(t, err)
	s.c, err = client.Dial(client.Options{HostPort: addr})
	require.NoError(t, err)
	t.Cleanup(s.c.Close)
	return s
}

// down stops the server, with SIGKILL when crash is set.
func (s *ownServer) down(crash bool) {
	if crash {
		s.proc.kill()
	} else {
		s.proc.stop()
	}
	s.proc = nil
}

// up starts it again on its database and port.
func (s *ownServer) up() {
	s.t.Helper()
	proc, _, err := startDevserver(s.db, s.port, s.logPath)
	require.NoError(s.t, err, "restart the devserver on port %d", s.port)
	s.proc = proc
}
