package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
)

// runOptions are the worker, client and session input options a durable
// run uses; none changes workflow code.
type runOptions struct {
	WFTPollers, ActPollers int  // 0: the SDK's defaults
	Eager                  bool // eager activity execution (server dynamic config plus worker)
	EagerStart             bool // eager workflow start
	LocalReads             bool // SessionInput.LocalReads in every session the bench starts
	LocalModel             bool // SessionInput.LocalModel likewise
	// Checkout is where the sessions' calls run (checkout.go): none,
	// in-place, git or copy.
	Checkout string
	// Gzip compresses the gRPC requests to the server. Off by default: the
	// product worker's --grpc-compression auto sends none to a loopback
	// server, which the bench's devserver is.
	Gzip bool
}

// clientOptions are the bench's Temporal client options for addr.
func (o runOptions) clientOptions(addr string) client.Options {
	opts := client.Options{HostPort: addr, Logger: quiet}
	if !o.Gzip {
		opts.ConnectionOptions.GrpcCompression = &client.GrpcCompressionNone{}
	}
	return opts
}

// Config is what to measure and how.
type Config struct {
	Scenarios []string
	Runs      int
	Turns     int
	Latency   time.Duration
	Address   string
	Devserver string
	// ServerDB is where a started devserver keeps its state: "memory", or
	// "file", an SQLite file in a directory of the run's own, which is
	// what `longrun-devserver` does where people run it (its --db
	// default): every commit then reaches the disk.
	ServerDB    string
	ServerFlags []string // extra --dynamic-config-value KEY=JSON for a started devserver
	Opts        runOptions
	ReplayTurns int
	ReplayCalls int
	ReplayStore bool // the replayed session keeps its conversation in a transcript store
	// CPUProfile is where to write a CPU profile of the bench process
	// (worker, client, scripted model and baseline: the server is another
	// process), for finding the worker's share of a turn.
	CPUProfile string
	// Trace is where to write an execution trace of the bench process:
	// where a turn waits (the network, a sync, the scheduler) rather than
	// where it spends CPU. Read it with go tool trace.
	Trace string
	// Store gives the durable worker of the ratio, overhead and
	// concurrency scenarios a transcript store, as the product worker has
	// by default; the baseline loop keeps its conversation in memory.
	Store       bool
	HistoryFile string
	Sessions    []int
	ConcTurns   int
	// The history scenario: our design's turns and context window, and
	// how far the naive design goes.
	HistTurns, HistWindow, NaiveTurns int
	// Fleet is the fleet scenario's shape (fleet.go).
	Fleet fleetConfig
}

// replayServerConfig raises the server's continue-as-new suggestion above
// the replayed session (the history limits stay: 50 MB, 51,200 events).
var replayServerConfig = []string{
	"limit.historyCount.suggestContinueAsNew=50000",
	"limit.historySize.suggestContinueAsNew=45000000",
}

// defaultStoreReplayTurns is enough one-read turns (about 12.5 events
// each) for 10,000 events.
const defaultStoreReplayTurns = 850

// Scenario names, in the order "all" runs them.
var allScenarios = []string{"ratio", "overhead", "replay", "concurrency"}

