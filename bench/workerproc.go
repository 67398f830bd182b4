package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/longrun/longrun/transcript"
	"github.com/longrun/longrun/workflows"
)

// The concurrency scenario runs its worker in a child process (this
// binary with workerCmd first), so the worker's resident set is measured
// alone: the scripted model (which keeps every request it was sent), the
// client and the baseline loops stay in the bench process.

// workerCmd as the first argument makes the binary a worker only.
const workerCmd = "worker-child"

// workerReady is the line the child prints once it polls.
const workerReady = "bench worker ready"

// workerProc is a worker running in a child process.
type workerProc struct {
	cmd *exec.Cmd
}

// startWorkerProc starts a worker for queue on the server at addr whose
// activities call the model at modelURL in the workspace dir, with the
// state directory state ("" for none: its sessions run in dir) and, with
// store, a transcript store.
func startWorkerProc(addr, queue, modelURL, dir, state string, store bool, o runOptions) (*workerProc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self, workerCmd,
		"-address", addr, "-queue", queue, "-model", modelURL, "-dir", dir,
		"-wft-pollers", strconv.Itoa(o.WFTPollers), "-activity-pollers", strconv.Itoa(o.ActPollers),
		"-eager="+strconv.FormatBool(o.Eager), "-gzip="+strconv.FormatBool(o.Gzip),
		"-state", state, "-store="+strconv.FormatBool(store))
	cmd.Stderr = os.Stderr
	// The worker must not outlive a bench that dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start worker process: %w", err)
	}
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), workerReady) {
				close(ready)
			}
		}
	}()
	select {
	case <-ready:
		return &workerProc{cmd: cmd}, nil
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("worker process not ready after 30s")
	}
}

func (p *workerProc) pid() int { return p.cmd.Process.Pid }

// settle asks the worker to return its free memory to the system, so the
// next measurement starts from what it holds, not from the last peak.
func (p *workerProc) settle() {
	_ = p.cmd.Process.Signal(syscall.SIGUSR1)
	time.Sleep(300 * time.Millisecond)
}

func (p *workerProc) stop() {
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// workerMain is the child: dial, run the bench's worker until interrupted;
// SIGUSR1 frees memory.
func workerMain(args []string) error {
	fs := flag.NewFlagSet(workerCmd, flag.ContinueOnError)
	addr := fs.String("address", "", "Temporal host:port")
	queue := fs.String("queue", "", "task queue")
	model := fs.String("model", "", "the scripted model's base URL")
	dir := fs.String("dir", "", "the workspace")
	state := fs.String("state", "", "the worker's state directory (empty: none)")
	withStore := fs.Bool("store", false, "keep a transcript store")
	var o runOptions
	fs.IntVar(&o.WFTPollers, "wft-pollers", 0, "")
	fs.IntVar(&o.ActPollers, "activity-pollers", 0, "")
	fs.BoolVar(&o.Eager, "eager", false, "")
	fs.BoolVar(&o.Gzip, "gzip", false, "")
	if err := fs.Parse(args); err != nil {
		return err
	}
	iso := isolationFor(*queue, *state)
	// Interfaces left nil without a store: a nil *transcript.Cache in
	// them would be a store that is there.
	var (
		store  transcript.Store
		reader workflows.TranscriptReader
	)
	if *withStore {
		cache, err := openStore(*dir, *state)
		if err != nil {
			return err
		}
		store, reader = cache, cache
	}
	acts, err := newActivities(*model, *dir, store, iso)
	if err != nil {
		return err
	}
	c, err := client.Dial(o.clientOptions(*addr))
	if err != nil {
		return fmt.Errorf("dial %s: %w", *addr, err)
	}
	defer c.Close()
	ws, err := startWorkers(c, *queue, acts, reader, iso, o)
	if err != nil {
		return err
	}
	defer func() {
		for _, w := range ws {
			w.Stop()
		}
	}()
	fmt.Println(workerReady)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM, syscall.SIGUSR1)
	for s := range sig {
		if s != syscall.SIGUSR1 {
			return nil
		}
		runtime.GC()
		debug.FreeOSMemory()
	}
	return nil
}
