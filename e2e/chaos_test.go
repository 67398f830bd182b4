package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/permission"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/workflows"
)

// The chaos tests kill the worker (and, in one test, the Temporal server)
// at chosen and random points of real sessions and check the invariants
// that must survive any crash. `make chaos` runs the long form; `make test`
// runs the default, short one. Settings, all optional:
//
//	LONGRUN_CHAOS_SESSIONS  sessions (default 5)
//	LONGRUN_CHAOS_SEED      the seed every plan and delay is drawn from (default 1; printed)
//	LONGRUN_CHAOS_PARALLEL  sessions at once (default 6): a killed mutating call takes
//	                        the 15 s heartbeat timeout to be declared lost, so they overlap
//	LONGRUN_CHAOS_KILLS     kill kinds to use (default model,tool,approval,anywhere)
//	LONGRUN_CHAOS_TIMEOUT   how long one session may take (default 3m)
//	LONGRUN_CHAOS_LOCAL     1: sessions run with local_reads and local_model, so
//	                        a kill lands inside a workflow task running local
//	                        activities (the at-most-once rule must still hold)
type chaosConfig struct {
	Sessions, Parallel int
	Seed               uint64
	Kinds              []string
	SessionTimeout     time.Duration
	Local              bool
}

func chaosConfigFromEnv(t *testing.T) chaosConfig {
	t.Helper()
	c := chaosConfig{Sessions: 5, Parallel: 6, Seed: 1, SessionTimeout: 3 * time.Minute,
		Kinds: []string{killModel, killTool, killApproval, killAnywhere}}
	atoi := func(name string, dst *int) {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a positive integer", name, v)
			}
			*dst = n
		}
	}
	atoi("LONGRUN_CHAOS_SESSIONS", &c.Sessions)
	atoi("LONGRUN_CHAOS_PARALLEL", &c.Parallel)
	if v := os.Getenv("LONGRUN_CHAOS_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("LONGRUN_CHAOS_SEED=%q: want an unsigned integer", v)
		}
		c.Seed = n
	}
	if v := os.Getenv("LONGRUN_CHAOS_KILLS"); v != "" {
		c.Kinds = nil
		for _, k := range strings.Split(v, ",") {
			switch k = strings.TrimSpace(k); k {
			case killModel, killTool, killApproval, killAnywhere:
				c.Kinds = append(c.Kinds, k)
			default:
				t.Fatalf("LONGRUN_CHAOS_KILLS: unknown kind %q (have %s, %s, %s, %s)", k, killModel, killTool, killApproval, killAnywhere)
			}
		}
	}
	c.Local = os.Getenv("LONGRUN_CHAOS_LOCAL") == "1"
	if v := os.Getenv("LONGRUN_CHAOS_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("LONGRUN_CHAOS_TIMEOUT=%q: want a positive duration", v)
		}
		c.SessionTimeout = d
	}
	return c
}

// TestChaosWorkerKills runs sessions, each with a worker process of its
// own, and SIGKILLs the worker at planned points (during a model call,
// during a mutating tool call, while a call waits for approval, or at a
// random moment), restarting it each time. Every session must still
// complete with every call paired, no mutating call run twice, and a
// history that replays.
func TestChaosWorkerKills(t *testing.T) {
	t.Parallel()
	cfg := chaosConfigFromEnv(t)
	t.Logf("chaos: seed %d (rerun with LONGRUN_CHAOS_SEED=%d), %d sessions, %d at once, kills %v, local calls %v",
		cfg.Seed, cfg.Seed, cfg.Sessions, cfg.Parallel, cfg.Kinds, cfg.Local)

	// One kill per session in the short run keeps `make test` quick; the
	// long run adds up to two more.
	extra := 0
	if cfg.Sessions > 6 {
		extra = 2
	}
	plans := make([]chaosPlan, cfg.Sessions)
	for i := range plans {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
		plans[i] = newChaosPlan(rng, fmt.Sprintf("s%02d", i), cfg.Kinds[i%len(cfg.Kinds)], extra, cfg.Kinds)
	}

	var (
		mu    sync.Mutex
		total chaosCounts
		wg    sync.WaitGroup
		sem   = make(chan struct{}, cfg.Parallel)
	)
	start := time.Now()
	for _, p := range plans {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			s := &chaosSession{t: t, plan: p, seed: cfg.Seed, addr: temporalAddr, c: tc, timeout: cfg.SessionTimeout, local: cfg.Local}
			n := s.run()
			mu.Lock()
			total.add(n)
			mu.Unlock()
		}()
	}
	wg.Wait()
	t.Logf("chaos: seed %d, %s, in %s", cfg.Seed, total, time.Since(start).Round(time.Second))
	if total.Sessions != cfg.Sessions || total.Completed != cfg.Sessions {
		t.Errorf("chaos: %d of %d sessions completed", total.Completed, cfg.Sessions)
	}
}

