package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// The fleet scenario (issue 34): several longrun-worker processes, each
// with a state directory of its own (standing for machines), serve many
// isolated sessions of shell turns at once, with and without a rolling
// restart of every worker while they run (SIGTERM, wait for the drain and
// the exit, start again on the same state directory, next). Every call
// appends one line to a ledger in its session's checkout, so the bench
// counts double executions and lost writes from the branch each session
// leaves; it counts worker_lost results and unpaired calls from each
// session's conversation.

// fleetConfig is the fleet scenario's shape (the -fleet-* flags).
type fleetConfig struct {
	Sessions, Turns, Workers int
	SlowEvery                int           // every SlowEvery-th command sleeps
	Sleep                    time.Duration // how long
	Drain                    time.Duration // the workers' --drain-timeout
	Timeout                  time.Duration // the longest the scenario may take
	Restart                  string        // off, on or both
	WorkerBin                string        // a built longrun-worker; "": go build it
	Keep                     bool          // keep the fleet's directory (logs, state)
}

// bind defines the -fleet-* flags.
func (fc *fleetConfig) bind(fs *flag.FlagSet) {
	fs.IntVar(&fc.Sessions, "fleet-sessions", 100, "fleet: isolated sessions at once")
	fs.IntVar(&fc.Turns, "fleet-turns", 20, "fleet: shell tool turns per session")
	fs.IntVar(&fc.Workers, "fleet-workers", 3, "fleet: longrun-worker processes, each with a state directory of its own")
	fs.IntVar(&fc.SlowEvery, "fleet-slow-every", 5, "fleet: every N-th command of a session sleeps -fleet-sleep (0: none)")
	fs.DurationVar(&fc.Sleep, "fleet-sleep", 3*time.Second, "fleet: how long a slow command sleeps")
	fs.DurationVar(&fc.Drain, "fleet-drain-timeout", time.Minute, "fleet: the workers' --drain-timeout")
	fs.DurationVar(&fc.Timeout, "fleet-timeout", time.Hour, "fleet: the longest the scenario may take")
	fs.StringVar(&fc.Restart, "fleet-restart", "both", "fleet: off (no restart), on (a rolling restart of every worker during the run), or both, side by side")
	fs.StringVar(&fc.WorkerBin, "worker-bin", "", "fleet: a built longrun-worker (default: go build it)")
	fs.BoolVar(&fc.Keep, "fleet-keep", false, "fleet: keep the fleet's directory (worker logs, state directories) and print where")
}

// check refuses a fleet that cannot run.
func (fc fleetConfig) check() error {
	switch {
	case fc.Sessions <= 0 || fc.Turns <= 0 || fc.Workers <= 0:
		return errors.New("-fleet-sessions, -fleet-turns and -fleet-workers must be positive")
	case fc.SlowEvery < 0 || fc.Sleep < 0:
		return errors.New("-fleet-slow-every and -fleet-sleep must not be negative")
	case fc.Sleep >= fc.Drain:
		return fmt.Errorf("-fleet-sleep %s must be shorter than -fleet-drain-timeout %s: the scenario counts worker_lost for commands shorter than the drain timeout", fc.Sleep, fc.Drain)
	}
	switch fc.Restart {
	case "off", "on", "both":
		return nil
	}
	return fmt.Errorf("-fleet-restart %q: want off, on or both", fc.Restart)
}

// fleetLedger is the file in each session's checkout every call appends
// "<session>:<call id>" to.
const fleetLedger = "fleet-ledger.txt"

// fleetPromptPrefix carries the session's shape in its prompt, so one
// stateless responder serves every session.
const fleetPromptPrefix = "fleet session="

// fleetShape is what a fleet session's prompt asks for.
type fleetShape struct {
	ID    string
	Turns int
	Every int // every Every-th turn's command sleeps
	Sleep time.Duration
}

func (s fleetShape) prompt() string {
	return fmt.Sprintf("%s%s turns=%d every=%d sleep=%s: append to the ledger", fleetPromptPrefix, s.ID, s.Turns, s.Every, s.Sleep)
}

