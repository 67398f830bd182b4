package tools

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tickCommand prints three lines over about a second and then idles, so a
// test can read output twice while the job is still running.
const tickCommand = "for i in 1 2 3; do echo tick $i; sleep 0.3; done; sleep 30"

// jobHarness is a shell and the job tools sharing one job manager, as
// Builtin wires them.
type jobHarness struct {
	ws     *Workspace
	state  string // the state directory the job logs go to
	jobs   *Jobs
	shell  *Shell
	output *JobOutput
	list   *JobList
	kill   *JobKill
	starts atomic.Int32 // processes the shell started
}

func newJobHarness(t *testing.T, mode SandboxMode) *jobHarness {
	t.Helper()
	h := &jobHarness{ws: testWorkspace(t, nil), jobs: NewJobs(), state: t.TempDir()}
	t.Cleanup(h.jobs.Close)
	h.shell = NewShell(ShellConfig{Sandbox: mode})
	h.shell.jobs = h.jobs
	h.shell.state = newStateDir(h.state)
	h.shell.onStart = func(int) { h.starts.Add(1) }
	h.output = NewJobOutput(h.jobs, 0)
	h.list = NewJobList(h.jobs)
	h.kill = NewJobKill(h.jobs)
	return h
}

func (h *jobHarness) start(t *testing.T, session, id, command string) Result {
	t.Helper()
	return runTool(t, context.Background(), h.shell, Env{Workspace: h.ws, Session: session, JobID: id},
		ShellParams{Command: command, Background: true})
}

func (h *jobHarness) call(t *testing.T, tool Tool, session string, args any) Result {
	t.Helper()
	return runTool(t, context.Background(), tool, Env{Workspace: h.ws, Session: session}, args)
}

// job returns the manager's record of a job, for its process group and log.
func (h *jobHarness) job(t *testing.T, session, id string) *job {
	t.Helper()
	jb, missing := h.jobs.lookup(session, id)
	require.Nil(t, missing)
	return jb
}

// waitLog waits, bounded, until the job's log contains want.
func waitLog(t *testing.T, jb *job, want string) {
	t.Helper()
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(jb.log.abs)
		return strings.Contains(string(b), want)
	}, 10*time.Second, 20*time.Millisecond, "log %s never showed %q", jb.log.abs, want)
}

// waitEnded waits, bounded, until the job's process has been reaped.
func waitEnded(t *testing.T, jb *job) {
	t.Helper()
	select {
	case <-jb.done:
	case <-time.After(10 * time.Second):
		t.Fatalf("job %s did not end", jb.id)
	}
}

var tickLine = regexp.MustCompile(`(?m)^tick \d$`)

func TestJobLifecycle(t *testing.T) {
	t.Parallel()
	for _, mode := range shellModes(t) {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			testJobLifecycle(t, mode)
		})
	}
}