// chaosSession is one session under chaos: its workspace and ledger, its
// scripted model, its worker process, and the approver standing in for a
// person.
type chaosSession struct {
	t       *testing.T
	plan    chaosPlan
	seed    uint64
	addr    string        // Temporal frontend
	c       client.Client // for the test's own calls
	timeout time.Duration
	local   bool // local_reads and local_model

	id, taskQueue, apiKey, dir, workspace string
	model                                 *chaosModel
	srv                                   *sm.Server

	mu     sync.Mutex
	worker *groupProc
	hold   map[string]bool // calls the approver leaves alone: a kill is aimed at their wait
	counts chaosCounts

	stopApprover func()
	began        time.Time
}

// errorf reports a violation with what it takes to reproduce it.
func (s *chaosSession) errorf(format string, args ...any) {
	s.t.Errorf("chaos %s (seed %d, plan %s): %s", s.id, s.seed, s.plan, fmt.Sprintf(format, args...))
}

// run plays the session to its end under its kill plan and checks it; it
// reports violations through s.errorf and returns the counts.
func (s *chaosSession) run() chaosCounts {
	if err := s.setup(); err != nil {
		s.errorf("%v", err)
		return chaosCounts{Sessions: 1}
	}
	defer s.teardown()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	if err := s.start(ctx); err != nil {
		s.errorf("%v", err)
		return s.counts
	}
	s.inflict(ctx)
	return s.finish(ctx)
}

// setup makes the session's workspace, model and worker.
func (s *chaosSession) setup() error {
	s.began = time.Now()
	s.counts = chaosCounts{Sessions: 1, ByKind: map[string]int{}}
	s.id = fmt.Sprintf("chaos-%d-%s-%s", s.seed, s.plan.Name, randHex(3))
	s.taskQueue = "chaos-" + randHex(6)
	s.apiKey = "sk-chaos-" + randHex(16)
	s.dir = s.t.TempDir()
	s.workspace = filepath.Join(s.dir, "ws")
	if err := os.MkdirAll(s.workspace, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(s.workspace, "notes.txt"), []byte("chaos notes\n"), 0o644); err != nil {
		return err
	}
	// A git repository, so the session is isolated (the default): its
	// calls run in a checkout of its own, pinned to the worker that holds
	// it, and every kill restarts that worker on the same state directory.
	for _, args := range [][]string{{"init", "-q", "."}, {"add", "notes.txt"}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"}} {
		if out, err := exec.Command("git", append([]string{"-C", s.workspace}, args...)...).CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v: %s", args, err, out)
		}
	}
	s.model = newChaosModel(s.plan)
	s.srv = sm.NewResponder(s.model.respond)
	s.hold = map[string]bool{}
	for _, k := range s.plan.Kills {
		if k.Kind == killApproval {
			s.hold[s.plan.callID(k.Step, 0)] = true
		}
	}
	return s.startWorker()
}

func (s *chaosSession) teardown() {
	s.mu.Lock()
	w := s.worker
	s.mu.Unlock()
	if w != nil {
		w.stop()
	}
	s.srv.Close()
	if s.t.Failed() {
		s.t.Logf("chaos %s worker log (tail):\n%s", s.id, tailFile(s.logPath(), 6000))
	}
}

