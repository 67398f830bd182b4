package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// pair sets up one world and one durable worker on it, and warms both up
// with a two-turn session each so the first measured run pays no
// connection or cache set-up.
func pair(ctx context.Context, c Config, srv *server, latency time.Duration) (*world, *durable, error) {
	wd, err := newWorld(latency, c.Opts.Checkout)
	if err != nil {
		return nil, nil, err
	}
	if c.Store {
		// The product's default: the worker keeps the conversation in a
		// transcript store; the baseline keeps it in memory.
		if wd.base, err = newActivities(wd.model.URL(), wd.dir, nil, isolation{}); err != nil {
			wd.close()
			return nil, nil, err
		}
		if err := wd.withStore(); err != nil {
			wd.close()
			return nil, nil, err
		}
	}
	d, err := newDurable(srv.addr, wd, c.Opts)
	if err != nil {
		wd.close()
		return nil, nil, err
	}
	if _, err := runBaseline(ctx, wd.baseline(), 2); err != nil {
		return nil, nil, fmt.Errorf("warm-up baseline: %w", err)
	}
	if _, _, err := d.session(ctx, 2); err != nil {
		return nil, nil, fmt.Errorf("warm-up session: %w", err)
	}
	return wd, d, nil
}

// ratio: the same session, baseline and durable, runs times, alternating
// which goes first.
func ratio(ctx context.Context, c Config, srv *server, out io.Writer) error {
	wd, d, err := pair(ctx, c, srv, c.Latency)
	if err != nil {
		return err
	}
	defer wd.close()
	defer d.close()
	var base, dur, rat, bModel, dModel []float64
	var before, models, between, after, outside []float64
	var floor, fRat, dfRat []float64
	model := ms(c.Latency) * float64(c.Turns+1) // the model calls' own time
	for i := 0; i < c.Runs; i++ {
		var b loopResult
		var dw time.Duration
		runB := func() error { var err error; b, err = runBaseline(ctx, wd.baseline(), c.Turns); return err }
		runD := func() error {
			var id string
			var err error
			dw, id, err = d.session(ctx, c.Turns)
			if err != nil {
				return err
			}
			h, err := d.history(ctx, id)
			if err != nil {
				return err
			}
			p := phases(h, dw)
			before, models, between = append(before, ms(p.Before)), append(models, ms(p.Models)), append(between, ms(p.Between))
			after, outside = append(after, ms(p.After)), append(outside, ms(p.Outside))
			return nil
		}
		var fw time.Duration
		runF := func() error { var err error; fw, _, err = d.floor(ctx, c.Turns, c.Latency); return err }
		order := []func() error{runB, runD, runF}
		if i%2 == 1 {
			order = []func() error{runF, runD, runB}
		}
		for _, run := range order {
			if err := run(); err != nil {
				return err
			}
		}
		floor, fRat, dfRat = append(floor, ms(fw)), append(fRat, ms(fw)/ms(b.Wall)), append(dfRat, ms(dw)/ms(fw))
		base, dur, rat = append(base, ms(b.Wall)), append(dur, ms(dw)), append(rat, ms(dw)/ms(b.Wall))
		bModel, dModel = append(bModel, ms(b.Wall)/model), append(dModel, ms(dw)/model)
	}
	fmt.Fprintf(out, "### durable vs baseline: %d tool turns + final text, model latency %s, checkout %s, %d runs\n\n", c.Turns, c.Latency, c.Opts.Checkout, c.Runs)
	fmt.Fprintf(out, "| loop | wall ms, median (min–max) |\n|---|---:|\n")
	fmt.Fprintf(out, "| baseline (in-process, no Temporal) | %s |\n", summarize(base).cell(0))
	fmt.Fprintf(out, "| durable (AgentSession) | %s |\n", summarize(dur).cell(0))
	fmt.Fprintf(out, "| **ratio durable/baseline** (goal ≤ 1.05) | %s |\n", summarize(rat).cell(3))
	fmt.Fprintf(out, "| baseline wall / model time (%d calls × %s) | %s |\n", c.Turns+1, c.Latency, summarize(bModel).cell(3))
	fmt.Fprintf(out, "| durable wall / model time | %s |\n", summarize(dModel).cell(3))
	fmt.Fprintf(out, "| floor: a plain SDK workflow of the session's shape (model activity that only waits, read as a local activity), wall ms | %s |\n", summarize(floor).cell(0))
	fmt.Fprintf(out, "| floor/baseline: Temporal alone on this machine | %s |\n", summarize(fRat).cell(3))
	fmt.Fprintf(out, "| durable/floor: what the session adds to it | %s |\n\n", summarize(dfRat).cell(3))
	fmt.Fprintf(out, "Where a durable session's wall went, from its history (ms):\n\n| part | ms |\n|---|---:|\n")
	fmt.Fprintf(out, "| before the first model call (checkout open, first workflow task) | %s |\n", summarize(before).cell(1))
	fmt.Fprintf(out, "| model activities, scheduled to completed (%d calls) | %s |\n", c.Turns+1, summarize(models).cell(1))
	fmt.Fprintf(out, "| between a model call's completion and the next one's scheduling | %s |\n", summarize(between).cell(1))
	fmt.Fprintf(out, "| after the last model call (checkout close, last workflow task) | %s |\n", summarize(after).cell(1))
	fmt.Fprintf(out, "| outside the history (start request, result's way back) | %s |\n\n", summarize(outside).cell(1))
	return nil
}

