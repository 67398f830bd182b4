package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/proto"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/transcript"
	"github.com/longrun/longrun/workflows"
)

// The history scenario: how history grows per turn with 20 KB tool
// results, our design (transcript by reference, continue-as-new,
// compaction) against the naive one (a worker with no transcript store,
// so every model call carries the whole conversation through history).

// growthFile is the file every turn reads a ~20 KB window of.
const growthFile = "big.txt"

// growthLines and growthWindow shape the read: the file has growthLines
// lines, each turn reads growthWindow of them from an offset that moves
// (so no two calls in a row are identical: the doom-loop check would ask
// a person), which is about 20 KB with the line numbers.
const (
	growthLines  = 1500
	growthWindow = 570
)

// growthPrompt carries the session's length, so the stateless responder
// knows when to stop.
const growthPrompt = "history turns="

// growthCheckpoints are the turns the series reports.
var growthCheckpoints = []int{10, 20, 50, 100, 200, 500, 1000}

// growthModel reads a moving window of growthFile each turn until the
// conversation holds the number of results the prompt asks for, then
// answers with text. It reports usage as a real API does (prompt tokens at
// four bytes a token of what it was sent), so a session with a context
// window compacts, and answers the compaction's summary request. After a
// compaction the request no longer holds every result, so the turn number
// comes from the latest call's id.
func growthModel() *scriptedmodel.Server {
	return scriptedmodel.NewResponder(func(req scriptedmodel.Request) (scriptedmodel.Reply, bool) {
		size := 0
		for _, m := range req.Messages {
			size += len(m.Content)
		}
		usage := &scriptedmodel.Usage{PromptTokens: int64(size / 4), CompletionTokens: 20}
		if len(req.Messages) > 0 && req.Messages[0].Role == "system" && strings.HasPrefix(req.Messages[0].Content, "You are compacting") {
			return scriptedmodel.Reply{Text: "Task: read big.txt window by window.\nDone: the earlier windows.\nNext: the next window.", Usage: usage}, true
		}
		turns, done := 0, 0
		for _, m := range req.Messages {
			if m.Role == "user" && strings.HasPrefix(m.Content, growthPrompt) {
				turns, _ = strconv.Atoi(strings.Fields(strings.TrimPrefix(m.Content, growthPrompt))[0])
			}
			for _, c := range m.ToolCalls {
				if n, err := strconv.Atoi(strings.TrimPrefix(c.ID, "call_")); err == nil {
					done = max(done, n)
				}
			}
		}
		if turns == 0 {
			turns = int(growthTurns.Load())
		}
		if done >= turns {
			return scriptedmodel.Reply{Text: "done", Usage: usage}, true
		}
		n := done + 1
		return scriptedmodel.Reply{Usage: usage, ToolCalls: []scriptedmodel.Call{{
			ID: fmt.Sprintf("call_%d", n), Name: "read",
			Arguments: fmt.Sprintf(`{"path":%q,"offset":%d,"limit":%d}`, growthFile, n%(growthLines-growthWindow)+1, growthWindow),
		}}}, true
	})
}

// growthStall is how long a session's turn may stand still before the
// bench calls it stalled.
const growthStall = 60 * time.Second

// growthStalls notes, by design (true: ours), why a session stalled.
var growthStalls = map[bool]string{}

// lastWFTFailure is the cause of the newest failed workflow task of the
// session's current run, for the stall note.
func lastWFTFailure(ctx context.Context, c client.Client, id string) string {
	desc, err := describeRun(ctx, c, id, "")
	if err != nil {
		return err.Error()
	}
	run := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	it := c.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	why := "no failed workflow task in the history"
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			break
		}
		if a := ev.GetWorkflowTaskFailedEventAttributes(); a != nil {
			why = fmt.Sprintf("workflow task failed: %s: %s", a.GetCause(), a.GetFailure().GetMessage())
		}
	}
	if p := desc.GetPendingWorkflowTask(); p != nil && p.GetAttempt() > 1 {
		why += fmt.Sprintf(" (attempt %d)", p.GetAttempt())
	}
	return why
}

// growthTurns is the length of the session running now (they run one at
// a time), for requests whose prompt was compacted away.
var growthTurns atomic.Int64

