package tools

import (
	"fmt"
	"os"
	"sync/atomic"
)

// jobLog copies a background job's output from its pipe into its log,
// up to max bytes (ShellConfig.MaxSpillBytes, as a spill): a job printing
// without end must not fill the worker's disk. Past the cap the output is
// still read, and discarded, so the job never blocks on a full pipe; the
// log then ends with a note saying where it was cut and how much was
// dropped, and the job's status says so while it runs.
type jobLog struct {
	max  int64
	cut  atomic.Bool // the cap was reached
	done chan struct{}
}

// copyJobLog starts copying r into f and returns at once; f and r are
// closed when r reaches EOF (every process holding the pipe is gone) or
// fails (watch closes r when a process that left the job's group keeps
// it open).
func copyJobLog(f, r *os.File, max int64) *jobLog {
	l := &jobLog{max: max, done: make(chan struct{})}
	go func() {
		defer close(l.done)
		defer f.Close()
		defer r.Close()
		written, total := int64(0), int64(0)
		buf := make([]byte, 32*1024)
		for {
			n, err := r.Read(buf)
			total += int64(n)
			if room := l.max - written; n > 0 && room > 0 {
				m, werr := f.Write(buf[:min(int64(n), room)])
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
		if total > l.max {
			fmt.Fprintf(f, "\n[log cut at %d bytes (--max-spill-bytes): the job printed %d, the rest was discarded]\n", l.max, total)
		}
	}()
	return l
}

// note is what the job's status adds once the cap was reached.
func (l *jobLog) note() string {
	if l == nil || !l.cut.Load() {
		return ""
	}
	return fmt.Sprintf("; its log reached %d bytes (--max-spill-bytes): later output is discarded", l.max)
}