func parseFleetPrompt(p string) (fleetShape, bool) {
	if !strings.HasPrefix(p, fleetPromptPrefix) {
		return fleetShape{}, false
	}
	head, _, _ := strings.Cut(strings.TrimPrefix(p, fleetPromptPrefix), ":")
	f := strings.Fields(head)
	if len(f) != 4 {
		return fleetShape{}, false
	}
	s := fleetShape{ID: f[0]}
	s.Turns, _ = strconv.Atoi(strings.TrimPrefix(f[1], "turns="))
	s.Every, _ = strconv.Atoi(strings.TrimPrefix(f[2], "every="))
	s.Sleep, _ = time.ParseDuration(strings.TrimPrefix(f[3], "sleep="))
	return s, true
}

// command is turn n's shell command (n from 1): a ledger line, and a
// sleep on every Every-th turn so a drain has something to wait for.
func (s fleetShape) command(n int) string {
	c := fmt.Sprintf("echo %s:call_%d >> %s", s.ID, n, fleetLedger)
	if s.Every > 0 && n%s.Every == 0 {
		c += fmt.Sprintf("; sleep %g", s.Sleep.Seconds())
	}
	return c
}

// fleetModel answers each session with one shell call a turn until the
// conversation holds as many results as its prompt asks for, then text.
// calls counts the tool calls it handed out, so the bench knows how far
// the fleet has got.
func fleetModel(calls *atomic.Int64) *scriptedmodel.Server {
	return scriptedmodel.NewResponder(func(req scriptedmodel.Request) (scriptedmodel.Reply, bool) {
		var shape fleetShape
		ok, results := false, 0
		for _, m := range req.Messages {
			switch {
			case m.Role == "user" && !ok:
				shape, ok = parseFleetPrompt(m.Content)
			case m.Role == "tool":
				results++
			}
		}
		if !ok || results >= shape.Turns {
			return scriptedmodel.Reply{Text: "done"}, true
		}
		n := results + 1
		calls.Add(1)
		args := fmt.Sprintf(`{"command":%q}`, shape.command(n))
		return scriptedmodel.Reply{ToolCalls: []scriptedmodel.Call{{ID: fmt.Sprintf("call_%d", n), Name: "shell", Arguments: args}}}, true
	})
}

// fleetRules let the sessions' commands run without a person: the
// ledger's echo and the sleep, nothing else.
var fleetRules = []permission.Rule{
	{Tool: "shell", Pattern: "echo *", Action: permission.Allow},
	{Tool: "shell", Pattern: "sleep *", Action: permission.Allow},
}

// fleet is the running fleet: the workers, what they share, the model.
type fleet struct {
	c       Config
	dir     string
	ws      string // the workspace repository every worker serves
	queue   string
	workers []*fleetWorker
	model   *scriptedmodel.Server
	calls   atomic.Int64
	client  client.Client
}

// newFleet makes the workspace, the shared transcript directory and
// checkpoint remote, and starts the workers.
func newFleet(c Config, srv *server) (*fleet, error) {
	dir, err := os.MkdirTemp("", "longrun-bench-fleet-")
	if err != nil {
		return nil, err
	}
	f := &fleet{c: c, dir: dir, ws: filepath.Join(dir, "workspace"), queue: fmt.Sprintf("bench-fleet-%d", time.Now().UnixNano())}
	bin := c.Fleet.WorkerBin
	if bin == "" {
		if bin, err = buildWorker(dir); err != nil {
			return f, err
		}
	}
	remote := filepath.Join(dir, "checkpoints.git")
	for _, args := range [][]string{{"init", "-q", "-b", "main", f.ws}, {"init", "-q", "--bare", remote}} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			return f, fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(f.ws, "notes.txt"), []byte("fleet notes\n"), 0o644); err != nil {
		return f, err
	}
	for _, args := range [][]string{{"add", "notes.txt"}, {"-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", f.ws}, args...)...).CombinedOutput(); err != nil {
			return f, fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	f.model = fleetModel(&f.calls)
	for i := 1; i <= c.Fleet.Workers; i++ {
		w := &fleetWorker{n: i, bin: bin, log: filepath.Join(dir, fmt.Sprintf("worker-%d.log", i)),
			args: []string{
				"--workspace", f.ws,
				"--state-dir", filepath.Join(dir, fmt.Sprintf("state-%d", i)),
				"--config", filepath.Join(dir, fmt.Sprintf("config-%d", i)),
				"--transcript", filepath.Join(dir, "transcript"),
				"--checkpoint-remote", remote,
				"--drain-timeout", c.Fleet.Drain.String(),
			},
			env: []string{
				"TEMPORAL_ADDRESS=" + srv.addr,
				"LONGRUN_TASK_QUEUE=" + f.queue,
				"OPENAI_BASE_URL=" + f.model.URL(),
				"OPENAI_API_KEY=sk-bench-fleet",
				"LONGRUN_MODEL=scripted-fleet",
				"LONGRUN_SKILLS_DIRS=off",
			}}
		f.workers = append(f.workers, w)
		if err := w.start(); err != nil {
			return f, err
		}
	}
	f.client, err = client.Dial(c.Opts.clientOptions(srv.addr))
	if err != nil {
		return f, fmt.Errorf("dial %s: %w", srv.addr, err)
	}
	return f, nil
}