// start starts the workflow and the approver. The session's rules allow
// the plain `echo ...; sleep N` commands and nothing else, so the printf
// commands of ask steps wait for a person.
func (s *chaosSession) start(ctx context.Context) error {
	_, err := s.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: s.id, TaskQueue: s.taskQueue}, workflows.WorkflowType, workflows.SessionInput{
		Prompt:     "chaos session " + s.plan.Name,
		LocalReads: workflows.Flag(s.local), LocalModel: s.local,
		Rules: []permission.Rule{
			{Tool: "shell", Pattern: "echo *", Action: permission.Allow},
			{Tool: "shell", Pattern: "sleep *", Action: permission.Allow},
		},
	})
	if err != nil {
		return fmt.Errorf("start: %w", err)
	}
	actx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.approve(actx) }()
	s.stopApprover = func() { stop(); <-done }
	return nil
}

// finish waits for the session's result, stops the approver and checks
// the invariants, and the outcome of each planned kill.
func (s *chaosSession) finish(ctx context.Context) chaosCounts {
	var res workflows.SessionResult
	err := s.c.GetWorkflow(ctx, s.id, "").Get(ctx, &res)
	s.stopApprover()
	if err != nil {
		s.errorf("no result within %s: %v; %s; history %s", s.timeout, err, describeStuck(context.Background(), s.c, s.id), saveHistory(context.Background(), s.c, s.id))
		return s.counts
	}
	if res.FinalText != "done "+s.plan.Name {
		s.errorf("final text %q, want %q", res.FinalText, "done "+s.plan.Name)
	}

	ledgerPath, isoBad := s.checkIsolated(ctx, res)
	n, results, bad := checkInvariants(context.Background(), s.c, s.id, s.apiKey, ledgerPath, res)
	bad = append(bad, isoBad...)
	ledger, _, _ := readLedger(ledgerPath)
	for _, k := range s.plan.Kills {
		cid := s.plan.callID(k.Step, 0)
		switch k.Kind {
		case killTool:
			// The test saw the command's ledger line and killed the worker
			// while it slept: it ran once, and its result must say the
			// worker was lost rather than pretend it finished or failed.
			if r := results[cid]; r.Reason != conversation.ReasonWorkerLost || ledger[cid] != 1 {
				bad = append(bad, fmt.Sprintf("call %s killed while running: reason %q (want worker_lost), ledger %d (want 1)", cid, r.Reason, ledger[cid]))
			}
		case killModel:
			// The answer was held until after the kill: the call must have
			// been asked again, not lost with the worker.
			if n := s.model.requests(k.Step); n < 2 {
				bad = append(bad, fmt.Sprintf("model call of step %d killed in flight was sent %d times (want a retry)", k.Step, n))
			}
		case killApproval:
			if r := results[cid]; r.Reason != conversation.ReasonRan || ledger[cid] != 1 {
				bad = append(bad, fmt.Sprintf("call %s approved across a kill: reason %q (want ran), ledger %d (want 1)", cid, r.Reason, ledger[cid]))
			}
		}
	}
	if len(bad) > 0 {
		s.errorf("invariants violated:\n  %s\nhistory %s", strings.Join(bad, "\n  "), saveHistory(context.Background(), s.c, s.id))
	}
	n.Kills, n.ByKind, n.ServerRestarts = s.counts.Kills, s.counts.ByKind, s.counts.ServerRestarts
	reasons := map[conversation.Reason]int{}
	for _, r := range results {
		reasons[r.Reason]++
	}
	s.t.Logf("chaos %s: %s completed in %s: %d kills, results %v", s.id, s.plan, time.Since(s.began).Round(time.Second), n.Kills, reasons)
	return n
}

// liveLedger is the ledger while the session runs: in its own checkout,
// under the worker's state directory, not in the workspace.
func (s *chaosSession) liveLedger() string {
	return filepath.Join(s.dir, "state", checkout.Dir, checkout.Sanitize(s.id), ledgerFile)
}

