package tools

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Running lists the jobs still running, sorted, and each one's Done closes
// when it ends: what a draining worker waits on.
func TestJobsRunningForTheDrain(t *testing.T) {
	t.Parallel()
	h := newJobHarness(t, SandboxOff)
	h.start(t, "s-b", "job-1", "sleep 2")
	h.start(t, "s-a", "job-1", "sleep 30")
	h.start(t, "s-a", "job-2", "true")
	require.Eventually(t, func() bool { return len(h.jobs.Running()) == 2 }, 10*time.Second, 20*time.Millisecond)

	running := h.jobs.Running()
	require.Equal(t, []string{"s-a/job-1", "s-b/job-1"}, []string{running[0].Session + "/" + running[0].ID, running[1].Session + "/" + running[1].ID})
	require.Equal(t, "sleep 30", running[0].Command)
	select {
	case <-running[1].Done:
	case <-time.After(10 * time.Second):
		t.Fatal("a job that ended did not close Done")
	}
	select {
	case <-running[0].Done:
		t.Fatal("Done closed for a job still running")
	default:
	}
	require.Len(t, h.jobs.Running(), 1)
}