func testJobLifecycle(t *testing.T, mode SandboxMode) {
	h := newJobHarness(t, mode)
	const session = "session/7"
	res := h.start(t, session, "job-1", tickCommand)
	require.False(t, res.IsError, res.Content)
	jb := h.job(t, session, "job-1")
	require.Equal(t, filepath.Join(h.state, "sessions", fileSafe(session), "jobs", "job-1.log"), jb.log.abs)
	require.Equal(t, "started background job job-1: "+tickCommand+"\n"+
		"its output goes to a log the worker keeps outside the workspace (kept after the job ends; read it with job_output)\n"+
		`new output: job_output {"id": "job-1"}; the last lines: job_output {"id": "job-1", "tail": 20}; stop it: job_kill {"id": "job-1"}`+"\n"+
		"it runs until it exits, is killed, or the session ends\n", res.Content)

	// Two reads: the second shows only what the first did not.
	waitLog(t, jb, "tick 1\n")
	first := h.call(t, h.output, session, JobOutputParams{ID: "job-1"})
	require.False(t, first.IsError, first.Content)
	require.Contains(t, first.Content, "tick 1\n")
	require.Regexp(t, `\n\[job-1 running for \d+\.\ds\]$`, first.Content)
	waitLog(t, jb, "tick 3\n")
	second := h.call(t, h.output, session, JobOutputParams{ID: "job-1"})
	require.NotContains(t, second.Content, "tick 1")
	seen := append(tickLine.FindAllString(first.Content, -1), tickLine.FindAllString(second.Content, -1)...)
	require.Equal(t, []string{"tick 1", "tick 2", "tick 3"}, seen)
	third := h.call(t, h.output, session, JobOutputParams{ID: "job-1"})
	require.True(t, strings.HasPrefix(third.Content, "(no new output)\n[job-1 running for "), third.Content)

	tail := h.call(t, h.output, session, JobOutputParams{ID: "job-1", Tail: 2})
	require.True(t, strings.HasPrefix(tail.Content, "tick 2\ntick 3\n[job-1 running for "), tail.Content)

	list := h.call(t, h.list, session, struct{}{})
	require.Regexp(t, `^job-1  running for \d+\.\ds  `+regexp.QuoteMeta(tickCommand)+`$`, list.Content)

	pids := groupMembers(jb.pgid)
	require.NotEmpty(t, pids, "no process in the job's group %d", jb.pgid)
	killed := h.call(t, h.kill, session, JobKillParams{ID: "job-1"})
	require.False(t, killed.IsError, killed.Content)
	require.Regexp(t, `^background job job-1 stopped: killed by SIGTERM \(job_kill\) after \d+\.\ds\n`+
		`its log is kept; what you have not read yet: job_output \{"id": "job-1"\}$`, killed.Content)
	requireGroupGone(t, jb.pgid, pids)

	log, err := os.ReadFile(jb.log.abs)
	require.NoError(t, err)
	require.Equal(t, "tick 1\ntick 2\ntick 3\n", string(log))
	fi, err := os.Stat(jb.log.abs)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), "a log is the worker's alone")
	fi, err = os.Stat(filepath.Dir(jb.log.abs))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	require.NoDirExists(t, filepath.Join(h.ws.Root(), ".longrun"), "nothing of the job is kept in the workspace")

	after := h.call(t, h.output, session, JobOutputParams{ID: "job-1"})
	require.Regexp(t, `^\(no new output\)\n\[job-1 killed by SIGTERM \(job_kill\) after \d+\.\ds\]$`, after.Content)
	again := h.call(t, h.kill, session, JobKillParams{ID: "job-1"})
	require.False(t, again.IsError, again.Content)
	require.Contains(t, again.Content, "background job job-1 had already ended: killed by SIGTERM (job_kill) after ")
	require.Contains(t, again.Content, "; nothing to kill\n")
	require.Equal(t, int32(1), h.starts.Load())
}

// TestJobSandboxed checks that a background job gets the sandbox a
// foreground command gets: the root is read-only.
func TestJobSandboxed(t *testing.T) {
	t.Parallel()
	if p := hostSandbox(); p.sb == nil {
		t.Skipf("bwrap does not work here: %s", p.why)
	}
	h := newJobHarness(t, SandboxOn)
	res := h.start(t, "s", "job-1", "touch /etc/longrun-job-test; echo touched=$?; touch in-workspace && echo wrote; sleep 30")
	require.False(t, res.IsError, res.Content)
	jb := h.job(t, "s", "job-1")
	waitLog(t, jb, "wrote\n")
	out := h.call(t, h.output, "s", JobOutputParams{ID: "job-1"})
	require.Contains(t, out.Content, "Read-only file system")
	require.Contains(t, out.Content, "touched=1\nwrote\n")
	require.NoFileExists(t, "/etc/longrun-job-test")
	require.FileExists(t, filepath.Join(h.ws.Root(), "in-workspace"))
	pids := groupMembers(jb.pgid)
	require.Equal(t, []string{"job-1"}, h.jobs.KillSession("s"))
	requireGroupGone(t, jb.pgid, pids)
}

