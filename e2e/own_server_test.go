package e2e

import (
	"bufio"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

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

// requireWriteAheadLog fails unless the SQLite file at db is in WAL mode:
// bytes 18 and 19 of its header (the write and read format versions) are
// 2 for WAL and 1 for the rollback journal. The devserver keeps its file
// in WAL mode (devserver's fileAttributes) for the server's round trips,
// and the crash-restart tests around this check are what show the log is
// replayed after a kill.
func requireWriteAheadLog(t *testing.T, db string) {
	t.Helper()
	f, err := os.Open(db)
	require.NoError(t, err)
	defer f.Close()
	var head [100]byte
	_, err = io.ReadFull(f, head[:])
	require.NoError(t, err, "read the SQLite header of %s", db)
	require.Equal(t, "SQLite format 3\x00", string(head[:16]), "%s is not an SQLite file", db)
	require.Equal(t, []byte{2, 2}, head[18:20], "%s is not in WAL mode (header bytes 18-19: 1 = rollback journal, 2 = WAL)", db)
}

// --db-sync takes full or normal; anything else stops the devserver with
// a message naming both. With normal the file still keeps its
// write-ahead log (only when it reaches the disk changes).
func TestDevserverDBSync(t *testing.T) {
	t.Parallel()
	out, err := exec.Command(devserverPath, "--db-sync", "off", "--db", filepath.Join(t.TempDir(), "x.db"), "--port", "0", "--ui-port", "0").CombinedOutput()
	require.Error(t, err, "devserver started with --db-sync off:\n%s", out)
	require.Contains(t, string(out), `--db-sync "off": want full or normal`)

	db := filepath.Join(t.TempDir(), "temporal.db")
	cmd := exec.Command(devserverPath, "--db-sync", "normal", "--db", db, "--port", "0", "--ui-port", "0")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if devserverReady.MatchString(sc.Text()) {
				ready <- true
			}
		}
		close(ready)
	}()
	select {
	case ok := <-ready:
		require.True(t, ok, "devserver --db-sync normal exited before it was ready")
	case <-time.After(120 * time.Second):
		t.Fatal("devserver --db-sync normal not ready after 120s")
	}
	requireWriteAheadLog(t, db)
}

// A devserver stopped cleanly folds its write-ahead log back into its
// SQLite file, so the file alone holds every commit (a copy of it is a
// whole backup, docs/OPERATIONS.md) and starts again with the same
// state: a workflow started before the stop is there after it.
func TestDevserverFoldsItsLogOnStop(t *testing.T) {
	t.Parallel()
	db := filepath.Join(t.TempDir(), "temporal.db")
	logPath := filepath.Join(t.TempDir(), "devserver.log")
	start := func() (*groupProc, client.Client) {
		p, addr, err := startDevserverArgs(logPath, "--db", db, "--port", "0", "--ui-port", "0")
		require.NoError(t, err)
		c, err := client.Dial(client.Options{HostPort: addr})
		require.NoError(t, err)
		return p, c
	}
	p, c := start()
	_, err := c.ExecuteWorkflow(t.Context(), client.StartWorkflowOptions{ID: "before-the-stop", TaskQueue: "nobody-polls"}, "Anything")
	require.NoError(t, err)
	c.Close()
	logFile := db + "-wal"
	fi, err := os.Stat(logFile)
	require.NoError(t, err, "a running devserver keeps a write-ahead log beside its file")
	require.NotZero(t, fi.Size())
	p.stop()
	if fi, err := os.Stat(logFile); err == nil {
		require.Zero(t, fi.Size(), "the write-ahead log was not folded into %s at the stop:\n%s", db, tailFile(logPath, 3000))
	}
	require.NotContains(t, tailFile(logPath, 3000), "fold the write-ahead log")

	// The file alone: a copy of it, without the log, has the workflow.
	copyDB := filepath.Join(t.TempDir(), "temporal.db")
	data, err := os.ReadFile(db)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(copyDB, data, 0o600))
	db = copyDB
	p, c = start()
	defer p.stop()
	defer c.Close()
	desc, err := c.DescribeWorkflow(t.Context(), "before-the-stop", "")
	require.NoError(t, err, "the copy of the stopped devserver's file has the workflow started before the stop")
	require.Equal(t, "Anything", desc.WorkflowType.Name)
}