func (f *fleet) close() {
	var wg sync.WaitGroup
	for _, w := range f.workers {
		wg.Add(1)
		go func() { defer wg.Done(); w.stop(f.c.Fleet.Drain + 30*time.Second) }()
	}
	wg.Wait()
	if f.client != nil {
		f.client.Close()
	}
	if f.model != nil {
		f.model.Close()
	}
	if f.c.Fleet.Keep {
		fmt.Fprintf(os.Stderr, "fleet: kept %s (worker logs, state directories)\n", f.dir)
		return
	}
	_ = os.RemoveAll(f.dir)
}

// fleetRun is one measured run: its figures and invariant counts.
type fleetRun struct {
	Restart                    bool
	Sessions, Completed, Steps int
	Wall                       time.Duration
	WorkerLost, Doubles        int
	Missing, Unpaired, Other   int
	// Again counts calls scheduled more than once because no worker
	// began them (workflows/activity.go neverStarted): a dispatch the
	// server lost, recovered without running anything twice.
	Again    int
	Drains   []drained
	Problems []string
}

// run starts n sessions of turns tool turns at once and waits for all;
// with restart, a rolling restart of every worker begins once a fifth of
// their calls have been handed out.
func (f *fleet) run(ctx context.Context, name string, n, turns int, restart bool) (fleetRun, error) {
	r := fleetRun{Restart: restart, Sessions: n}
	shapes := make([]fleetShape, n)
	prefix := fmt.Sprintf("fleet-%s-%s", name, randomSuffix())
	for i := range shapes {
		shapes[i] = fleetShape{ID: fmt.Sprintf("%s-%03d", prefix, i), Turns: turns, Every: f.c.Fleet.SlowEvery, Sleep: f.c.Fleet.Sleep}
	}
	calls0 := f.calls.Load()
	began := time.Now()
	runs := make([]client.WorkflowRun, n)
	for i, s := range shapes {
		run, err := f.client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: s.ID, TaskQueue: f.queue}, workflows.WorkflowType,
			workflows.SessionInput{Prompt: s.prompt(), Rules: fleetRules})
		if err != nil {
			return r, fmt.Errorf("start %s: %w", s.ID, err)
		}
		runs[i] = run
	}
	restarted := make(chan error, 1)
	if restart {
		go func() { restarted <- f.rollingRestart(ctx, calls0+int64(n*turns/5), &r) }()
	} else {
		close(restarted)
	}
	results := make([]workflows.SessionResult, n)
	errs := make([]error, n)
	ended := make([]time.Time, n)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = runs[i].Get(ctx, &results[i])
			ended[i] = time.Now()
		}()
	}
	wg.Wait()
	last := began
	for _, e := range ended {
		if e.After(last) {
			last = e
		}
	}
	r.Wall = last.Sub(began)
	if err := <-restarted; err != nil {
		r.Problems = append(r.Problems, "rolling restart: "+err.Error())
	}
	for i, s := range shapes {
		if errs[i] != nil {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: no result: %v", s.ID, errs[i]))
			continue
		}
		f.check(ctx, s, results[i], &r)
	}
	return r, nil
}

