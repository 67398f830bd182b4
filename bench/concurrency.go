package main

import (
	"context"
	"fmt"
	"io"
	"time"
)

// concurrency: N sessions at once on one worker (a child process, so its
// memory is its own), zero-latency model; against N plain SDK workflows of
// the same shape on that worker (Temporal's ceiling here) and N baseline
// loops at once in the bench process.
func concurrency(ctx context.Context, c Config, srv *server, out io.Writer) error {
	wd, err := newWorld(0, c.Opts.Checkout)
	if err != nil {
		return err
	}
	defer wd.close()
	queue := wd.queue
	wp, err := startWorkerProc(srv.addr, queue, wd.model.URL(), wd.dir, wd.state, c.Store, c.Opts)
	if err != nil {
		return err
	}
	defer wp.stop()
	d, err := dialDurable(srv.addr, queue, c.Opts)
	if err != nil {
		return err
	}
	defer d.close()
	if _, err := runBaseline(ctx, wd.baseline(), 2); err != nil {
		return fmt.Errorf("warm-up baseline: %w", err)
	}
	if _, _, err := d.session(ctx, 2); err != nil {
		return fmt.Errorf("warm-up session: %w", err)
	}
	if _, err := d.plain(ctx, 2); err != nil {
		return fmt.Errorf("warm-up plain workflow: %w", err)
	}
	runs := min(c.Runs, 3)
	fmt.Fprintf(out, "### concurrency: N sessions of %d tool turns at once, one worker, zero-latency model, checkout %s, store %v, %d runs\n\n", c.ConcTurns, c.Opts.Checkout, c.Store, runs)
	fmt.Fprintf(out, "| N | durable steps/s | plain SDK steps/s | baseline steps/s | durable/plain | durable/baseline | worker RSS per session KiB | worker RSS per plain workflow KiB | devserver peak RSS MiB |\n")
	fmt.Fprintf(out, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, n := range c.Sessions {
		var dsteps, psteps, bsteps, dp, db, dper, pper []float64
		for r := 0; r < runs; r++ {
			dw, dkb, err := measured(wp, n, func() error { _, _, err := d.session(ctx, c.ConcTurns); return err })
			if err != nil {
				return err
			}
			pw, pkb, err := measured(wp, n, func() error { _, err := d.plain(ctx, c.ConcTurns); return err })
			if err != nil {
				return err
			}
			bw, err := parallel(n, func() error { _, err := runBaseline(ctx, wd.baseline(), c.ConcTurns); return err })
			if err != nil {
				return err
			}
			steps := float64(n * c.ConcTurns)
			ds, ps, bs := steps/dw.Seconds(), steps/pw.Seconds(), steps/bw.Seconds()
			dsteps, psteps, bsteps = append(dsteps, ds), append(psteps, ps), append(bsteps, bs)
			dp, db = append(dp, ds/ps), append(db, ds/bs)
			dper, pper = append(dper, dkb), append(pper, pkb)
		}
		fmt.Fprintf(out, "| %d | %s | %s | %s | %s | %s | %s | %s | %.0f |\n", n,
			summarize(dsteps).cell(0), summarize(psteps).cell(0), summarize(bsteps).cell(0),
			summarize(dp).cell(3), summarize(db).cell(3), summarize(dper).cell(0), summarize(pper).cell(0),
			float64(rssKB(srv.pid(), "VmHWM"))/1024)
	}
	fmt.Fprintf(out, "\nA step is a tool turn (a model call and a tool call). Plain SDK: a workflow of the same shape with trivial in-process activities and the session's activity options. "+
		"Worker RSS: the worker process alone (a child of the bench running only the Temporal worker; the scripted model, the client and the baseline loops run in the bench process), "+
		"its peak resident set while the N ran minus its resident set just before (after a GC returning free memory), over N. Devserver: its peak resident set since it started.\n\n")
	return nil
}

// measured runs f n times at once, as parallel does, and also returns the
// worker's resident set growth per run of f in KiB.
func measured(wp *workerProc, n int, f func() error) (time.Duration, float64, error) {
	wp.settle()
	before := rssKB(wp.pid(), "VmRSS")
	peak := before
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				peak = max(peak, rssKB(wp.pid(), "VmRSS"))
			}
		}
	}()
	wall, err := parallel(n, f)
	close(stop)
	<-done // peak is ours again
	return wall, float64(peak-before) / float64(n), err
}