// checkIsolated checks that the session ran isolated: its checkout query
// names its branch, the result carries the branch, the checkout is gone
// and the person's workspace has no ledger (every command ran in the
// checkout). It returns the ledger as the branch holds it, written to a
// file for checkInvariants.
func (s *chaosSession) checkIsolated(ctx context.Context, res workflows.SessionResult) (string, []string) {
	var bad []string
	branch := checkout.Branch(s.id)
	var co *session.Checkout
	if v, err := s.c.QueryWorkflow(ctx, s.id, "", workflows.QueryCheckout); err != nil {
		bad = append(bad, fmt.Sprintf("checkout query: %v", err))
	} else if err := v.Get(&co); err != nil || !co.Isolated() {
		bad = append(bad, fmt.Sprintf("the session did not run isolated: checkout %+v (%v)", co, err))
	} else if co.Branch != branch {
		bad = append(bad, fmt.Sprintf("checkout branch %q, want %q", co.Branch, branch))
	}
	if res.Branch != branch {
		bad = append(bad, fmt.Sprintf("result branch %q, want %q", res.Branch, branch))
	}
	if _, err := os.Stat(filepath.Dir(s.liveLedger())); !errors.Is(err, os.ErrNotExist) {
		bad = append(bad, fmt.Sprintf("the checkout %s is still there after the session ended (%v)", filepath.Dir(s.liveLedger()), err))
	}
	if _, err := os.Stat(filepath.Join(s.workspace, ledgerFile)); err == nil {
		bad = append(bad, "a ledger in the person's workspace: a command ran outside the session's checkout")
	}
	path := filepath.Join(s.dir, "ledger-on-branch.txt")
	out, err := exec.Command("git", "-C", s.workspace, "show", branch+":"+ledgerFile).Output()
	if err != nil {
		bad = append(bad, fmt.Sprintf("git show %s:%s: %v", branch, ledgerFile, err))
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		bad = append(bad, err.Error())
	}
	return path, bad
}

func (s *chaosSession) logPath() string { return filepath.Join(s.dir, "worker.log") }

func (s *chaosSession) startWorker() error {
	w, err := startGroupProc(filepath.Join(binDir, "worker"), []string{"--workspace", s.workspace,
		"--state-dir", filepath.Join(s.dir, "state"), "--config", filepath.Join(s.dir, "config")}, []string{
		"TEMPORAL_ADDRESS=" + s.addr,
		"LONGRUN_TASK_QUEUE=" + s.taskQueue,
		"OPENAI_BASE_URL=" + s.srv.URL(),
		"OPENAI_API_KEY=" + s.apiKey,
		"LONGRUN_MODEL=scripted-chaos",
	}, s.logPath())
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.worker = w
	s.mu.Unlock()
	return nil
}

// inflict waits for each planned kill's moment, kills the worker and
// restarts it. A trigger that never comes is a violation (the session did
// not get where its model was taking it), and the rest of the plan is
// skipped; the session must still complete.
func (s *chaosSession) inflict(ctx context.Context) {
	const triggerWait = 2 * time.Minute
	for _, k := range s.plan.Kills {
		cid := s.plan.callID(k.Step, 0)
		var ok bool
		switch k.Kind {
		case killModel, killAnywhere:
			ok = s.model.waitArrived(k.Step, triggerWait)
		case killTool:
			ok = pollUntil(ctx, triggerWait, func() bool {
				l, _, _ := readLedger(s.liveLedger())
				return l[cid] > 0
			})
		case killApproval:
			ok = pollUntil(ctx, triggerWait, func() bool { return s.isPending(ctx, cid) })
		}
		if !ok {
			s.errorf("kill %s: its trigger did not come within %s (is the session stuck after an earlier kill? see its result below)", k, triggerWait)
			s.release() // let the session finish without the rest of the plan
			return
		}
		sleepCtx(ctx, k.After)
		s.kill(k.Kind)
		if k.Kind == killApproval && k.SignalOK {
			// A signal is written to history with no worker up: the
			// approval must not be lost while the worker is dead.
			if err := s.c.SignalWorkflow(ctx, s.id, "", workflows.SignalApproval, workflows.Approval{CallID: cid, Decision: workflows.DecisionApprove}); err != nil {
				s.errorf("approval signal while the worker is dead: %v", err)
			}
		}
		sleepCtx(ctx, k.Down)
		if err := s.startWorker(); err != nil {
			s.errorf("restart worker: %v", err)
			s.release()
			return
		}
		if k.Kind == killApproval && !k.SignalOK {
			s.release(cid) // the approver approves it through the new worker
		}
	}
}