// rollingRestart waits until the fleet has handed out calls calls, then
// restarts each worker in turn: SIGTERM, its drain and exit, a start on
// the same state directory, the next.
func (f *fleet) rollingRestart(ctx context.Context, calls int64, r *fleetRun) error {
	for f.calls.Load() < calls {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	for _, w := range f.workers {
		d, err := w.drain(f.c.Fleet.Drain + 30*time.Second)
		if err != nil {
			return err
		}
		r.Drains = append(r.Drains, d)
		if err := w.start(); err != nil {
			return err
		}
	}
	return nil
}

// check counts one session's invariants into r: it completed; each call
// has one result (pairing) that is not worker_lost; each call that says
// it ran left exactly one ledger line on the session's branch, and none
// left two.
func (f *fleet) check(ctx context.Context, s fleetShape, res workflows.SessionResult, r *fleetRun) {
	if res.Status != workflows.ResultCompleted {
		r.Problems = append(r.Problems, fmt.Sprintf("%s ended %q: %s", s.ID, res.Status, res.Error))
		return
	}
	r.Completed++
	qctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var msgs []conversation.Message
	v, err := f.client.QueryWorkflow(qctx, s.ID, "", workflows.QueryConversation)
	if err == nil {
		err = v.Get(&msgs)
	}
	if err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("%s: conversation: %v", s.ID, err))
		return
	}
	if err := conversation.CheckPairing(msgs); err != nil {
		var joined interface{ Unwrap() []error }
		if errors.As(err, &joined) {
			r.Unpaired += len(joined.Unwrap())
		} else {
			r.Unpaired++
		}
		r.Problems = append(r.Problems, fmt.Sprintf("%s: pairing: %v", s.ID, err))
	}
	// The bench's own workspace and its scripted sessions: no model text
	// reaches this git; `git show` of a blob runs no filter or hook.
	out, err := exec.Command("git", "-C", f.ws, "show", checkout.Branch(s.ID)+":"+fleetLedger).Output()
	if err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("%s: the ledger on %s: %v", s.ID, checkout.Branch(s.ID), err))
	}
	lines := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if id, call, ok := strings.Cut(l, ":"); ok && id == s.ID {
			lines[call]++
		} else if l != "" {
			r.Problems = append(r.Problems, fmt.Sprintf("%s: a ledger line not its own: %q", s.ID, l))
		}
	}
	scheduled, err := f.toolActivities(qctx, s.ID)
	if err != nil {
		r.Problems = append(r.Problems, fmt.Sprintf("%s: history: %v", s.ID, err))
	}
	results := 0
	for _, m := range msgs {
		if m.Result != nil {
			results++
		}
	}
	r.Again += max(scheduled-results, 0)
	for _, m := range msgs {
		if m.Result == nil {
			continue
		}
		r.Steps++
		id := m.Result.CallID
		switch {
		case m.Result.Reason == conversation.ReasonWorkerLost:
			r.WorkerLost++
			r.Problems = append(r.Problems, fmt.Sprintf("%s %s: worker_lost: %.200s", s.ID, id, m.Result.Content))
		case m.Result.Reason != conversation.ReasonRan:
			r.Other++
			r.Problems = append(r.Problems, fmt.Sprintf("%s %s: result %q: %.200s", s.ID, id, m.Result.Reason, m.Result.Content))
		case lines[id] == 0:
			r.Missing++
			r.Problems = append(r.Problems, fmt.Sprintf("%s %s: ran, but no ledger line on the branch", s.ID, id))
		}
		if lines[id] > 1 {
			r.Doubles++
			r.Problems = append(r.Problems, fmt.Sprintf("%s %s: %d ledger lines (double execution)", s.ID, id, lines[id]))
		}
	}
}

// toolActivities counts the RunTool activities the session scheduled:
// one per call, more for a call scheduled again because no worker began
// it. Every call of a fleet session is a shell command, an activity.
func (f *fleet) toolActivities(ctx context.Context, id string) (int, error) {
	n := 0
	it := f.client.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return n, err
		}
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "RunTool" {
			n++
		}
	}
	return n, nil
}