func TestJobEndsOnItsOwn(t *testing.T) {
	t.Parallel()
	h := newJobHarness(t, SandboxOff)
	// The job's leftover child dies with it, as after a foreground command.
	res := h.start(t, "s", "job-1", "sleep 30 & echo pid $!; echo done; exit 3")
	require.False(t, res.IsError, res.Content)
	jb := h.job(t, "s", "job-1")
	waitEnded(t, jb)
	out := h.call(t, h.output, "s", JobOutputParams{ID: "job-1"})
	require.Regexp(t, `^pid \d+\ndone\n\[job-1 exited with code 3 after \d+\.\ds\]$`, out.Content)
	requireDead(t, childPIDs(t, out.Content))
	killed := h.call(t, h.kill, "s", JobKillParams{ID: "job-1"})
	require.False(t, killed.IsError)
	require.Contains(t, killed.Content, "background job job-1 had already ended: exited with code 3 after ")
	list := h.call(t, h.list, "s", struct{}{})
	require.Contains(t, list.Content, "job-1  exited with code 3 after ")
}

func TestJobKillNeedsSIGKILL(t *testing.T) {
	t.Parallel()
	h := newJobHarness(t, SandboxOff)
	h.start(t, "s", "job-1", "trap '' TERM; echo ready; while :; do sleep 0.1; done")
	jb := h.job(t, "s", "job-1")
	waitLog(t, jb, "ready\n")
	pids := groupMembers(jb.pgid)
	killed := h.call(t, h.kill, "s", JobKillParams{ID: "job-1"})
	require.Contains(t, killed.Content, "background job job-1 stopped: killed by SIGKILL (job_kill) after ")
	requireGroupGone(t, jb.pgid, pids)
}

// TestJobRetry: an activity retried after the job started gets the first
// start's answer, and no second process.
func TestJobRetry(t *testing.T) {
	t.Parallel()
	h := newJobHarness(t, SandboxOff)
	first := h.start(t, "s", "job-1", "echo run >> runs.txt; sleep 30")
	jb := h.job(t, "s", "job-1")
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(h.ws.Root(), "runs.txt"))
		return string(b) == "run\n"
	}, 10*time.Second, 20*time.Millisecond)
	second := h.start(t, "s", "job-1", "echo run >> runs.txt; sleep 30")
	require.Equal(t, first, second)
	require.Equal(t, int32(1), h.starts.Load())
	require.Len(t, h.jobs.list("s"), 1)
	require.Same(t, jb, h.job(t, "s", "job-1"))

	// Another session's job-1 is a job of its own.
	other := h.start(t, "t", "job-1", "sleep 30")
	require.NotEqual(t, first.Content, other.Content)
	require.Equal(t, int32(2), h.starts.Load())
}

func TestJobKillSessionAndClose(t *testing.T) {
	t.Parallel()
	h := newJobHarness(t, SandboxOff)
	for _, id := range []string{"job-1", "job-2"} {
		h.start(t, "a", id, "echo started; sleep 30")
	}
	h.start(t, "b", "job-1", "sleep 30")
	a1, a2, b1 := h.job(t, "a", "job-1"), h.job(t, "a", "job-2"), h.job(t, "b", "job-1")
	waitLog(t, a1, "started\n")
	waitLog(t, a2, "started\n")
	pidsA := append(groupMembers(a1.pgid), groupMembers(a2.pgid)...)
	pidsB := groupMembers(b1.pgid)
	require.NotEmpty(t, pidsB)

	require.Equal(t, []string{"job-1", "job-2"}, h.jobs.KillSession("a"))
	requireGroupGone(t, a1.pgid, pidsA)
	requireGroupGone(t, a2.pgid, pidsA)
	require.True(t, b1.running(), "session b's job was killed with a's")
	require.Equal(t, pidsB, groupMembers(b1.pgid))
	for _, jb := range []*job{a1, a2} {
		log, err := os.ReadFile(jb.log.abs)
		require.NoError(t, err, "the log stays")
		require.Equal(t, "started\n", string(log))
	}
	require.Equal(t, "no background jobs in this session on this worker", h.call(t, h.list, "a", struct{}{}).Content)
	require.Contains(t, h.call(t, h.list, "b", struct{}{}).Content, "job-1  running for ")
	require.Empty(t, h.jobs.KillSession("a"))

	h.jobs.Close()
	requireGroupGone(t, b1.pgid, pidsB)
	require.Contains(t, b1.status(), "killed by SIGTERM (worker shut down) after ")
	_, err := h.shell.Run(context.Background(), Env{Workspace: h.ws, Session: "b", JobID: "job-2"},
		[]byte(`{"command":"sleep 30","background":true}`))
	require.ErrorIs(t, err, ErrJobsClosed)
}

