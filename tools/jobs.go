package tools

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Why a job was killed, as its status says.
const (
	killByTool     = "job_kill"
	killBySession  = "session ended"
	killByShutdown = "worker shut down"
)

// ErrJobsClosed is returned when a background job is asked for after the
// worker began shutting down: the job would have nobody to kill it.
var ErrJobsClosed = errors.New("background jobs: the worker is shutting down")

// Jobs holds the background jobs of one worker process. Jobs are processes
// of this process, so only this worker can read or stop them: the session
// routes every job call to this worker's own task queue, and kills its jobs
// there when it ends (KillSession). A job belongs to the session (workflow
// id) that started it; the tools never show one session another's jobs.
type Jobs struct {
	// startMu serialises starts, so a retried start cannot race the first
	// one into a second process; it is not held by reads or kills.
	startMu sync.Mutex
	mu      sync.Mutex
	bySess  map[string][]*job // in start order
	closed  bool
}

// NewJobs returns an empty job manager; the worker makes one and closes it
// at shutdown.
func NewJobs() *Jobs {
	return &Jobs{bySess: map[string][]*job{}}
}

// job is one background command.
type job struct {
	id, session, command string
	run                  string // the workflow run that started it (Env.Run)
	// log is where the job's output goes: sessions/<session>/jobs/<id>
	// in the state directory, outside the workspace, kept after the job
	// ends; job_output reads it by session and job id only.
	log stateFile
	// output copies the job's pipe into log, capped; done closes only
	// once it has finished, so a job that ended has its whole log.
	output    *jobLog
	pgid      int
	sandboxed bool
	began     time.Time
	started   Result // what shell answered; a retry gets it again
	done      chan struct{}

	mu      sync.Mutex
	ended   time.Time
	waitErr error
	killBy  string         // who stopped it, "" if nobody (yet)
	killSig syscall.Signal // the last signal we sent
	readOff int64          // how far job_output has shown the log
}

// startJob runs launch for the session's job id unless that job exists
// already, in which case its original start result is returned: an
// activity retried after the job started must not start a second process.
// launch opens the log and starts the command (Shell.runBackground). A
// session already running maxJobs jobs (> 0) is refused a new one: each
// holds processes, a sandbox's memory and a log on the worker.
func (j *Jobs) startJob(session, id string, maxJobs int, launch func() (*job, Result, error)) (Result, error) {
	j.startMu.Lock()
	defer j.startMu.Unlock()
	j.mu.Lock()
	closed := j.closed
	existing := j.find(session, id)
	var running []string
	for _, jb := range j.bySess[session] {
		if jb.running() {
			running = append(running, jb.id)
		}
	}
	j.mu.Unlock()
	switch {
	case existing != nil:
		return existing.started, nil
	case closed:
		return Result{}, ErrJobsClosed
	case maxJobs > 0 && len(running) >= maxJobs:
		return Errorf("background job refused: this session already runs %d background jobs, the most one session may on this worker (--max-jobs). "+
			"Stop one it no longer needs with job_kill {\"id\": %q} (running: %s), or wait for one to end, then start this again.",
			len(running), running[0], strings.Join(running, ", ")), nil
	}
	jb, res, err := launch()
	if err != nil || jb == nil {
		return res, err
	}
	jb.started = res
	j.mu.Lock()
	j.bySess[session] = append(j.bySess[session], jb)
	j.mu.Unlock()
	return res, nil
}

// find returns the session's job with that id; j.mu is held.
func (j *Jobs) find(session, id string) *job {
	for _, jb := range j.bySess[session] {
		if jb.id == id {
			return jb
		}
	}
	return nil
}

