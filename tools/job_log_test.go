package tools

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestJobLogCapped: a job printing past the cap (--max-spill-bytes) leaves
// a log of the cap plus a note saying so, is not blocked by the cap (it
// runs to its end and exits 0), and while it runs its status says the
// log is full. Before the cap the log held all 1,000,000 bytes.
func TestJobLogCapped(t *testing.T) {
	t.Parallel()
	for _, mode := range []SandboxMode{SandboxOff, SandboxOn} {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			if mode == SandboxOn {
				requireSandbox(t)
			}
			const limit = 4096
			h := newJobHarness(t, mode)
			h.shell.cfg.MaxSpillBytes = limit
			h.start(t, "s", "job-1", `head -c 1000000 /dev/zero | tr '\0' x; echo; echo end`)
			jb := h.job(t, "s", "job-1")
			waitEnded(t, jb)
			log, err := os.ReadFile(jb.log.abs)
			require.NoError(t, err)
			note := "\n[log cut at 4096 bytes (--max-spill-bytes): the job printed 1000005, the rest was discarded]\n"
			require.Equal(t, strings.Repeat("x", limit)+note, string(log))
			out := h.call(t, h.output, "s", JobOutputParams{ID: "job-1", Tail: 3})
			require.Contains(t, out.Content, note+"[job-1 exited with code 0 after ")

			// Still printing past the cap: the status says so.
			h.start(t, "s", "job-2", `head -c 100000 /dev/zero; sleep 30`)
			jb2 := h.job(t, "s", "job-2")
			require.Eventually(t, func() bool { return jb2.output.cut.Load() }, 10*time.Second, 10*time.Millisecond)
			list := h.call(t, h.list, "s", struct{}{})
			require.Contains(t, list.Content, "its log reached 4096 bytes (--max-spill-bytes): later output is discarded")
			h.call(t, h.kill, "s", JobKillParams{ID: "job-2"})
			fi, err := os.Stat(jb2.log.abs)
			require.NoError(t, err)
			require.LessOrEqual(t, fi.Size(), int64(limit+len(note)))
		})
	}
}
