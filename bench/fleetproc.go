package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The fleet's workers are the product's own longrun-worker processes,
// each with a state and config directory of its own (a machine), all
// on one workspace repository, one transcript directory (a bucket the
// machines share) and one bare repository as the checkpoint remote.

// buildWorker builds longrun-worker into dir (go build of the module's
// worker package), for a run given no -worker-bin.
func buildWorker(dir string) (string, error) {
	bin := filepath.Join(dir, "longrun-worker")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/longrun/longrun/worker").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build the worker: %v: %s", err, out)
	}
	return bin, nil
}

// fleetWorker is one machine of the fleet: its binary, flags,
// environment and log (appended to across restarts), and the process
// running now.
type fleetWorker struct {
	n        int
	bin      string
	args     []string
	env      []string
	log      string
	cmd      *exec.Cmd
	done     chan struct{}
	readyOff int64 // where in the log the running process's output begins
}

// start starts the worker and waits for its "worker started" line.
func (w *fleetWorker) start() error {
	f, err := os.OpenFile(w.log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	off, _ := f.Seek(0, 2)
	fmt.Fprintf(f, "=== start worker %d at %s\n", w.n, time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(w.bin, w.args...)
	cmd.Env = append(os.Environ(), w.env...)
	cmd.Stdout, cmd.Stderr = f, f
	// A worker must not outlive a bench that dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("start worker %d: %w", w.n, err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); f.Close(); close(done) }()
	w.cmd, w.done, w.readyOff = cmd, done, off
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(w.logSince(off), "msg=\"worker started\"") {
			return nil
		}
		select {
		case <-done:
			return fmt.Errorf("worker %d exited at start: %s", w.n, tail(w.logSince(off), 2000))
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("worker %d not started after 60s: %s", w.n, tail(w.logSince(off), 2000))
}

// logSince is the worker's log from offset off.
func (w *fleetWorker) logSince(off int64) string {
	b, err := os.ReadFile(w.log)
	if err != nil || int64(len(b)) < off {
		return ""
	}
	return string(b[off:])
}

// drained is what one drain did, read from the worker's log.
type drained struct {
	Took          time.Duration
	Calls, Jobs   int // running when SIGTERM came
	Clean         bool
	Pushed, There int // checkpoints handed over: pushed, already in the remote
}

var (
	drainBegin = regexp.MustCompile(`drain: stopped taking work.* calls=(\d+) background_jobs=(\d+)`)
	handedOver = regexp.MustCompile(`drain: checkouts handed over.* pushed=(\d+) already_in_remote=(\d+)`)
)

// drain sends SIGTERM and waits for the worker to exit (at most limit),
// then reads what its log says of the drain.
func (w *fleetWorker) drain(limit time.Duration) (drained, error) {
	off := w.readyOff
	began := time.Now()
	if err := w.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return drained{}, err
	}
	select {
	case <-w.done:
	case <-time.After(limit):
		_ = w.cmd.Process.Kill()
		<-w.done
		return drained{}, fmt.Errorf("worker %d still running %s after SIGTERM", w.n, limit)
	}
	d := drained{Took: time.Since(began)}
	log := w.logSince(off)
	if m := drainBegin.FindStringSubmatch(log); m != nil {
		d.Calls, _ = strconv.Atoi(m[1])
		d.Jobs, _ = strconv.Atoi(m[2])
	}
	d.Clean = strings.Contains(log, "drain: done, nothing was cut off")
	if m := handedOver.FindStringSubmatch(log); m != nil {
		d.Pushed, _ = strconv.Atoi(m[1])
		d.There, _ = strconv.Atoi(m[2])
	}
	return d, nil
}

// stop ends the worker at the close of the bench: SIGTERM, then a kill
// if it has not exited within limit.
func (w *fleetWorker) stop(limit time.Duration) {
	if w.cmd == nil {
		return
	}
	select {
	case <-w.done:
		return
	default:
	}
	_ = w.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-w.done:
	case <-time.After(limit):
		_ = w.cmd.Process.Kill()
		<-w.done
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
