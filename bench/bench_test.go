package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// TestMain lets the test binary be the concurrency scenario's worker
// process, as the bench binary is (startWorkerProc runs os.Executable).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == workerCmd {
		keepModelConns()
		if err := workerMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench worker:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// devserverBin is the prebuilt devserver, or skips the test.
func devserverBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("LONGRUN_DEVSERVER")
	if bin == "" {
		bin = filepath.Join("..", ".longrun-bin", "devserver")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no devserver binary at %s (make devserver)", bin)
	}
	return bin
}

// TestTinyScenarios runs the ratio and overhead scenarios with two turns
// and one run against the embedded server, to prove the command works. It
// checks the tables are printed, never the times in them.
func TestTinyScenarios(t *testing.T) {
	t.Parallel()
	bin := devserverBin(t)
	cfg, err := ParseFlags([]string{"-scenario", "ratio,overhead", "-runs", "1", "-turns", "2", "-latency", "1ms", "-devserver", bin})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Run(cfg, &out))
	require.Contains(t, out.String(), "ratio durable/baseline")
	require.Contains(t, out.String(), "floor/baseline")
	require.Contains(t, out.String(), "after the last model call")
	require.Contains(t, out.String(), "model activity scheduled→started")
	require.Contains(t, out.String(), "floor turn, median")
}

// TestTinyIsolated runs the ratio scenario in-process and the concurrency
// scenario's worker process with sessions in a checkout of their own (the
// product default), from a git repository and from a copy: durable.run
// fails a session whose result names no branch, so this proves the
// sessions took the isolated path. The git run's devserver keeps its
// state in an SQLite file (-server-db file), as people run it. Tables are
// checked, never figures.
func TestTinyIsolated(t *testing.T) {
	t.Parallel()
	bin := devserverBin(t)
	for co, db := range map[string]string{checkoutGit: "file", checkoutCopy: "memory"} {
		t.Run(co, func(t *testing.T) {
			t.Parallel()
			cfg, err := ParseFlags([]string{"-scenario", "ratio,concurrency", "-runs", "1", "-turns", "1", "-latency", "1ms",
				"-sessions", "2", "-concurrency-turns", "1", "-store", "-checkout", co, "-devserver", bin, "-server-db", db})
			require.NoError(t, err)
			var out bytes.Buffer
			require.NoError(t, Run(cfg, &out))
			require.Contains(t, out.String(), "server-db: "+db)
			require.Contains(t, out.String(), "checkout "+co+", 1 runs")
			require.Contains(t, out.String(), "durable wall / model time")
			require.Contains(t, out.String(), "checkout "+co+", store true")
		})
	}
}

func TestParseFlagsCheckout(t *testing.T) {
	t.Parallel()
	c, err := ParseFlags(nil)
	require.NoError(t, err)
	require.Equal(t, checkoutNone, c.Opts.Checkout, "the earlier tables' setting stays the default")
	_, err = ParseFlags([]string{"-checkout", "worktree"})
	require.ErrorContains(t, err, "have none, in-place, git, copy")
	require.Equal(t, "memory", c.ServerDB, "the earlier tables' setting stays the default")
	_, err = ParseFlags([]string{"-server-db", "disk"})
	require.ErrorContains(t, err, "want memory or file")
	_, err = ParseFlags([]string{"-server-db", "file", "-address", "127.0.0.1:7233"})
	require.ErrorContains(t, err, "the server at -address")
}

func TestResponderShape(t *testing.T) {
	t.Parallel()
	wd, err := newWorld(0, checkoutNone)
	require.NoError(t, err)
	defer wd.close()
	res, err := runBaseline(t.Context(), wd.acts, 3)
	require.NoError(t, err)
	require.Equal(t, 4, res.Turns, "three tool turns and the final text")
	require.Len(t, res.perTurn(), 3)
}

// TestTinyConcurrencyAndReplay runs the concurrency scenario (worker
// process, plain SDK workflow) and the replay scenario with a transcript
// store at toy sizes, checking the tables, not the figures.
func TestTinyConcurrencyAndReplay(t *testing.T) {
	t.Parallel()
	bin := devserverBin(t)
	cfg, err := ParseFlags([]string{"-scenario", "concurrency,replay", "-runs", "1", "-sessions", "3",
		"-concurrency-turns", "2", "-replay-turns", "5", "-local-reads", "-devserver", bin,
		"-history", filepath.Join(t.TempDir(), "history.json")})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Run(cfg, &out))
	require.Contains(t, out.String(), "| 3 |")
	require.Contains(t, out.String(), "plain SDK steps/s")
	require.Contains(t, out.String(), "transcript store (")
	require.Contains(t, out.String(), "LocalReads:true")
}

func TestParseFlagsReplay(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		args         []string
		turns, calls int
		serverConfig bool
	}{
		{"store by default", []string{"-scenario", "replay"}, defaultStoreReplayTurns, 1, true},
		{"no store", []string{"-scenario", "replay", "-replay-store=false"}, 25, 100, true},
		{"explicit", []string{"-scenario", "replay", "-replay-turns", "7", "-replay-calls", "2"}, 7, 2, true},
		{"no replay, no server config", []string{"-scenario", "ratio"}, defaultStoreReplayTurns, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c, err := ParseFlags(tc.args)
			require.NoError(t, err)
			require.Equal(t, tc.turns, c.ReplayTurns)
			require.Equal(t, tc.calls, c.ReplayCalls)
			require.Equal(t, tc.serverConfig, slices.Contains(c.ServerFlags, replayServerConfig[0]))
		})
	}
}

