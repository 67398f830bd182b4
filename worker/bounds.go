package main

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/tools"
)

// bounds are the flags that bound what one session may hold on this
// worker: disk for its spilled output and job logs, background jobs at
// once, the memory of a sandboxed command's /tmp, and how soon the jobs
// and files of a session that ended are reaped.
type bounds struct {
	quota, tmp, maxJobs string
	reapEvery           time.Duration
}

// defaultReapEvery is how often the reaper asks Temporal about the
// sessions with jobs or files here: well within an activity's heartbeat
// timeout (10 s), so a terminated session's jobs are gone within one.
const defaultReapEvery = 5 * time.Second

// bind reads the environment as the flags' defaults.
func (b *bounds) bind(fs *flag.FlagSet, getenv func(string) string) {
	fs.StringVar(&b.quota, "session-quota-bytes", or(getenv("LONGRUN_SESSION_QUOTA_BYTES"), "1G"),
		"most disk one session's spilled output and background job logs take together on this worker, e.g. 1G or 500M (K, M, G, T are powers of 1024); past it their output is cut and the tool result says so; the files are deleted when the session ends (env LONGRUN_SESSION_QUOTA_BYTES)")
	fs.StringVar(&b.tmp, "sandbox-tmp-bytes", or(getenv("LONGRUN_SANDBOX_TMP_BYTES"), "512M"),
		"size of a sandboxed command's private /tmp, a tmpfs held in this host's memory while the command or job runs, e.g. 512M (the hidden home gets 64M, other hidden directories 1M; env LONGRUN_SANDBOX_TMP_BYTES)")
	fs.StringVar(&b.maxJobs, "max-jobs", or(getenv("LONGRUN_MAX_JOBS"), strconv.Itoa(tools.DefaultMaxJobs)),
		"most background jobs one session may run at once on this worker; a start past it is refused, naming job_kill (env LONGRUN_MAX_JOBS)")
	every := defaultReapEvery
	if v, err := time.ParseDuration(getenv("LONGRUN_REAP_INTERVAL")); err == nil && v > 0 {
		every = v
	}
	fs.DurationVar(&b.reapEvery, "reap-interval", every,
		"how often the worker asks Temporal which sessions with background jobs or files here have ended (cancelled, terminated, timed out, reset), to kill those jobs and delete those files (env LONGRUN_REAP_INTERVAL)")
}

// parse checks the flags and sets them in the shell's configuration.
func (b *bounds) parse(shell *tools.ShellConfig) error {
	quota, err := positiveSize("--session-quota-bytes / LONGRUN_SESSION_QUOTA_BYTES", b.quota)
	if err != nil {
		return err
	}
	tmp, err := positiveSize("--sandbox-tmp-bytes / LONGRUN_SANDBOX_TMP_BYTES", b.tmp)
	if err != nil {
		return err
	}
	jobs, err := strconv.Atoi(b.maxJobs)
	if err != nil || jobs <= 0 {
		return fmt.Errorf("--max-jobs / LONGRUN_MAX_JOBS %q: want a positive number of jobs", b.maxJobs)
	}
	if b.reapEvery <= 0 {
		return fmt.Errorf("--reap-interval %s: want a positive duration such as 5s", b.reapEvery)
	}
	shell.SessionQuotaBytes, shell.TmpBytes, shell.MaxJobs = quota, tmp, jobs
	return nil
}

// positiveSize reads a size flag that must bound something: 0 is refused,
// not taken as "no bound".
func positiveSize(name, v string) (int64, error) {
	n, err := checkout.ParseSize(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	if n <= 0 {
		return 0, fmt.Errorf("%s %q: want a positive size such as 1G or 500M", name, v)
	}
	return n, nil
}
