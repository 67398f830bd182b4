package tools

import (
	"fmt"
	"os"
	"sync/atomic"
)

// jobLog copies a background job's output from its pipe into its log,
// up to max bytes (ShellConfig.MaxSpillBytes, as a spill) and within what
// the session's quota grants (SessionFiles): a job printing without end
// must not fill the worker's disk, and neither must eight of them. Past
// either bound the output is still read, and discarded, so the job never
// blocks on a full pipe; the log then ends with a note saying where it
// was cut and how much was dropped, and the job's status says so while
// it runs.
type jobLog struct {
	max       int64
	cut       atomic.Bool // the cap was reached
	quotaCut  atomic.Bool // the session's quota was reached first
	quotaNote string
	done      chan struct{}
}

// copyJobLog starts copying r into f and returns at once; f and r are
// closed when r reaches EOF (every process holding the pipe is gone) or
// fails (watch closes r when a process that left the job's group keeps
// it open). take grants bytes from the session's quota.
func copyJobLog(f, r *os.File, max int64, take func(int64) int64, quotaNote string) *jobLog {
	l := &jobLog{max: max, quotaNote: quotaNote, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer f.Close()
		defer r.Close()
		written, total := int64(0), int64(0)
		buf := make([]byte, 32*1024)
		for {
			n, err := r.Read(buf)
			total += int64(n)
			if room := l.max - written; n > 0 && room > 0 && !l.quotaCut.Load() {
				want := min(int64(n), room)
				grant := take(want)
				if grant < want {
					l.quotaCut.Store(true)
				}
				m, werr := f.Write(buf[:grant])
				written += int64(m)
				if werr != nil {
					// The disk is full or the file is gone: drain on, so
					// the job runs to its end; the log stays as it is.
					written = l.max
				}
			}
			if total > l.max {
				l.cut.Store(true)
			}
			if err != nil {
				break // EOF, or watch closed the pipe
			}
		}
		switch {
		case l.quotaCut.Load():
			fmt.Fprintf(f, "\n[%s; the job printed %d bytes, %d are in this log, the rest was discarded]\n", l.quotaNote, total, written)
		case total > l.max:
			fmt.Fprintf(f, "\n[log cut at %d bytes (--max-spill-bytes): the job printed %d, the rest was discarded]\n", l.max, total)
		}
	}()
	return l
}

// note is what the job's status adds once a bound was reached.
func (l *jobLog) note() string {
	switch {
	case l == nil:
		return ""
	case l.quotaCut.Load():
		return "; " + l.quotaNote + ": later output is discarded"
	case l.cut.Load():
		return fmt.Sprintf("; its log reached %d bytes (--max-spill-bytes): later output is discarded", l.max)
	}
	return ""
}