// overhead: zero-latency model; per-turn times of both loops and where
// the durable turn's time goes, from its history.
func overhead(ctx context.Context, c Config, srv *server, out io.Writer) error {
	wd, d, err := pair(ctx, c, srv, 0)
	if err != nil {
		return err
	}
	defer wd.close()
	defer d.close()
	var (
		bMed, bP95, dMed, dP95, diff                             []float64
		wfts, events, upserts                                    []float64
		wftQ, wftR, modelQ, modelR, toolQ, toolR, wallPerTurnRun []float64
		others, otherQ, otherR                                   []float64
		fMed, fDiff, fWftQ, fWftR, fModelR                       []float64
	)
	for i := 0; i < c.Runs; i++ {
		// The floor (Temporal alone, no work) first on odd runs, as the
		// ratio scenario alternates: neither gets the warmer machine.
		var fTurns []turnCost
		runF := func() error {
			_, fid, err := d.floor(ctx, c.Turns, 0)
			if err != nil {
				return err
			}
			fh, err := d.history(ctx, fid)
			if err != nil {
				return err
			}
			if fTurns = breakdownOf(fh, floorModel); len(fTurns) != c.Turns {
				return fmt.Errorf("history of %s has %d tool turns, want %d", fid, len(fTurns), c.Turns)
			}
			return nil
		}
		if i%2 == 1 {
			if err := runF(); err != nil {
				return err
			}
		}
		b, err := runBaseline(ctx, wd.baseline(), c.Turns)
		if err != nil {
			return err
		}
		n0 := len(wd.model.Requests())
		dw, id, err := d.session(ctx, c.Turns)
		if err != nil {
			return err
		}
		if i%2 == 0 {
			if err := runF(); err != nil {
				return err
			}
		}
		h, err := d.history(ctx, id)
		if err != nil {
			return err
		}
		turns := breakdown(h)
		if c.Opts.LocalModel {
			// The model calls are markers, written when a workflow task
			// ends (several turns may share one): a turn's wall time is
			// then read where the model server saw each request arrive.
			turns = modelArrivals(wd.model.Requests()[n0:])
		}
		if len(turns) != c.Turns {
			return fmt.Errorf("history of %s has %d tool turns, want %d", id, len(turns), c.Turns)
		}
		var walls []time.Duration
		med := func(f func(t turnCost) float64) float64 {
			xs := make([]float64, len(turns))
			for i, t := range turns {
				xs[i] = f(t)
			}
			return summarize(xs).Med
		}
		for _, t := range turns {
			walls = append(walls, t.Wall)
		}
		bt := b.perTurn()
		bMed, bP95 = append(bMed, durQuantile(bt, 0.5)), append(bP95, durQuantile(bt, 0.95))
		dMed, dP95 = append(dMed, durQuantile(walls, 0.5)), append(dP95, durQuantile(walls, 0.95))
		diff = append(diff, durQuantile(walls, 0.5)-durQuantile(bt, 0.5))
		wallPerTurnRun = append(wallPerTurnRun, ms(dw)/float64(c.Turns+1))
		wfts = append(wfts, med(func(t turnCost) float64 { return float64(t.WFTs) }))
		events = append(events, med(func(t turnCost) float64 { return float64(t.Events) }))
		upserts = append(upserts, med(func(t turnCost) float64 { return float64(t.Upserts) }))
		wftQ = append(wftQ, med(func(t turnCost) float64 { return ms(t.WFTQueue) }))
		wftR = append(wftR, med(func(t turnCost) float64 { return ms(t.WFTRun) }))
		modelQ = append(modelQ, med(func(t turnCost) float64 { return ms(t.ModelQueue) }))
		modelR = append(modelR, med(func(t turnCost) float64 { return ms(t.ModelRun) }))
		toolQ = append(toolQ, med(func(t turnCost) float64 { return ms(t.ToolQueue) }))
		toolR = append(toolR, med(func(t turnCost) float64 { return ms(t.ToolRun) }))
		others = append(others, med(func(t turnCost) float64 { return float64(t.Others) }))
		otherQ = append(otherQ, med(func(t turnCost) float64 { return ms(t.OtherQueue) }))
		otherR = append(otherR, med(func(t turnCost) float64 { return ms(t.OtherRun) }))
		fmed := func(f func(t turnCost) float64) float64 {
			xs := make([]float64, len(fTurns))
			for i, t := range fTurns {
				xs[i] = f(t)
			}
			return summarize(xs).Med
		}
		fWall := fmed(func(t turnCost) float64 { return ms(t.Wall) })
		fMed = append(fMed, fWall)
		fDiff = append(fDiff, durQuantile(walls, 0.5)-durQuantile(bt, 0.5)-fWall)
		fWftQ = append(fWftQ, fmed(func(t turnCost) float64 { return ms(t.WFTQueue) }))
		fWftR = append(fWftR, fmed(func(t turnCost) float64 { return ms(t.WFTRun) }))
		fModelR = append(fModelR, fmed(func(t turnCost) float64 { return ms(t.ModelRun) }))
	}
	fmt.Fprintf(out, "### per-turn overhead: zero-latency model, %d tool turns, checkout %s, %d runs\n\n", c.Turns, c.Opts.Checkout, c.Runs)
	fmt.Fprintf(out, "Each cell: median over runs (min–max) of that run's per-turn figure.\n\n")
	fmt.Fprintf(out, "| figure | ms |\n|---|---:|\n")
	fmt.Fprintf(out, "| baseline turn, median | %s |\n", summarize(bMed).cell(2))
	fmt.Fprintf(out, "| baseline turn, p95 | %s |\n", summarize(bP95).cell(2))
	fmt.Fprintf(out, "| durable turn, median | %s |\n", summarize(dMed).cell(2))
	fmt.Fprintf(out, "| durable turn, p95 | %s |\n", summarize(dP95).cell(2))
	fmt.Fprintf(out, "| **durable − baseline, median** (goal ≤ 10) | %s |\n", summarize(diff).cell(2))
	fmt.Fprintf(out, "| durable session wall / model calls | %s |\n", summarize(wallPerTurnRun).cell(2))
	fmt.Fprintf(out, "| floor turn, median: a plain SDK workflow of the session's shape doing no work (Temporal alone) | %s |\n", summarize(fMed).cell(2))
	fmt.Fprintf(out, "| durable − baseline − floor, median: what the session adds to Temporal and the work | %s |\n\n", summarize(fDiff).cell(2))
	fmt.Fprintf(out, "Breakdown of a durable turn from history event times (median turn of each run; sums per turn):\n\n")
	fmt.Fprintf(out, "| part | per turn | floor's |\n|---|---:|---:|\n")
	fmt.Fprintf(out, "| workflow tasks | %s |\n", summarize(wfts).cell(1))
	fmt.Fprintf(out, "| history events | %s |\n", summarize(events).cell(1))
	fmt.Fprintf(out, "| search attribute upserts | %s |\n", summarize(upserts).cell(1))
	fmt.Fprintf(out, "| workflow task scheduled→started ms | %s | %s |\n", summarize(wftQ).cell(2), summarize(fWftQ).cell(2))
	fmt.Fprintf(out, "| workflow task started→completed ms | %s | %s |\n", summarize(wftR).cell(2), summarize(fWftR).cell(2))
	fmt.Fprintf(out, "| model activity scheduled→started ms | %s |\n", summarize(modelQ).cell(2))
	fmt.Fprintf(out, "| model activity started→completed ms | %s | %s |\n", summarize(modelR).cell(2), summarize(fModelR).cell(2))
	fmt.Fprintf(out, "| tool activity scheduled→started ms | %s |\n", summarize(toolQ).cell(2))
	fmt.Fprintf(out, "| tool activity started→completed ms | %s |\n", summarize(toolR).cell(2))
	fmt.Fprintf(out, "| other activities (checkpoint) | %s |\n", summarize(others).cell(1))
	fmt.Fprintf(out, "| other activities scheduled→started ms | %s |\n", summarize(otherQ).cell(2))
	fmt.Fprintf(out, "| other activities started→completed ms | %s |\n\n", summarize(otherR).cell(2))
	return nil
}