// growthWorld is a workspace with growthFile, the scripted model and the
// activities, with a transcript store (our design; its directory is
// returned) or without (naive: "").
func growthWorld(withStore bool) (*world, string, error) {
	dir, err := os.MkdirTemp("", "longrun-bench-history-")
	if err != nil {
		return nil, "", err
	}
	var b strings.Builder
	for i := 1; i <= growthLines; i++ {
		fmt.Fprintf(&b, "line %04d of the big file\n", i)
	}
	if err := os.WriteFile(filepath.Join(dir, growthFile), []byte(b.String()), 0o644); err != nil {
		return nil, "", err
	}
	ws, err := tools.NewWorkspace(dir)
	if err != nil {
		return nil, "", fmt.Errorf("workspace: %w", err)
	}
	m := growthModel()
	storeDir := ""
	var store *transcript.Cache
	var reader workflows.TranscriptReader
	if withStore {
		storeDir = filepath.Join(dir, ".longrun", "transcript")
		d, err := transcript.NewDir(storeDir)
		if err != nil {
			return nil, "", err
		}
		store = transcript.NewCache(d, 64<<20)
		reader = store
	}
	cfg := activities.Config{
		Model: activities.ModelConfig{
			BaseURL: m.URL(), APIKey: "bench", DefaultModel: "scripted-bench", RequestTimeout: time.Minute,
		},
		Registry:  tools.NewRegistry(tools.Builtin(tools.DefaultConfig())...),
		Workspace: ws,
	}
	if store != nil {
		cfg.Transcript = store
	}
	acts := activities.New(cfg)
	return &world{model: m, dir: dir, acts: acts, reader: reader, checkout: checkoutNone, queue: newQueue("bench")}, storeDir, nil
}

// growthPoint is the series at one turn.
type growthPoint struct {
	Turn       int
	Run        int   // which run the turn is in, from 0
	RunBytes   int64 // history bytes of that run up to the end of the turn
	TotalBytes int64 // over every run so far
	StoreBytes int64 // the transcript directory on disk (sampled while running)
}

// historyGrowth runs the design's session, then the naive one, and prints
// both series and the growth ratio.
func historyGrowth(ctx context.Context, c Config, srv *server, out io.Writer) error {
	fmt.Fprintf(out, "### history growth: one ~20 KB read per turn, zero-latency model\n\n")
	ours, oursTook, err := growthSession(ctx, c, srv, true, c.HistTurns)
	if err != nil {
		return fmt.Errorf("our design: %w", err)
	}
	naive, naiveTook, err := growthSession(ctx, c, srv, false, c.NaiveTurns)
	if err != nil {
		return fmt.Errorf("naive: %w", err)
	}
	fmt.Fprintf(out, "our design: %d turns in %.0f s (transcript store, continue_as_new_turns default, context_window %d); naive: %d turns in %.0f s (no transcript store)\n\n",
		len(ours)-1, oursTook.Seconds(), c.HistWindow, len(naive)-1, naiveTook.Seconds())
	for _, design := range []bool{true, false} {
		if s := growthStalls[design]; s != "" {
			fmt.Fprintf(out, "**%s session %s**\n\n", map[bool]string{true: "our", false: "the naive"}[design], s)
		}
	}
	fmt.Fprintf(out, "| turn | ours: run | ours: history bytes of the run | ours: history bytes, all runs | ours: store bytes | naive: run | naive: history bytes of the run | naive: history bytes, all runs |\n")
	fmt.Fprintf(out, "|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, t := range growthCheckpoints {
		row := fmt.Sprintf("| %d |", t)
		if t < len(ours) {
			p := ours[t]
			row += fmt.Sprintf(" %d | %d | %d | %d |", p.Run, p.RunBytes, p.TotalBytes, p.StoreBytes)
		} else {
			row += " | | | |"
		}
		if t < len(naive) {
			p := naive[t]
			row += fmt.Sprintf(" %d | %d | %d |", p.Run, p.RunBytes, p.TotalBytes)
		} else {
			row += " | | |"
		}
		fmt.Fprintln(out, row)
	}
	fmt.Fprintln(out)
	fmt.Fprintf(out, "| bytes added per turn (mean over the last max(5, T/10) turns) | ours | naive |\n|---|---:|---:|\n")
	for _, t := range growthCheckpoints {
		o, n := perTurn(ours, t), perTurn(naive, t)
		fmt.Fprintf(out, "| at turn %d | %s | %s |\n", t, bytesCell(o), bytesCell(n))
	}
	last := min(c.HistTurns, 1000)
	if r := perTurn(ours, last) / perTurn(ours, 10); r > 0 {
		fmt.Fprintf(out, "| **ratio turn %d / turn 10** (goal ≤ 1.5) | **%.2f** |", last, r)
	}
	nl := len(naive) - 1
	fmt.Fprintf(out, " %.1f (turn %d / turn 10) |\n\n", perTurn(naive, nl)/perTurn(naive, 10), nl)
	return nil
}

func bytesCell(v float64) string {
	if v <= 0 {
		return ""
	}
	return fmt.Sprintf("%.0f", v)
}

// perTurn is the mean history bytes a turn added over the turns before t.
func perTurn(s []growthPoint, t int) float64 {
	if t >= len(s) || t <= 0 {
		return 0
	}
	w := max(5, t/10)
	return float64(s[t].TotalBytes-s[t-w].TotalBytes) / float64(w)
}

