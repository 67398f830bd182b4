package tools

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// runBackground starts p.Command as the session's job env.JobID and
// returns at once. The job runs as a foreground command would (Shell.start)
// but with its output copied into its log file (capped, see copyJobLog)
// rather than kept for the model, and without a timeout: it runs until it
// exits, job_kill stops it, or the session ends.
func (s *Shell) runBackground(env Env, p ShellParams, dir string, sb *sandbox) (Result, error) {
	if env.Session == "" || env.JobID == "" {
		return Errorf("background jobs need a session: this call has no session or job id, so nothing could list, read or kill the job. Run the command without background."), nil
	}
	if s.jobs == nil {
		return Result{}, errors.New("tool shell: background jobs need a job manager (tools.Config.Jobs)")
	}
	return s.jobs.startJob(env.Session, env.JobID, s.cfg.MaxJobs, func() (*job, Result, error) {
		// In the state directory, never the workspace: a command cannot
		// plant a symlink there to make the worker write elsewhere.
		log, err := s.state.sessionFile(env.Session, stateJobLogDir, env.JobID+".log")
		if err != nil {
			return nil, Errorf("cannot create the log of background job %s: %v", env.JobID, err), nil
		}
		// Made afresh, not appended: a log holds one job's output, also
		// when a new session reuses an old one's id.
		f, err := log.create()
		if err != nil {
			return nil, Errorf("cannot create the log of background job %s: %v", env.JobID, err), nil
		}
		// Through a pipe, not straight into the file, so the log can be
		// capped (copyJobLog).
		r, w, err := os.Pipe()
		if err != nil {
			f.Close()
			return nil, Result{}, fmt.Errorf("create output pipe: %w", err)
		}
		pr, err := s.start(env, sb, dir, p.Command, w, true)
		if err != nil {
			r.Close()
			f.Close()
			res, err := startFailure(err)
			return nil, res, err
		}
		jb := &job{
			id: env.JobID, session: env.Session, run: env.Run, command: p.Command,
			log: log, sandboxed: sb != nil,
			began: pr.began, done: make(chan struct{}),
		}
		// Copying starts before group: a sandbox that fails to set up
		// writes its complaint to the output and must not block on it.
		take := func(n int64) int64 { return s.state.take(env.Session, n) }
		jb.output = copyJobLog(f, r, s.cfg.MaxSpillBytes, take, s.state.quotaNote())
		jb.pgid = pr.group()
		go func() {
			jb.watch(pr.cmd, r)
			pr.close() // the sandbox's network goes with the job
		}()
		if pr.setupErr != nil {
			return nil, Errorf("background job %s did not start: %v", env.JobID, pr.setupErr), nil
		}
		if s.onStart != nil {
			s.onStart(jb.pgid)
		}
		return jb, Result{Content: startText(jb, p.Timeout > 0)}, nil
	})
}

// startText is shell's answer for a background job: what runs, where its
// output goes and the exact calls that read and stop it.
func startText(jb *job, timeoutGiven bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "started background job %s: %s\n", jb.id, oneLine(jb.command))
	fmt.Fprintf(&b, "its output goes to a log the worker keeps outside the workspace (kept after the job ends; read it with job_output)\n")
	fmt.Fprintf(&b, "new output: job_output {\"id\": %q}; the last lines: job_output {\"id\": %q, \"tail\": 20}; stop it: job_kill {\"id\": %q}\n", jb.id, jb.id, jb.id)
	b.WriteString("it runs until it exits, is killed, or the session ends")
	if timeoutGiven {
		b.WriteString("; the timeout you gave does not apply to background jobs")
	}
	b.WriteString("\n")
	return b.String()
}

// oneLine shortens a command for a one-line mention: its first line, at
// most 200 characters, with "…" when something was left out.
func oneLine(cmd string) string {
	line, _, multi := strings.Cut(strings.TrimSpace(cmd), "\n")
	line = strings.TrimSpace(line)
	if r := []rune(line); len(r) > 200 {
		line, multi = string(r[:200]), true
	}
	if multi {
		line += " …"
	}
	return line
}