// replay: run one long zero-latency session, save its history, and time
// the replayer on it. With a transcript store the session is one read a
// turn, as sessions are; without, many calls a turn keep the history
// (which then carries the conversation) inside the server's limits.
func replay(ctx context.Context, c Config, srv *server, out io.Writer) error {
	wd, err := newWorld(0, c.Opts.Checkout)
	if err != nil {
		return err
	}
	defer wd.close()
	if c.ReplayStore {
		if err := wd.withStore(); err != nil {
			return err
		}
	}
	d, err := newDurable(srv.addr, wd, c.Opts)
	if err != nil {
		return err
	}
	defer d.close()
	in := d.input(c.ReplayTurns, c.ReplayCalls)
	in.ContinueAsNewTurns = 100000 // one run holds the whole session
	start := time.Now()
	_, id, err := d.run(ctx, in, c.ReplayTurns+1)
	if err != nil {
		return err
	}
	took := time.Since(start)
	h, err := d.history(ctx, id)
	if err != nil {
		return err
	}
	if prev := h.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId(); prev != "" {
		return fmt.Errorf("session %s continued as new (run %s before it): its last run is not the whole session; raise limit.history*.suggestContinueAsNew on the server", id, prev)
	}
	events := len(h.GetEvents())
	b, err := protojson.Marshal(h)
	if err != nil {
		return err
	}
	if err := os.WriteFile(c.HistoryFile, b, 0o644); err != nil {
		return err
	}
	var mem, file []float64
	for i := 0; i < c.Runs; i++ {
		r := worker.NewWorkflowReplayer()
		r.RegisterWorkflowWithOptions((&workflows.Sessions{}).AgentSession, workflow.RegisterOptions{Name: workflows.WorkflowType})
		hc := proto.Clone(h).(*historypb.History)
		t0 := time.Now()
		if err := r.ReplayWorkflowHistory(quiet, hc); err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		mem = append(mem, ms(time.Since(t0)))
		t0 = time.Now()
		if err := r.ReplayWorkflowHistoryFromJSONFile(quiet, c.HistoryFile); err != nil {
			return fmt.Errorf("replay from file: %w", err)
		}
		file = append(file, ms(time.Since(t0)))
	}
	store := "no transcript store"
	if c.ReplayStore {
		store = "transcript store"
	}
	fmt.Fprintf(out, "### replay: one run of a session of %d tool turns, %d calls a turn, %s (%d events, %.1f MB of history JSON; it took %.1f s to run), %d runs\n\n",
		c.ReplayTurns, c.ReplayCalls, store, events, float64(len(b))/1e6, took.Seconds(), c.Runs)
	if events < 10000 {
		fmt.Fprintf(out, "(below 10,000 events: raise -replay-turns)\n\n")
	}
	fmt.Fprintf(out, "| replay | ms, median (min–max) | µs per event |\n|---|---:|---:|\n")
	fmt.Fprintf(out, "| decoded history (ReplayWorkflowHistory) | %s | %.1f |\n", summarize(mem).cell(0), summarize(mem).Med*1000/float64(events))
	fmt.Fprintf(out, "| from the JSON file (ReplayWorkflowHistoryFromJSONFile) | %s | %.1f |\n\n", summarize(file).cell(0), summarize(file).Med*1000/float64(events))
	fmt.Fprintf(out, "history saved to %s\n\n", c.HistoryFile)
	return nil
}

// parallel runs f n times at once and returns the wall time of all.
func parallel(n int, f func() error) (time.Duration, error) {
	start := time.Now()
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() { errs <- f() }()
	}
	var first error
	for i := 0; i < n; i++ {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return time.Since(start), first
}

// modelArrivals are the turns of one session as the model server saw
// them: each from one request's arrival to the next's. Only the wall time
// is known; the breakdown stays zero.
func modelArrivals(reqs []scriptedmodel.Request) []turnCost {
	var turns []turnCost
	for i := 1; i < len(reqs); i++ {
		turns = append(turns, turnCost{ModelStart: reqs[i-1].At, NextModelAt: reqs[i].At, Wall: reqs[i].At.Sub(reqs[i-1].At)})
	}
	return turns
}