// release lets the approver approve the given held calls, or all of them.
func (s *chaosSession) release(callIDs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(callIDs) == 0 {
		s.hold = map[string]bool{}
	}
	for _, id := range callIDs {
		delete(s.hold, id)
	}
}

// kill SIGKILLs the worker and everything it started, and checks that no
// tool process outlived it.
func (s *chaosSession) kill(kind string) {
	s.mu.Lock()
	w := s.worker
	s.mu.Unlock()
	desc := w.kill()
	s.counts.Kills++
	s.counts.ByKind[kind]++
	deadline := time.Now().Add(5 * time.Second)
	for anyAlive(desc) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if anyAlive(desc) {
		s.errorf("tool processes %v outlived the worker's kill", desc)
	}
}

// approve stands in for the person: it approves every call that waits,
// alternating between the starter CLI and the SDK's update, except the
// calls a kill is aimed at, until ctx ends.
func (s *chaosSession) approve(ctx context.Context) {
	done := map[string]bool{}
	useCLI := true
	for ctx.Err() == nil {
		sleepCtx(ctx, 300*time.Millisecond)
		for _, p := range s.pending(ctx) {
			s.mu.Lock()
			held := s.hold[p.CallID]
			s.mu.Unlock()
			if held || done[p.CallID] {
				continue
			}
			var err error
			if useCLI {
				err = s.approveCLI(ctx, p.CallID)
			} else {
				err = s.approveUpdate(ctx, p.CallID)
			}
			// A failure (the worker was just killed, the query or update
			// found no poller) is retried on the next round.
			if err == nil {
				done[p.CallID] = true
				useCLI = !useCLI
			}
		}
	}
}

func (s *chaosSession) approveCLI(ctx context.Context, callID string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "starter"), "approve", s.id, callID)
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+s.addr, "LONGRUN_TASK_QUEUE="+s.taskQueue)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("starter approve: %v: %s", err, out)
	}
	return nil
}

func (s *chaosSession) approveUpdate(ctx context.Context, callID string) error {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	h, err := s.c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: s.id, UpdateName: workflows.UpdateApprove, WaitForStage: client.WorkflowUpdateStageCompleted,
		UpdateID: "approve:" + callID, // a resend after a kill is the same update
		Args:     []any{workflows.Approval{CallID: callID, Decision: workflows.DecisionApprove}},
	})
	if err != nil {
		return err
	}
	return h.Get(ctx, nil)
}

func (s *chaosSession) pending(ctx context.Context) []workflows.PendingApproval {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	val, err := s.c.QueryWorkflow(qctx, s.id, "", workflows.QueryPendingApprovals)
	if err != nil {
		return nil
	}
	var p []workflows.PendingApproval
	if val.Get(&p) != nil {
		return nil
	}
	return p
}

func (s *chaosSession) isPending(ctx context.Context, callID string) bool {
	for _, p := range s.pending(ctx) {
		if p.CallID == callID {
			return true
		}
	}
	return false
}

// pollUntil polls cond every 50 ms for up to d; false if it never held.
func pollUntil(ctx context.Context, d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	for ctx.Err() == nil && time.Now().Before(deadline) {
		if cond() {
			return true
		}
		sleepCtx(ctx, 50*time.Millisecond)
	}
	return false
}

func sleepCtx(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