// growthSession runs one session of turns tool turns and returns the
// series indexed by turn (s[0] is the start) and how long it took.
func growthSession(ctx context.Context, c Config, srv *server, ours bool, turns int) ([]growthPoint, time.Duration, error) {
	wd, storeDir, err := growthWorld(ours)
	if err != nil {
		return nil, 0, err
	}
	defer wd.close()
	growthTurns.Store(int64(turns))
	d, err := newDurable(srv.addr, wd, c.Opts)
	if err != nil {
		return nil, 0, err
	}
	defer d.close()
	in := workflows.SessionInput{Prompt: fmt.Sprintf("%s%d: read big.txt window by window", growthPrompt, turns), Profile: "build", MaxTurns: turns + 1, LocalReads: workflows.Flag(c.Opts.LocalReads), LocalModel: c.Opts.LocalModel}
	if ours {
		in.ContextWindow = c.HistWindow
	}
	id := fmt.Sprintf("%s-history-%v", d.queue, ours)
	start := time.Now()
	run, err := d.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: id, TaskQueue: d.queue}, workflows.WorkflowType, in)
	if err != nil {
		return nil, 0, err
	}
	// The store on disk, sampled by turn while the session runs; a
	// session whose turn stops moving for growthStall is stalled (the
	// naive design's model input passes the server's 2 MB payload limit,
	// and its workflow task fails on every attempt).
	store := map[int]int64{}
	stop := make(chan struct{})
	sampled := make(chan struct{})
	runCtx, stalled := context.WithCancel(ctx)
	defer stalled()
	lastTurn, moved := -1, time.Now()
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			v, err := d.c.QueryWorkflow(ctx, id, "", workflows.QueryStatus)
			var st workflows.Status
			if err != nil || v.Get(&st) != nil {
				if time.Since(moved) > growthStall {
					stalled()
				}
				continue
			}
			if st.Turn != lastTurn {
				lastTurn, moved = st.Turn, time.Now()
			} else if time.Since(moved) > growthStall {
				stalled()
			}
			if _, ok := store[st.Turn]; !ok && storeDir != "" {
				store[st.Turn] = dirBytes(storeDir)
			}
		}
	}()
	var res workflows.SessionResult
	err = run.Get(runCtx, &res)
	took := time.Since(start)
	close(stop)
	<-sampled
	stall := ""
	switch {
	case err != nil && runCtx.Err() != nil && ctx.Err() == nil:
		stall = fmt.Sprintf("stalled at turn %d: no progress for %s (%s)", lastTurn, growthStall, lastWFTFailure(ctx, d.c, id))
		_ = d.c.TerminateWorkflow(ctx, id, "", "bench: "+stall)
		turns = max(lastTurn-2, 0) // the tool turns whose next model call was scheduled
	case err != nil:
		return nil, took, fmt.Errorf("session %s: %w", id, err)
	case res.Turns != turns+1:
		return nil, took, fmt.Errorf("session %s: %s after %d turns, want %d (%s)", id, res.Status, res.Turns, turns+1, res.Error)
	}
	series, err := growthSeries(ctx, d.c, id, turns)
	if err != nil {
		return nil, took, err
	}
	if stall != "" {
		growthStalls[ours] = stall
	}
	var lastStore int64
	for t := range series {
		if v, ok := store[t]; ok {
			lastStore = v
		}
		series[t].StoreBytes = lastStore
	}
	return series, took, nil
}

// growthSeries reads every run of the session, oldest first, and adds up
// the proto size of each event by turn: a turn ends where the next model
// call is scheduled, so the bytes of a continue-as-new (the old run's
// last events and the next run's first) count in the turn they follow.
func growthSeries(ctx context.Context, c client.Client, id string, turns int) ([]growthPoint, error) {
	var runs []*historypb.History
	desc, err := describeRun(ctx, c, id, "")
	if err != nil {
		return nil, err
	}
	for run := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId(); run != ""; {
		it := c.GetWorkflowHistory(ctx, id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		h := &historypb.History{}
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return nil, fmt.Errorf("history of %s run %s: %w", id, run, err)
			}
			h.Events = append(h.Events, ev)
		}
		runs = append([]*historypb.History{h}, runs...)
		run = h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	}
	series := make([]growthPoint, 1, turns+1)
	var total int64
	turn := 0
	for r, h := range runs {
		var runBytes int64
		for _, ev := range h.Events {
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == actModel {
				if turn > 0 && turn < cap(series) {
					series = append(series, growthPoint{Turn: turn, Run: r, RunBytes: runBytes, TotalBytes: total})
				}
				turn++
			}
			n := int64(proto.Size(ev))
			runBytes += n
			total += n
		}
	}
	if len(series) != turns+1 {
		return nil, fmt.Errorf("history of %s has %d tool turns, want %d", id, len(series)-1, turns)
	}
	return series, nil
}

// dirBytes is the size of the files under dir.
func dirBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			if info, err := e.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