func TestJobUnknownID(t *testing.T) {
	t.Parallel()
	h := newJobHarness(t, SandboxOff)
	h.start(t, "a", "job-1", "sleep 30")
	h.start(t, "a", "job-2", "sleep 30")
	tests := []struct {
		name    string
		tool    Tool
		session string
		args    any
		want    string
	}{
		{name: "output", tool: h.output, session: "a", args: JobOutputParams{ID: "job-9"},
			want: `no background job "job-9" in this session on this worker; its jobs here: job-1, job-2`},
		{name: "kill", tool: h.kill, session: "a", args: JobKillParams{ID: "job-9"},
			want: `no background job "job-9" in this session on this worker; its jobs here: job-1, job-2`},
		{name: "another session's job", tool: h.kill, session: "b", args: JobKillParams{ID: "job-1"},
			want: `no background job "job-1" in this session on this worker; it has none here`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := h.call(t, tt.tool, tt.session, tt.args)
			require.True(t, res.IsError)
			require.Equal(t, tt.want, res.Content)
		})
	}
	require.True(t, h.job(t, "a", "job-1").running(), "session b killed a's job")
	require.Equal(t, "no background jobs in this session on this worker", h.call(t, h.list, "b", struct{}{}).Content)
}

func TestJobNeedsSession(t *testing.T) {
	t.Parallel()
	h := newJobHarness(t, SandboxOff)
	for _, env := range []Env{{Workspace: h.ws}, {Workspace: h.ws, Session: "s"}, {Workspace: h.ws, JobID: "job-1"}} {
		res := runTool(t, context.Background(), h.shell, env, ShellParams{Command: "touch x", Background: true})
		require.True(t, res.IsError)
		require.Contains(t, res.Content, "background jobs need a session")
	}
	require.NoFileExists(t, filepath.Join(h.ws.Root(), "x"))
	require.Zero(t, h.starts.Load())
	res := runTool(t, context.Background(), h.list, Env{Workspace: h.ws}, struct{}{})
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "background jobs need a session")
}

func TestJobTimeoutNotApplied(t *testing.T) {
	t.Parallel()
	h := newJobHarness(t, SandboxOff)
	res := runTool(t, context.Background(), h.shell, Env{Workspace: h.ws, Session: "s", JobID: "job-1"},
		ShellParams{Command: "sleep 30", Background: true, Timeout: 1})
	require.Contains(t, res.Content, "; the timeout you gave does not apply to background jobs\n")
}

func TestJobOutputTruncated(t *testing.T) {
	t.Parallel()
	h := newJobHarness(t, SandboxOff)
	h.output = NewJobOutput(h.jobs, 100)
	h.start(t, "s", "job-1", "seq 1 1000")
	jb := h.job(t, "s", "job-1")
	waitEnded(t, jb)
	out := h.call(t, h.output, "s", JobOutputParams{ID: "job-1"})
	require.True(t, strings.HasPrefix(out.Content, "1\n2\n3\n"), out.Content)
	require.Contains(t, out.Content, " characters dropped; the whole log is kept outside the workspace for a person, where tools cannot read it] ...\n")
	require.Contains(t, out.Content, "\n999\n1000\n[job-1 exited with code 0 after ")
	require.NotContains(t, out.Content, "\n500\n")
	require.Less(t, len(out.Content), 400)
	require.True(t, strings.HasPrefix(h.call(t, h.output, "s", JobOutputParams{ID: "job-1"}).Content, "(no new output)\n"))

	// The tail is bounded too, and says when fewer lines fit than asked.
	tail := h.call(t, h.output, "s", JobOutputParams{ID: "job-1", Tail: 500})
	require.True(t, strings.HasPrefix(tail.Content, "[only the last 24 lines fit]\n977\n978\n"), tail.Content)
	log, err := os.ReadFile(jb.log.abs)
	require.NoError(t, err)
	require.Len(t, strings.Split(strings.TrimSpace(string(log)), "\n"), 1000)
}

