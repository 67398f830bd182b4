package tools

import (
	"context"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sessionBytes is what the session's files take in the state directory.
func sessionBytes(t *testing.T, state, session string) int64 {
	t.Helper()
	var total int64
	_ = filepath.WalkDir(filepath.Join(state, "sessions", fileSafe(session)), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			fi, _ := d.Info()
			total += fi.Size()
		}
		return nil
	})
	return total
}

// A job printing without end and a command printing 200 KB share one
// session's 64 KiB quota: the job's log stops at it (its status says
// so), the command's result says its output was cut and nothing saved,
// another session still gets its spill, and what the session's files
// take stays within the quota. Removing the session's files deletes them.
func TestSessionQuotaSharedBySpillsAndJobLogs(t *testing.T) {
	t.Parallel()
	const quota = 64 << 10
	h := newJobHarness(t, SandboxOff)
	h.shell.cfg.OutputLimit = 1000
	files := NewSessionFiles(h.state, quota)
	h.shell.state = files.d
	const session = "session/q"

	res := h.start(t, session, "job-1", "yes joblog")
	require.False(t, res.IsError, res.Content)
	require.Eventually(t, func() bool {
		st := h.call(t, h.list, session, JobListParams{})
		return regexp.MustCompile(`output cut: this session's 64 KiB quota for spilled output and job logs is used up`).MatchString(st.Content)
	}, 10*time.Second, 50*time.Millisecond, "the job's status says its log was cut by the quota")

	res = runTool(t, context.Background(), h.shell, Env{Workspace: h.ws, Session: session}, ShellParams{Command: "yes spill | head -c 200000"})
	require.Contains(t, res.Content, "[output cut: this session's 64 KiB quota for spilled output and job logs is used up (--session-quota-bytes); nothing of this command's full output (200000 bytes) was saved]")

	other := runTool(t, context.Background(), h.shell, Env{Workspace: h.ws, Session: "other"}, ShellParams{Command: "yes other | head -c 20000"})
	require.Contains(t, other.Content, "[full output (20000 bytes) saved to ", "the quota is per session")

	time.Sleep(300 * time.Millisecond) // the job keeps printing
	require.LessOrEqual(t, sessionBytes(t, h.state, session), int64(quota+len(session)), "the session's files stay within its quota")
	require.GreaterOrEqual(t, sessionBytes(t, h.state, session), int64(quota), "and the quota was reached")

	ids, err := files.Sessions()
	require.NoError(t, err)
	require.Equal(t, []string{"other", session}, ids, "the ids as given, not as made file-safe")
	h.call(t, h.kill, session, JobKillParams{ID: "job-1"})
	require.NoError(t, files.Remove(session))
	require.NoDirExists(t, filepath.Join(h.state, "sessions", fileSafe(session)))
	ids, err = files.Sessions()
	require.NoError(t, err)
	require.Equal(t, []string{"other"}, ids)
	// Forgotten with its files: a new session under the same id starts
	// with the whole quota.
	res = runTool(t, context.Background(), h.shell, Env{Workspace: h.ws, Session: session}, ShellParams{Command: "yes again | head -c 5000"})
	require.Contains(t, res.Content, "[full output (5000 bytes) saved to ")
}

// The quota is read from the disk when a worker first meets a session:
// a worker that restarted does not grant a session its quota again.
func TestSessionQuotaCountsFilesOnDisk(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	first := NewSessionFiles(state, 10000)
	require.Equal(t, int64(6000), first.d.take("s", 6000))
	f, err := first.d.sessionFile("s", stateSpillDir, "x.log")
	require.NoError(t, err)
	out, err := f.create()
	require.NoError(t, err)
	_, err = out.Write(make([]byte, 6000))
	require.NoError(t, err)
	require.NoError(t, out.Close())

	again := NewSessionFiles(state, 10000)
	require.Equal(t, int64(10000-6000-1), again.d.take("s", 9000), "6000 bytes and the one-byte id file are there")
	require.Equal(t, int64(0), again.d.take("s", 1))
	require.Equal(t, int64(5), NewSessionFiles(state, 0).d.take("s", 5), "no quota: no bound")
}