type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// ParseFlags reads the command line.
func ParseFlags(args []string) (Config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var c Config
	scen := fs.String("scenario", "ratio,overhead", "comma-separated: ratio, overhead, replay, concurrency, history, fleet, or all (all but history and fleet)")
	fs.IntVar(&c.Runs, "runs", 5, "runs of each measurement (figures are the median with min and max)")
	fs.IntVar(&c.Turns, "turns", 20, "tool turns per session (ratio, overhead); the session makes one more model call for its final text")
	fs.DurationVar(&c.Latency, "latency", 200*time.Millisecond, "scripted model latency for the ratio scenario")
	fs.StringVar(&c.Address, "address", "", "a running Temporal server host:port (empty: start the devserver in memory)")
	def := os.Getenv("LONGRUN_DEVSERVER")
	if def == "" {
		def = filepath.Join(".longrun-bin", "devserver")
	}
	fs.StringVar(&c.ServerDB, "server-db", "memory", "where the started devserver keeps its state: memory, or file (an SQLite file in a temporary directory, as longrun-devserver --db keeps it)")
	fs.StringVar(&c.Devserver, "devserver", def, "the prebuilt devserver binary (env LONGRUN_DEVSERVER)")
	var dyn multiFlag
	fs.Var(&dyn, "server-config", "dynamic config KEY=JSON for the started devserver (repeatable)")
	fs.IntVar(&c.Opts.WFTPollers, "wft-pollers", 0, "worker workflow task pollers (0: SDK default)")
	fs.IntVar(&c.Opts.ActPollers, "activity-pollers", 0, "worker activity task pollers (0: SDK default)")
	fs.BoolVar(&c.Opts.Eager, "eager", true, "eager activity execution on the worker, as the product worker has it (the SDK default; the devserver enables it on the server): -eager=false measures without")
	fs.BoolVar(&c.Opts.EagerStart, "eager-start", false, "eager workflow start")
	fs.BoolVar(&c.Opts.LocalReads, "local-reads", true, "local_reads in every session input: read-only tools run as local activities (the default; -local-reads=false turns it off)")
	fs.BoolVar(&c.Opts.Gzip, "gzip", false, "gzip gRPC requests to the server (the product worker does so only to a server that is not on loopback)")
	fs.StringVar(&c.Opts.Checkout, "checkout", checkoutNone, "where sessions' calls run: none (a worker with no state directory, sessions in its workspace: the earlier tables), in-place (a worker with a state directory, sessions started --in-place), git (longrun start's default in a repository: a checkout of the session's own, calls pinned to its worker) or copy (the default outside git: a copy of its own)")
	fs.BoolVar(&c.Opts.LocalModel, "local-model", false, "local_model in every session input: model calls run as local activities")
	fs.StringVar(&c.CPUProfile, "cpuprofile", "", "write a CPU profile of the bench process (the in-process worker, not the server) to this file")
	fs.StringVar(&c.Trace, "trace", "", "write an execution trace of the bench process (the in-process worker, not the server) to this file, for go tool trace")
	fs.BoolVar(&c.Store, "store", false, "ratio, overhead: the durable worker keeps a transcript store, as the product worker does by default (the baseline keeps its conversation in memory)")
	fs.BoolVar(&c.ReplayStore, "replay-store", true, "the replay scenario's worker keeps a transcript store, so one call a turn reaches 10,000 events in one run (false: no store, history grows with the conversation)")
	fs.IntVar(&c.ReplayTurns, "replay-turns", 0, fmt.Sprintf("tool turns of the session whose history the replay scenario replays (0: %d with -replay-store, 25 without)", defaultStoreReplayTurns))
	fs.IntVar(&c.ReplayCalls, "replay-calls", 0, "tool calls per turn of that session (0: 1 with -replay-store; 100 without, as many calls over few turns reach 10,000 events inside the server's 50 MB history limit)")
	fs.StringVar(&c.HistoryFile, "history", filepath.Join(os.TempDir(), "longrun-bench-history.json"), "where the replay scenario saves the long history (JSON)")
	sessions := fs.String("sessions", "10,50", "concurrent sessions, comma-separated (concurrency)")
	fs.IntVar(&c.ConcTurns, "concurrency-turns", 20, "tool turns per session in the concurrency scenario")
	fs.IntVar(&c.HistTurns, "history-turns", 1000, "tool turns of our design's session in the history scenario")
	fs.IntVar(&c.HistWindow, "history-window", 128000, "context_window of that session in tokens (it compacts past 80%)")
	fs.IntVar(&c.NaiveTurns, "naive-turns", 60, "tool turns of the naive session (no transcript store) in the history scenario")
	c.Fleet.bind(fs)
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if err := c.Fleet.check(); err != nil {
		return c, err
	}
	for _, s := range strings.Split(*scen, ",") {
		s = strings.TrimSpace(s)
		switch s {
		case "all":
			c.Scenarios = append(c.Scenarios, allScenarios...)
		case "ratio", "overhead", "replay", "concurrency", "history", "fleet":
			c.Scenarios = append(c.Scenarios, s)
		default:
			return c, fmt.Errorf("-scenario: unknown %q (have ratio, overhead, replay, concurrency, history, fleet, all)", s)
		}
	}
	for _, s := range strings.Split(*sessions, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return c, fmt.Errorf("-sessions: %q is not a positive number", s)
		}
		c.Sessions = append(c.Sessions, n)
	}
	if err := checkCheckout(c.Opts.Checkout); err != nil {
		return c, err
	}
	if c.Runs <= 0 || c.Turns <= 0 {
		return c, errors.New("-runs and -turns must be positive")
	}
	switch {
	case c.ReplayTurns == 0 && c.ReplayStore:
		c.ReplayTurns = defaultStoreReplayTurns
	case c.ReplayTurns == 0:
		c.ReplayTurns = 25
	}
	switch {
	case c.ReplayCalls == 0 && c.ReplayStore:
		c.ReplayCalls = 1
	case c.ReplayCalls == 0:
		c.ReplayCalls = 100
	}
	if c.ReplayTurns < 0 || c.ReplayCalls < 0 {
		return c, errors.New("-replay-turns and -replay-calls must not be negative")
	}
	if slices.Contains(c.Scenarios, "replay") {
		// The server suggests continue-as-new past 4,096 events or 4 MB,
		// and a session takes the suggestion: the replayed history must be
		// one run. First, so a -server-config of the same key wins.
		c.ServerFlags = append(c.ServerFlags, replayServerConfig...)
	}
	if c.ServerDB != "memory" && c.ServerDB != "file" {
		return c, fmt.Errorf("-server-db %q: want memory or file", c.ServerDB)
	}
	if c.ServerDB == "file" && c.Address != "" {
		return c, errors.New("-server-db file starts a devserver on a file; the server at -address keeps its state where it was started to")
	}
	c.ServerFlags = append(c.ServerFlags, dyn...)
	if c.Opts.Eager {
		c.ServerFlags = append(c.ServerFlags, "system.enableActivityEagerExecution=true")
	}
	return c, nil
}

// Run starts (or reaches) the server and runs each scenario, printing its
// table to out.
func Run(c Config, out io.Writer) error {
	ctx := context.Background()
	fmt.Fprintf(out, "machine: %s\nload before: %s\noptions: %+v store: %v server-db: %s server-config: %v\n\n", machine(), loadavg(), c.Opts, c.Store, c.ServerDB, c.ServerFlags)
	srv, err := startServer(c.Devserver, c.Address, c.ServerDB, c.ServerFlags)
	if err != nil {
		return err
	}
	defer srv.stop()
	for _, s := range c.Scenarios {
		var err error
		switch s {
		case "ratio":
			err = ratio(ctx, c, srv, out)
		case "overhead":
			err = overhead(ctx, c, srv, out)
		case "replay":
			err = replay(ctx, c, srv, out)
		case "concurrency":
			err = concurrency(ctx, c, srv, out)
		case "history":
			err = historyGrowth(ctx, c, srv, out)
		case "fleet":
			err = fleetScenario(ctx, c, srv, out)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	fmt.Fprintf(out, "load after: %s\n", loadavg())
	return nil
}