// TestPlainAndFloorWorkflows: the bench's own SDK workflows make the
// model calls of their turns and the final one.
func TestPlainAndFloorWorkflows(t *testing.T) {
	t.Parallel()
	for name, run := range map[string]func(env *testsuite.TestWorkflowEnvironment){
		"plain": func(env *testsuite.TestWorkflowEnvironment) { env.ExecuteWorkflow(benchPlainWorkflow, 3) },
		"floor": func(env *testsuite.TestWorkflowEnvironment) {
			env.ExecuteWorkflow(benchFloorWorkflow, 3, time.Millisecond)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var ts testsuite.WorkflowTestSuite
			env := ts.NewTestWorkflowEnvironment()
			// The SDK's one-second deadlock detector measures this
			// machine, not the workflow: under -race on two loaded cores
			// a task can take longer. A workflow that really never yields
			// still fails, later.
			env.SetWorkerOptions(worker.Options{DeadlockDetectionTimeout: 10 * time.Second})
			env.RegisterActivity(&plainActivities{})
			run(env)
			require.True(t, env.IsWorkflowCompleted())
			require.NoError(t, env.GetWorkflowError())
			var calls int
			require.NoError(t, env.GetWorkflowResult(&calls))
			require.Equal(t, 4, calls, "three tool turns and the final text")
		})
	}
}

// TestPhasesSplitASession: a session's wall split from its event times:
// before the first model call, the model calls, between them, after the
// last, and outside the history.
func TestPhasesSplitASession(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	var evs []*historypb.HistoryEvent
	add := func(ms int, typ enumspb.EventType, attrs func(*historypb.HistoryEvent)) {
		ev := &historypb.HistoryEvent{EventId: int64(len(evs) + 1), EventType: typ, EventTime: timestamppb.New(t0.Add(time.Duration(ms) * time.Millisecond))}
		if attrs != nil {
			attrs(ev)
		}
		evs = append(evs, ev)
	}
	sched := func(name string) func(*historypb.HistoryEvent) {
		return func(ev *historypb.HistoryEvent) {
			ev.Attributes = &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
				ActivityType: &commonpb.ActivityType{Name: name}}}
		}
	}
	done := func(id int64) func(*historypb.HistoryEvent) {
		return func(ev *historypb.HistoryEvent) {
			ev.Attributes = &historypb.HistoryEvent_ActivityTaskCompletedEventAttributes{ActivityTaskCompletedEventAttributes: &historypb.ActivityTaskCompletedEventAttributes{ScheduledEventId: id}}
		}
	}
	add(0, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, nil)                 // 1
	add(10, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, sched("OpenCheckout")) // 2
	add(50, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, done(2))               // 3
	add(60, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, sched(actModel))       // 4
	add(260, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, done(4))              // 5
	add(270, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED, sched(actModel))      // 6
	add(470, enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED, done(6))              // 7
	add(500, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED, nil)             // 8
	p := phases(&historypb.History{Events: evs}, 505*time.Millisecond)
	require.Equal(t, sessionPhases{Before: 60 * time.Millisecond, Models: 400 * time.Millisecond, Between: 10 * time.Millisecond,
		After: 30 * time.Millisecond, Outside: 5 * time.Millisecond}, p)
}

// TestTinyFleet runs the fleet scenario at toy size (two worker
// processes, two sessions of two shell turns, a rolling restart) to prove
// the command works and its invariants hold: it fails on a violation,
// and checks the table, never the figures.
func TestTinyFleet(t *testing.T) {
	t.Parallel()
	bin := devserverBin(t)
	cfg, err := ParseFlags([]string{"-scenario", "fleet", "-devserver", bin, "-fleet-sessions", "2", "-fleet-turns", "2",
		"-fleet-workers", "2", "-fleet-slow-every", "2", "-fleet-sleep", "1s", "-fleet-drain-timeout", "30s", "-fleet-restart", "on",
		"-fleet-timeout", "5m"})
	require.NoError(t, err)
	var out bytes.Buffer
	require.NoError(t, Run(cfg, &out), out.String())
	require.Contains(t, out.String(), "| rolling restart of all 2 | 2 / 2 | 4 |")
	require.Contains(t, out.String(), "every invariant held")
}

func TestFleetFlags(t *testing.T) {
	t.Parallel()
	c, err := ParseFlags([]string{"-scenario", "fleet"})
	require.NoError(t, err)
	require.Equal(t, fleetConfig{Sessions: 100, Turns: 20, Workers: 3, SlowEvery: 5, Sleep: 3 * time.Second,
		Drain: time.Minute, Timeout: time.Hour, Restart: "both"}, c.Fleet)
	_, err = ParseFlags([]string{"-fleet-restart", "sometimes"})
	require.ErrorContains(t, err, `-fleet-restart "sometimes": want off, on or both`)
	_, err = ParseFlags([]string{"-fleet-sleep", "2m"})
	require.ErrorContains(t, err, "must be shorter than -fleet-drain-timeout")
}

// The fleet's model hands out one shell call a turn, every Every-th
// sleeping, then text once the conversation holds Turns results.
func TestFleetShape(t *testing.T) {
	t.Parallel()
	s := fleetShape{ID: "fleet-x-1", Turns: 3, Every: 2, Sleep: 1500 * time.Millisecond}
	got, ok := parseFleetPrompt(s.prompt())
	require.True(t, ok)
	require.Equal(t, s, got)
	require.Equal(t, "echo fleet-x-1:call_1 >> fleet-ledger.txt", s.command(1))
	require.Equal(t, "echo fleet-x-1:call_2 >> fleet-ledger.txt; sleep 1.5", s.command(2))
}
