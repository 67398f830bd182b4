package tools

import "sort"

// RunningJob is a background job whose process has not ended, as the
// worker sees it when it drains before a restart.
type RunningJob struct {
	Session, ID, Command string
	// Done is closed once the job has ended and its log is complete.
	Done <-chan struct{}
}

// Running returns the jobs still running, sorted by session and id. A
// draining worker waits on each job's Done, up to its drain timeout, and
// then kills what is left (Close): a job that finishes within the
// timeout keeps its whole output instead of dying with the worker.
func (j *Jobs) Running() []RunningJob {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []RunningJob
	for s, js := range j.bySess {
		for _, jb := range js {
			if jb.running() {
				out = append(out, RunningJob{Session: s, ID: jb.id, Command: jb.command, Done: jb.done})
			}
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Session != out[b].Session {
			return out[a].Session < out[b].Session
		}
		return out[a].ID < out[b].ID
	})
	return out
}
