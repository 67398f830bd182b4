package tools

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReadChildPIDNamesItsWait: a bwrap that does not report its sandbox
// within the wait (a loaded machine creating namespaces) fails with an
// error that names the wait, so a command that fails for it says why
// rather than only "failed". A bwrap that reports is read.
func TestReadChildPIDNamesItsWait(t *testing.T) {
	t.Parallel()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	start := time.Now()
	_, err = readChildPID(r, 100*time.Millisecond)
	require.ErrorContains(t, err, "bwrap did not report its sandbox set up within 100ms (the machine may be overloaded")
	require.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.Less(t, time.Since(start), 5*time.Second)

	r2, w2, err := os.Pipe()
	require.NoError(t, err)
	defer r2.Close()
	_, err = w2.WriteString(`{"child-pid": 42, "cgroup-namespace": 1}`)
	require.NoError(t, err)
	w2.Close()
	pid, err := readChildPID(r2, time.Second)
	require.NoError(t, err)
	require.Equal(t, 42, pid)
}
