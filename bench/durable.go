package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/workflows"
)

// server is the Temporal server the durable runs use: a devserver this
// command started, or one at -address.
type server struct {
	addr string
	cmd  *exec.Cmd
	dir  string // the SQLite file's directory, removed on stop
}

var readyLine = regexp.MustCompile(`devserver ready: temporal=(\S+)`)

// startServer starts the prebuilt devserver with the given dynamic config
// values, its state in memory or (db "file") in an SQLite file of its own,
// or uses addr when set.
func startServer(bin, addr, db string, dynamic []string) (*server, error) {
	if addr != "" {
		return &server{addr: addr}, nil
	}
	store := []string{"--memory"}
	var dir string
	if db == "file" {
		var err error
		if dir, err = os.MkdirTemp("", "bench-devserver-"); err != nil {
			return nil, err
		}
		store = []string{"--db", filepath.Join(dir, "temporal.db")}
	}
	args := append(store, "--port", "0", "--ui-port", "0")
	for _, d := range dynamic {
		args = append(args, "--dynamic-config-value", d)
	}
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
		return nil, fmt.Errorf("start devserver %s: %w", bin, err)
	}
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := readyLine.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
	}()
	select {
	case a := <-ready:
		return &server{addr: a, cmd: cmd, dir: dir}, nil
	case <-time.After(90 * time.Second):
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if dir != "" {
			_ = os.RemoveAll(dir)
		}
		return nil, fmt.Errorf("devserver not ready after 90s")
	}
}

func (s *server) stop() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

// pid is the devserver's process id, 0 for a server at -address.
func (s *server) pid() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// durable is a client and a worker on a task queue of their own: an
// in-process worker, or (w nil) one in a child process (workerproc.go).
type durable struct {
	c     client.Client
	ws    []worker.Worker
	queue string
	opts  runOptions
	seq   atomic.Int64
}

var quiet = sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))

func newDurable(addr string, wd *world, o runOptions) (*durable, error) {
	d, err := dialDurable(addr, wd.queue, o)
	if err != nil {
		return nil, err
	}
	if d.ws, err = startWorkers(d.c, d.queue, wd.acts, wd.reader, wd.isolation(), o); err != nil {
		d.c.Close()
		return nil, err
	}
	return d, nil
}

// startWorkers starts newWorkers' workers, stopping those started when
// one fails.
func startWorkers(c client.Client, queue string, acts *activities.Activities, reader workflows.TranscriptReader, iso isolation, o runOptions) ([]worker.Worker, error) {
	ws := newWorkers(c, queue, acts, reader, iso, o)
	for i, w := range ws {
		if err := w.Start(); err != nil {
			for _, s := range ws[:i] {
				s.Stop()
			}
			return nil, fmt.Errorf("start worker: %w", err)
		}
	}
	return ws, nil
}

// dialDurable is a durable with a client only, for a worker elsewhere.
func dialDurable(addr, queue string, o runOptions) (*durable, error) {
	c, err := client.Dial(o.clientOptions(addr))
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return &durable{c: c, queue: queue, opts: o}, nil
}

// newWorkers are the bench's worker: the session and the plain SDK
// workflow with their activities on queue, and with iso, the activities
// again on the worker's own queue and on the queue its checkouts' calls
// are pinned to, as the product worker polls them (rootWorkers in
// worker/start.go). The SDK's defaults (1,000 workflow task and activity
// slots each, a sticky cache of 10,000) hold 500 sessions at once.
func newWorkers(c client.Client, queue string, acts *activities.Activities, reader workflows.TranscriptReader, iso isolation, o runOptions) []worker.Worker {
	opts := worker.Options{
		MaxConcurrentWorkflowTaskPollers: o.WFTPollers,
		MaxConcurrentActivityTaskPollers: o.ActPollers,
		DisableEagerActivities:           !o.Eager,
	}
	w := worker.New(c, queue, opts)
	sessions := &workflows.Sessions{Transcript: reader}
	w.RegisterWorkflowWithOptions(sessions.AgentSession, workflow.RegisterOptions{Name: workflows.WorkflowType})
	w.RegisterActivity(acts)
	w.RegisterWorkflowWithOptions(benchPlainWorkflow, workflow.RegisterOptions{Name: plainWorkflowType})
	w.RegisterWorkflowWithOptions(benchFloorWorkflow, workflow.RegisterOptions{Name: floorWorkflowType})
	w.RegisterActivity(&plainActivities{})
	ws := []worker.Worker{w}
	for _, q := range iso.queues() {
		qw := worker.New(c, q, opts)
		qw.RegisterActivity(acts)
		ws = append(ws, qw)
	}
	return ws
}

func (d *durable) close() {
	for _, w := range d.ws {
		w.Stop()
	}
	d.c.Close()
}

// session runs one AgentSession of turns tool turns and returns its wall
// time (start request to result) and workflow id.
func (d *durable) session(ctx context.Context, turns int) (time.Duration, string, error) {
	return d.run(ctx, d.input(turns, 1), turns+1)
}

// input is the session input of a session of turns tool turns of calls
// calls each, as every durable run of the bench starts it.
func (d *durable) input(turns, calls int) workflows.SessionInput {
	return workflows.SessionInput{Prompt: prompt(turns, calls), Profile: "build", MaxTurns: turns + 1, LocalReads: workflows.Flag(d.opts.LocalReads), LocalModel: d.opts.LocalModel,
		InPlace: d.opts.Checkout == checkoutInPlace}
}

// run starts a session with in, waits for its result and checks it
// completed after want model calls.
func (d *durable) run(ctx context.Context, in workflows.SessionInput, want int) (time.Duration, string, error) {
	id := fmt.Sprintf("%s-%d", d.queue, d.seq.Add(1))
	// Every session's prompt names it, as people's sessions differ: the
	// transcript store keeps blobs by their content, so sessions with the
	// same prompt in the same workspace would share every blob and skip
	// the writes (a file created and synced) each real session makes.
	in.Prompt += " (" + id + ")"
	start := time.Now()
	run, err := d.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: d.queue, EnableEagerStart: d.opts.EagerStart,
	}, workflows.WorkflowType, in)
	if err != nil {
		return 0, id, fmt.Errorf("start session: %w", err)
	}
	var res workflows.SessionResult
	if err := run.Get(ctx, &res); err != nil {
		return 0, id, fmt.Errorf("session %s: %w", id, err)
	}
	wall := time.Since(start)
	if res.Status != workflows.ResultCompleted || res.Turns != want {
		return wall, id, fmt.Errorf("session %s: status %s after %d turns, want completed after %d", id, res.Status, res.Turns, want)
	}
	if isolated := d.opts.Checkout == checkoutGit || d.opts.Checkout == checkoutCopy; isolated != (res.Branch != "") {
		// A figure for the wrong path would be worse than none.
		return wall, id, fmt.Errorf("session %s: checkout %s, but its result names branch %q", id, d.opts.Checkout, res.Branch)
	}
	return wall, id, nil
}

// history fetches a closed session's whole history.
func (d *durable) history(ctx context.Context, id string) (*historypb.History, error) {
	it := d.c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s: %w", id, err)
		}
		h.Events = append(h.Events, ev)
	}
	return h, nil
}