func TestFileSafe(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{in: "session-1", want: "session-1"},
		{in: "job-1", want: "job-1"},
		{in: "a/b", want: "a_b-"},
		{in: "a_b", want: "a_b"},
		{in: "..", want: "_-"},
		{in: "", want: "_-"},
		{in: "x y:z", want: "x_y_z-"},
	}
	for _, tt := range tests {
		got := fileSafe(tt.in)
		require.True(t, strings.HasPrefix(got, tt.want), "fileSafe(%q) = %q", tt.in, got)
		require.Regexp(t, `^[A-Za-z0-9._-]+$`, got)
		require.NotEqual(t, "..", got)
	}
	require.NotEqual(t, fileSafe("a/b"), fileSafe("a_b"))
	require.LessOrEqual(t, len(fileSafe(strings.Repeat("x", 500))), 110)
}

func TestCompleteUTF8(t *testing.T) {
	t.Parallel()
	e := "é" // two bytes
	tests := []struct {
		in   string
		want int
	}{
		{in: "", want: 0},
		{in: "ab", want: 2},
		{in: "a" + e, want: 3},
		{in: "a" + e[:1], want: 1},
		{in: "a" + "€"[:2], want: 1},
		{in: "a\xff", want: 2}, // invalid, not incomplete: shown as U+FFFD
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, completeUTF8([]byte(tt.in)), "%q", tt.in)
	}
}

// A symlink planted where a job's log goes (finding 5 of issue 15) never
// redirects the worker: the log is made afresh beside it, the file the
// link named is untouched; a link planted over a session's directory is
// refused; and job_output does not read through a link swapped in later.
func TestJobLogPlantedSymlink(t *testing.T) {
	t.Parallel()
	h := newJobHarness(t, SandboxOff)
	victim := filepath.Join(t.TempDir(), "victim")
	require.NoError(t, os.WriteFile(victim, []byte("keep me\n"), 0o644))
	logDir := filepath.Join(h.state, "sessions", "s", "jobs")
	require.NoError(t, os.MkdirAll(logDir, 0o700))
	require.NoError(t, os.Symlink(victim, filepath.Join(logDir, "job-1.log")))

	res := h.start(t, "s", "job-1", "echo job wrote this")
	require.False(t, res.IsError, res.Content)
	jb := h.job(t, "s", "job-1")
	waitEnded(t, jb)
	waitLog(t, jb, "job wrote this\n")
	fi, err := os.Lstat(jb.log.abs)
	require.NoError(t, err)
	require.True(t, fi.Mode().IsRegular(), "the log is a file of its own, not the planted link")
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "keep me\n", string(b))

	// A link swapped in for the log afterwards is not read through.
	require.NoError(t, os.Remove(jb.log.abs))
	require.NoError(t, os.Symlink(victim, jb.log.abs))
	out := h.call(t, h.output, "s", JobOutputParams{ID: "job-1", Tail: 5})
	require.Contains(t, out.Content, "[cannot read the log: ")
	require.NotContains(t, out.Content, "keep me")

	// A session directory that is a link out of the state directory.
	outside := t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(h.state, "sessions", "t")))
	res = h.start(t, "t", "job-1", "echo nope")
	require.True(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "cannot create the log of background job job-1: ")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing was written outside the state directory")
}