// The ninth background job of a session is refused, naming job_kill and
// the running jobs; once one is killed the next starts. Ended jobs do not
// count, and another session has its own eight.
func TestBackgroundJobsCappedPerSession(t *testing.T) {
	t.Parallel()
	h := newJobHarness(t, SandboxOff)
	require.Equal(t, DefaultMaxJobs, h.shell.cfg.MaxJobs)
	h.shell.cfg.MaxJobs = 3
	const session = "s"
	require.False(t, h.start(t, session, "job-1", "true").IsError)
	waitEnded(t, h.job(t, session, "job-1"))
	for i := 2; i <= 4; i++ {
		res := h.start(t, session, "job-"+strconv.Itoa(i), "sleep 30")
		require.False(t, res.IsError, res.Content)
	}
	res := h.start(t, session, "job-5", "sleep 30")
	require.True(t, res.IsError)
	require.Equal(t, `background job refused: this session already runs 3 background jobs, the most one session may on this worker (--max-jobs). `+
		`Stop one it no longer needs with job_kill {"id": "job-2"} (running: job-2, job-3, job-4), or wait for one to end, then start this again.`, res.Content)
	require.False(t, h.start(t, "another", "job-1", "sleep 30").IsError, "the cap is per session")
	h.call(t, h.kill, session, JobKillParams{ID: "job-3"})
	res = h.start(t, session, "job-5", "sleep 30")
	require.False(t, res.IsError, res.Content)
}

// Every tmpfs of the sandbox is sized: /tmp as configured, the hidden
// home a little, every other hidden directory less.
func TestSandboxTmpfsSized(t *testing.T) {
	t.Parallel()
	sb := &sandbox{hide: []string{"/home/u", "/run/user/1"}, home: "/home/u"}
	args := sb.args(sandboxRun{dir: "/", hide: []string{"/state"}, tmpBytes: 4 << 20, infoFD: -1, blockFD: -1, argv: []string{"true"}})
	sizes := map[string]string{}
	for i, a := range args {
		if a == "--tmpfs" {
			require.Equal(t, "--size", args[i-2], "the size comes right before --tmpfs %s", args[i+1])
			sizes[args[i+1]] = args[i-1]
		}
	}
	require.Equal(t, map[string]string{"/tmp": "4194304", "/dev/shm": "4194304", "/home/u": "67108864", "/run/user/1": "1048576", "/state": "1048576"}, sizes)
	def := sb.args(sandboxRun{dir: "/", infoFD: -1, blockFD: -1})
	require.Contains(t, def, strconv.Itoa(DefaultTmpBytes))
}

// In the real sandbox, a command (read-only or not) cannot hold more
// than the configured size in /tmp, nor more than a little in the home:
// the writes fail with "No space left on device".
func TestSandboxTmpfsFull(t *testing.T) {
	t.Parallel()
	requireSandbox(t)
	sh := NewShell(ShellConfig{Sandbox: SandboxOn, TmpBytes: 4 << 20})
	ws := testWorkspace(t, nil)
	for _, readOnly := range []bool{true, false} {
		res := runTool(t, context.Background(), sh, Env{Workspace: ws, Session: "s", ReadOnlySandbox: readOnly},
			ShellParams{Command: `head -c 10000000 /dev/zero > /tmp/fill; echo tmp=$(stat -c %s /tmp/fill); head -c 100000000 /dev/zero > "$HOME/fill"; echo home=$(stat -c %s "$HOME/fill"); head -c 10000000 /dev/zero > /dev/shm/fill; echo shm=$(stat -c %s /dev/shm/fill)`})
		require.Contains(t, res.Content, "No space left on device")
		m := regexp.MustCompile(`tmp=(\d+)\n(?s:.*)home=(\d+)`).FindStringSubmatch(res.Content)
		require.NotNil(t, m, res.Content)
		tmp, _ := strconv.Atoi(m[1])
		home, _ := strconv.Atoi(m[2])
		require.LessOrEqual(t, tmp, 4<<20, "read-only %v", readOnly)
		require.LessOrEqual(t, home, sandboxHomeBytes)
		shm := regexp.MustCompile(`shm=(\d+)`).FindStringSubmatch(res.Content)
		require.NotNil(t, shm, res.Content)
		n, _ := strconv.Atoi(shm[1])
		require.LessOrEqual(t, n, 4<<20, "/dev/shm is bounded too (read-only %v)", readOnly)
	}
}