// randomSuffix tells runs apart, so a second fleet on the same server
// starts sessions of its own.
func randomSuffix() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// fleetScenario runs the fleet without, then with, the rolling restart
// (as -fleet-restart says) and prints them side by side.
func fleetScenario(ctx context.Context, c Config, srv *server, out io.Writer) error {
	f, err := newFleet(c, srv)
	if f != nil {
		defer f.close()
	}
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, c.Fleet.Timeout)
	defer cancel()
	if _, err := f.run(ctx, "warm", 2, 2, false); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	var modes []bool
	switch c.Fleet.Restart {
	case "off":
		modes = []bool{false}
	case "on":
		modes = []bool{true}
	default:
		modes = []bool{false, true}
	}
	fmt.Fprintf(out, "### fleet: %d longrun-worker processes, %d isolated sessions of %d shell turns at once (every %d-th sleeps %s), zero-latency model, drain timeout %s\n\n",
		c.Fleet.Workers, c.Fleet.Sessions, c.Fleet.Turns, c.Fleet.SlowEvery, c.Fleet.Sleep, c.Fleet.Drain)
	var runs []fleetRun
	for _, restart := range modes {
		name := map[bool]string{false: "steady", true: "restart"}[restart]
		r, err := f.run(ctx, name, c.Fleet.Sessions, c.Fleet.Turns, restart)
		if err != nil {
			return fmt.Errorf("%s run: %w", name, err)
		}
		runs = append(runs, r)
	}
	fmt.Fprintf(out, "| run | sessions completed | tool steps | wall s | steps/s | worker_lost | double executions | ran without a ledger line | other results | unpaired calls | calls scheduled again (no worker began them) | drains: s each (calls running at SIGTERM, checkpoints pushed / already in the remote) |\n")
	fmt.Fprintf(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n")
	for _, r := range runs {
		var ds []string
		for _, d := range r.Drains {
			clean := ""
			if !d.Clean {
				clean = ", cut off"
			}
			ds = append(ds, fmt.Sprintf("%.1f (%d calls, %d/%d%s)", d.Took.Seconds(), d.Calls, d.Pushed, d.There, clean))
		}
		name := "no restart"
		if r.Restart {
			name = "rolling restart of all " + strconv.Itoa(c.Fleet.Workers)
		}
		fmt.Fprintf(out, "| %s | %d / %d | %d | %.1f | %.1f | %d | %d | %d | %d | %d | %d | %s |\n", name, r.Completed, r.Sessions, r.Steps,
			r.Wall.Seconds(), float64(r.Steps)/r.Wall.Seconds(), r.WorkerLost, r.Doubles, r.Missing, r.Other, r.Unpaired, r.Again, strings.Join(ds, "; "))
	}
	if len(runs) == 2 && runs[0].Wall > 0 && runs[1].Wall > 0 {
		a, b := float64(runs[0].Steps)/runs[0].Wall.Seconds(), float64(runs[1].Steps)/runs[1].Wall.Seconds()
		fmt.Fprintf(out, "\nsteps/s with the rolling restart / without: %.3f\n", b/a)
	}
	fmt.Fprintf(out, "\nA step is a tool turn (a model call and a shell call appending a line to the session's ledger in its own checkout). "+
		"Each worker has its own state directory; all share the workspace repository, a transcript directory and a bare checkpoint remote. "+
		"Double executions and missing lines are read from the ledger on each session's branch; worker_lost and unpaired calls from its conversation.\n\n")
	var problems []string
	for _, r := range runs {
		problems = append(problems, r.Problems...)
	}
	if len(problems) > 0 {
		for i, p := range problems {
			if i == 20 {
				fmt.Fprintf(out, "- … %d more\n", len(problems)-20)
				break
			}
			fmt.Fprintf(out, "- %s\n", p)
		}
		return fmt.Errorf("fleet: %d invariant violations (listed above; worker logs in %s with -fleet-keep)", len(problems), f.dir)
	}
	fmt.Fprintf(out, "every invariant held: every session completed, 0 worker_lost, 0 double executions, 0 unpaired calls\n\n")
	return nil
}
