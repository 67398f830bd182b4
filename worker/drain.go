package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/worker"

	"github.com/longrun/longrun/tools"
)

// defaultDrainTimeout is how long a stopping worker lets what it runs
// finish: long enough for a test suite or a build, short of what an
// operator waiting on a deploy tolerates.
const defaultDrainTimeout = 10 * time.Minute

// drainFlag is --drain-timeout: how long the worker, on SIGTERM or
// SIGINT, lets its running tool calls and background jobs finish before
// it exits. A command cut off by a restart comes back worker_lost ("may
// or may not have taken effect"); one that finishes while the worker
// drains comes back with its real result.
type drainFlag struct {
	timeout time.Duration
}

// bind reads LONGRUN_DRAIN_TIMEOUT as the flag's default.
func (d *drainFlag) bind(fs *flag.FlagSet, getenv func(string) string) error {
	def, err := envDuration(getenv, "LONGRUN_DRAIN_TIMEOUT", defaultDrainTimeout, "90s or 10m", "stop at once")
	if err != nil {
		return err
	}
	fs.DurationVar(&d.timeout, "drain-timeout", def, "on SIGTERM or SIGINT, stop taking work and let running tool calls and background jobs finish for up to this long before exiting; a second signal stops at once (0: stop at once; env LONGRUN_DRAIN_TIMEOUT)")
	return nil
}

// parse checks the flag once the flags are read.
func (d *drainFlag) parse() error {
	if d.timeout < 0 {
		return fmt.Errorf("--drain-timeout %s: want a duration of 0 or more", d.timeout)
	}
	return nil
}

// held tracks the activities running on this worker's Temporal workers,
// so a draining worker can say what it waits for and when each ends. It
// is a worker interceptor: every activity of every queue passes through
// it, the tools' and the model's alike.
type held struct {
	interceptor.WorkerInterceptorBase
	logger *slog.Logger

	mu       sync.Mutex
	next     int
	running  map[int]heldCall
	draining bool
}

// heldCall is one running activity.
type heldCall struct {
	Session, Activity, ID string
	Began                 time.Time
}

func newHeld(logger *slog.Logger) *held {
	return &held{logger: logger, running: map[int]heldCall{}}
}

// InterceptActivity wraps each activity so held sees it begin and end.
func (h *held) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	a := &heldActivity{h: h}
	a.Next = next
	return a
}

type heldActivity struct {
	interceptor.ActivityInboundInterceptorBase
	h *held
}

func (a *heldActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	info := activity.GetInfo(ctx)
	key := a.h.begin(heldCall{Session: info.WorkflowExecution.ID, Activity: info.ActivityType.Name, ID: info.ActivityID, Began: time.Now()})
	out, err := a.Next.ExecuteActivity(ctx, in)
	a.h.end(key, err)
	return out, err
}

func (h *held) begin(c heldCall) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	h.running[h.next] = c
	return h.next
}

func (h *held) end(key int, err error) {
	h.mu.Lock()
	c := h.running[key]
	delete(h.running, key)
	draining, left := h.draining, len(h.running)
	h.mu.Unlock()
	if draining {
		h.logger.Info("drain: a call finished and its result is recorded", "session", c.Session, "activity", c.Activity,
			"activity_id", c.ID, "took", time.Since(c.Began).Round(time.Millisecond), "error", err != nil, "calls_left", left)
	}
}

// drain marks the start of the drain and returns what runs now, oldest
// first.
func (h *held) drain() []heldCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.draining = true
	out := make([]heldCall, 0, len(h.running))
	for _, c := range h.running {
		out = append(out, c)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Began.Before(out[b].Began) })
	return out
}

// left is what still runs.
func (h *held) left() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.running)
}

// serve starts the workers and runs until the first signal, then drains:
// every worker stops polling at once (no new work comes here; another
// worker takes it), running activities finish and heartbeat meanwhile
// (the SDK cancels their context only once WorkerStopTimeout, the drain
// timeout, has passed), and background jobs may end on their own until
// the same deadline, after which the caller kills what is left. A second
// signal stops at once: what still runs is lost, as before drains
// existed, and comes back worker_lost. Once what ran has finished (or the
// timeout passed), handover, when not nil, hands the checkouts over
// (handover.go); a second signal cuts it short too.
func serve(workers []worker.Worker, sig <-chan os.Signal, timeout time.Duration, h *held, jobs *tools.Jobs, handover func(context.Context), logger *slog.Logger) error {
	for i, w := range workers {
		if err := w.Start(); err != nil {
			for _, started := range workers[:i] {
				started.Stop()
			}
			return fmt.Errorf("start a worker: %w", err)
		}
	}
	s := <-sig
	began := time.Now()
	calls, running := h.drain(), jobs.Running()
	sessions := map[string]bool{}
	for _, c := range calls {
		sessions[c.Session] = true
	}
	for _, j := range running {
		sessions[j.Session] = true
	}
	logger.Info("drain: stopped taking work; waiting for what runs here to finish (a second signal stops at once)",
		"signal", s.String(), "timeout", timeout, "calls", len(calls), "background_jobs", len(running), "sessions", sortedKeys(sessions))
	for _, c := range calls {
		logger.Info("drain: waiting for a call", "session", c.Session, "activity", c.Activity, "activity_id", c.ID,
			"running_for", time.Since(c.Began).Round(time.Second))
	}
	for _, j := range running {
		logger.Info("drain: waiting for a background job", "session", j.Session, "job", j.ID, "command", j.Command)
	}

	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	stopped := make(chan struct{})
	go func() {
		var wg sync.WaitGroup
		for _, w := range workers {
			wg.Add(1)
			go func() { defer wg.Done(); w.Stop() }()
		}
		wg.Wait()
		close(stopped)
	}()
	jobsDone := make(chan struct{})
	go func() {
		defer close(jobsDone)
		for _, j := range running {
			select {
			case <-j.Done:
				logger.Info("drain: a background job ended", "session", j.Session, "job", j.ID)
			case <-deadline.C:
				return
			}
		}
	}()
	for pending := 2; pending > 0; pending-- {
		select {
		case <-stopped:
			stopped = nil
		case <-jobsDone:
			jobsDone = nil
		case s := <-sig:
			logger.Warn("drain: second signal, stopping at once; what still runs is lost", "signal", s.String(),
				"calls", h.left(), "background_jobs", len(jobs.Running()))
			return nil
		}
	}
	if n, jn := h.left(), len(jobs.Running()); n > 0 || jn > 0 {
		logger.Warn("drain: timeout reached; stopping what still runs", "timeout", timeout, "calls", n, "background_jobs", jn)
	} else {
		logger.Info("drain: done, nothing was cut off", "took", time.Since(began).Round(time.Millisecond))
	}
	if handover == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), handOverTimeout)
	defer cancel()
	handed := make(chan struct{})
	go func() { defer close(handed); handover(ctx) }()
	select {
	case <-handed:
	case s := <-sig:
		logger.Warn("drain: second signal, stopping the hand-over of the checkouts at once", "signal", s.String())
		cancel()
		<-handed
	}
	return nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