// lookup returns the session's job, or the error result that lists the
// jobs the session has on this worker (or says the call has no session).
func (j *Jobs) lookup(session, id string) (*job, *Result) {
	if session == "" {
		res := Errorf("background jobs need a session, and this call has none")
		return nil, &res
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if jb := j.find(session, id); jb != nil {
		return jb, nil
	}
	var ids []string
	for _, jb := range j.bySess[session] {
		ids = append(ids, jb.id)
	}
	have := "it has none here"
	if len(ids) > 0 {
		have = "its jobs here: " + strings.Join(ids, ", ")
	}
	res := Errorf("no background job %q in this session on this worker; %s", id, have)
	return nil, &res
}

// list returns the session's jobs in start order.
func (j *Jobs) list(session string) []*job {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]*job(nil), j.bySess[session]...)
}

// JobRun is a session and the run of its workflow that started jobs.
type JobRun struct{ Session, Run string }

// Runs returns the runs that have running jobs here, sorted: the
// worker's reaper asks Temporal whether each is still running.
func (j *Jobs) Runs() []JobRun {
	j.mu.Lock()
	defer j.mu.Unlock()
	seen := map[JobRun]bool{}
	var out []JobRun
	for s, js := range j.bySess {
		for _, jb := range js {
			if r := (JobRun{s, jb.run}); jb.running() && !seen[r] {
				seen[r] = true
				out = append(out, r)
			}
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Session != out[b].Session {
			return out[a].Session < out[b].Session
		}
		return out[a].Run < out[b].Run
	})
	return out
}

// KillRun stops the jobs one run of the session started (all of the
// session's when run is ""), as KillSession does, for a run that ended
// without the session ending the jobs itself: terminated, timed out,
// reset. It returns the ids of the jobs it stopped.
func (j *Jobs) KillRun(session, run string) []string {
	if run == "" {
		return j.KillSession(session)
	}
	j.startMu.Lock()
	j.mu.Lock()
	var kill, keep []*job
	for _, jb := range j.bySess[session] {
		if jb.run == run {
			kill = append(kill, jb)
		} else {
			keep = append(keep, jb)
		}
	}
	if len(keep) == 0 {
		delete(j.bySess, session)
	} else {
		j.bySess[session] = keep
	}
	j.mu.Unlock()
	j.startMu.Unlock()
	return killJobs(kill, killBySession)
}

// KillSession stops every running job of the session (SIGTERM to its
// process group, SIGKILL after the shell's grace period) and forgets the
// session's jobs; their logs stay in the state directory. It returns the ids of
// the jobs it stopped. Forgetting matters because a workflow id can be
// reused: a new session under the same id must not be handed the old
// session's job-1 as if its own start were a retry.
func (j *Jobs) KillSession(session string) []string {
	// Taking startMu too means a start under way is either in the list
	// already or starts after the kill, never lost between the two.
	j.startMu.Lock()
	j.mu.Lock()
	jobs := j.bySess[session]
	delete(j.bySess, session)
	j.mu.Unlock()
	j.startMu.Unlock()
	return killJobs(jobs, killBySession)
}

// Close stops every job of every session; the worker calls it when it
// shuts down, and no job starts afterwards.
func (j *Jobs) Close() {
	j.startMu.Lock()
	j.mu.Lock()
	j.closed = true
	var jobs []*job
	for _, js := range j.bySess {
		jobs = append(jobs, js...)
	}
	j.bySess = map[string][]*job{}
	j.mu.Unlock()
	j.startMu.Unlock()
	killJobs(jobs, killByShutdown)
}

// killJobs stops the jobs together, so one grace period covers them all,
// and returns the ids of those that were still running.
func killJobs(jobs []*job, why string) []string {
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		killed []string
	)
	for _, jb := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if jb.kill(why) {
				mu.Lock()
				killed = append(killed, jb.id)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	sort.Strings(killed)
	return killed
}

// watch reaps the job's process and records how it ended. What the
// command left running in its group dies with it, as after a foreground
// command: a job that has ended must not leave processes nobody can see.
// The job counts as ended only once its log is complete; a process that
// left the group (unsandboxed, setsid) and holds the pipe open gets
// shellDrainTimeout, then out, the pipe's read end, is closed under it.
func (jb *job) watch(cmd *exec.Cmd, out *os.File) {
	err := cmd.Wait()
	_ = syscall.Kill(-jb.pgid, syscall.SIGKILL)
	if jb.output != nil {
		select {
		case <-jb.output.done:
		case <-time.After(shellDrainTimeout):
			out.Close()
			<-jb.output.done
		}
	}
	jb.mu.Lock()
	jb.ended, jb.waitErr = time.Now(), err
	jb.mu.Unlock()
	close(jb.done)
}

// kill stops the job's process group: SIGTERM, then SIGKILL after the
// shell's grace period. It reports whether the job was running; a job
// that already ended is left as it is.
func (jb *job) kill(why string) bool {
	jb.mu.Lock()
	select {
	case <-jb.done:
		jb.mu.Unlock()
		return false
	default:
	}
	if jb.killBy == "" {
		jb.killBy = why
	}
	jb.killSig = syscall.SIGTERM
	jb.mu.Unlock()
	_ = syscall.Kill(-jb.pgid, syscall.SIGTERM)
	select {
	case <-jb.done:
		return true
	case <-time.After(shellKillGrace):
	}
	jb.mu.Lock()
	jb.killSig = syscall.SIGKILL
	jb.mu.Unlock()
	_ = syscall.Kill(-jb.pgid, syscall.SIGKILL)
	select {
	case <-jb.done:
	case <-time.After(shellDrainTimeout):
		// The group is dead; only bwrap, outside it, can still be
		// tearing down. It dies with its sandbox's init.
	}
	return true
}

// status is one line saying where the job is: "running for 4.2s",
// "exited with code 0 after 3.1s", "killed by SIGTERM (job_kill) after 2.0s".
func (jb *job) status() string {
	jb.mu.Lock()
	defer jb.mu.Unlock()
	if jb.ended.IsZero() {
		return "running for " + seconds(time.Since(jb.began)) + jb.output.note()
	}
	after := seconds(jb.ended.Sub(jb.began))
	if jb.killBy != "" {
		return fmt.Sprintf("killed by %s (%s) after %s", signalName(jb.killSig), jb.killBy, after)
	}
	var ee *exec.ExitError
	switch {
	case jb.waitErr == nil:
		return "exited with code 0 after " + after
	case errors.As(jb.waitErr, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("killed by signal %s after %s", signalName(ws.Signal()), after)
		}
		code := ee.ExitCode()
		if sig, ok := sandboxSignal(code, jb.sandboxed); ok {
			return fmt.Sprintf("exited with code %d (killed by signal %s?) after %s", code, signalName(sig), after)
		}
		return fmt.Sprintf("exited with code %d after %s", code, after)
	}
	return fmt.Sprintf("failed: %v after %s", jb.waitErr, after)
}

// running reports whether the job's process has not ended yet.
func (jb *job) running() bool {
	select {
	case <-jb.done:
		return false
	default:
		return true
	}
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// signalName is the conventional name of common signals (SIGTERM), which
// the model knows better than Go's descriptions ("terminated").
func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGTERM: "SIGTERM", syscall.SIGKILL: "SIGKILL", syscall.SIGINT: "SIGINT",
		syscall.SIGHUP: "SIGHUP", syscall.SIGQUIT: "SIGQUIT", syscall.SIGABRT: "SIGABRT",
		syscall.SIGSEGV: "SIGSEGV", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
		syscall.SIGILL: "SIGILL", syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM",
		syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2",
	}
	if n, ok := names[sig]; ok {
		return n
	}
	return sig.String()
}

// fileSafe makes a session or job id a file name: letters, digits, '.',
// '-' and '_' are kept, anything else becomes '_', and then a short hash
// of the original is appended, so "a/b" and "a_b" do not share a log.
func fileSafe(s string) string {
	var b strings.Builder
	changed := false
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	out := b.String()
	if len(out) > 100 {
		out, changed = out[:100], true
	}
	if out == "" || strings.Trim(out, ".") == "" {
		out, changed = "_", true
	}
	if !changed {
		return out
	}
	sum := sha256.Sum256([]byte(s))
	return out + "-" + hex.EncodeToString(sum[:4])
}
