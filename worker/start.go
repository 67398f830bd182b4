package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/codec"
	"github.com/longrun/longrun/notify"
	"github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/transcript"
	"github.com/longrun/longrun/workflows"
)

// started is what Run's steps open once and every root shares: the
// Temporal client, the worker's jobs, transcript store and notification
// sinks, the options of every Temporal worker it starts, and what to
// close when Run returns.
type started struct {
	logger *slog.Logger
	opts   client.Options
	client client.Client
	jobs   *tools.Jobs
	// store is the transcript store; nil: --transcript off.
	store *transcript.Cache
	// sender posts notifications; nil: no sink.
	sender   *notify.Sender
	sessions *workflows.Sessions
	// checkouts is the queue of the checkouts in the state directory
	// (checkoutQueue), before rootCheckoutQueue names it per root.
	checkouts string
	wopts     worker.Options
	calls     *held
	// closers are called the last first by close.
	closers []func()
}

// deferClose adds f to what close calls.
func (s *started) deferClose(f func()) { s.closers = append(s.closers, f) }

// close calls what the steps opened, the last first, as defers would.
func (s *started) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
}

// openRoots opens every --workspace root, checks that it can hold what
// the worker makes there (checkRoot), and reads the configuration that
// counts for it (prepare).
func (m *Main) openRoots(logger *slog.Logger) ([]servedRoot, error) {
	roots, err := openRoots(m.Workspaces.dirs)
	if err != nil {
		return nil, err
	}
	for _, r := range roots {
		if err := checkRoot(r.ws.Root(), m.InPlace, logger); err != nil {
			return nil, err
		}
	}
	for i := range roots {
		cfg, err := m.prepare(roots[i].ws.Root(), logger)
		if err != nil {
			return nil, err
		}
		roots[i].cfg = cfg
		roots[i].tools.HidePaths, roots[i].tools.Skills = m.Tools.HidePaths, m.Tools.Skills
	}
	return roots, nil
}

// reportSandbox says at start-up what a command can reach, so an
// operator knows; mode on refuses to start rather than run commands
// unconfined.
func (m *Main) reportSandbox(logger *slog.Logger) error {
	switch sandboxed, why, err := tools.CheckSandbox(m.Tools.Shell); {
	case err != nil:
		return fmt.Errorf("--sandbox: %w", err)
	case sandboxed:
		logger.Info("shell commands run sandboxed (bubblewrap): a command nobody approved runs read-only " +
			"(working directory read-only, no network, private /tmp, empty home, no host sockets); " +
			"an approved one may write its session's working directory except .git, .longrun and AGENTS.md")
		if ok, why := tools.CheckSandboxNetwork(m.Tools.Shell); ok {
			logger.Info("sessions that allow the network get it through pasta: the outside is reachable, this host's loopback services are not")
		} else {
			logger.Warn("commands of sessions that allow the network are refused: no network that keeps them from this host's loopback services", "reason", why)
		}
	default:
		logger.Warn("no sandbox: no shell command runs without a person's approval (or a rule a person wrote), approved commands run unconfined, and profile auto sessions refuse to start", "reason", why)
	}
	return nil
}

// startScriptedModel serves the scripted demo model in-process for
// --scripted-model demo, and points the model config at it.
func (m *Main) startScriptedModel(s *started) {
	if m.Scripted != "demo" {
		return
	}
	srv := scriptedmodel.NewResponder(scriptedmodel.Demo())
	s.deferClose(srv.Close)
	m.Model.BaseURL, m.Model.APIKey = srv.URL(), "scripted"
	if m.Model.DefaultModel == "" {
		m.Model.DefaultModel = "scripted-demo"
	}
	s.logger.Info("using the scripted demo model, not a live one", "url", srv.URL())
}

// dial connects to Temporal with the worker's logger, payload codec and
// metrics.
func (m *Main) dial(s *started) error {
	opts, err := m.Temporal.clientOptions()
	if err != nil {
		return err
	}
	opts.Logger = sdklog.NewStructuredLogger(s.logger)
	if m.Keys != nil {
		// Every payload, the conversation and tool results included,
		// reaches Temporal's database encrypted.
		opts.DataConverter = codec.DataConverter(m.Keys)
		s.logger.Info("payloads and transcripts encrypted (AES-256-GCM)", "key", m.Keys.Current(), "keys", m.Keys.IDs())
	}
	metrics, stopMetrics, err := m.Observe.startMetrics(s.logger)
	if err != nil {
		return err
	}
	s.deferClose(stopMetrics)
	opts.MetricsHandler = metrics
	c, err := client.Dial(opts)
	if err != nil {
		return fmt.Errorf("cannot reach Temporal at %s: %w", opts.HostPort, err)
	}
	s.deferClose(c.Close)
	s.opts, s.client = opts, c
	return nil
}

// startJobs makes the worker's job manager and session files, and starts
// the reaper. Background jobs are processes of this worker: they die
// with it, and calls about them come to a task queue only this worker
// polls.
func (m *Main) startJobs(s *started) {
	s.jobs = tools.NewJobs()
	s.deferClose(s.jobs.Close)
	m.Tools.Jobs = s.jobs
	m.Tools.Files = tools.NewSessionFiles(m.StateDir, m.Tools.Shell.SessionQuotaBytes)
	reapCtx, stopReaper := context.WithCancel(context.Background())
	s.deferClose(stopReaper)
	go (&reaper{temporal: s.client, jobs: s.jobs, files: m.Tools.Files, every: m.bounds.reapEvery, logger: s.logger}).run(reapCtx)
}

// openLanguageServers reads the config directory's language servers;
// none is no error.
func (m *Main) openLanguageServers(s *started) error {
	languageServers, err := openLSP(m.ConfigDir, s.logger, m.Tools)
	if err != nil {
		return err
	}
	if languageServers != nil {
		s.deferClose(func() { languageServers.Close() })
		m.Tools.LSP = languageServers
	}
	return nil
}

// logGuardian takes the guardian's prompt from the config directory cfg
// read and says which model and prompt review calls.
func (m *Main) logGuardian(cfg workerConfig, logger *slog.Logger) {
	m.Guardian.Prompt = cfg.GuardianPrompt
	prompt := "built-in"
	if cfg.GuardianPrompt != "" {
		prompt = filepath.Join(m.ConfigDir, configGuardian)
	}
	logger.Info("guardian for sessions with approval guardian", "model", or(m.Guardian.Model, "the session's"),
		"prompt", prompt, "timeout", m.Guardian.Timeout)
}

// openTranscriptStore opens the transcript store and the sessions'
// workflow value, whose conversation query reads the store.
func (m *Main) openTranscriptStore(s *started) error {
	store, where, err := openTranscript(m.Transcript, m.StateDir, m.Keys)
	if err != nil {
		return err
	}
	s.sessions = &workflows.Sessions{Address: s.opts.HostPort, Namespace: s.opts.Namespace}
	if store != nil {
		// The conversation query resolves the session's references
		// through the same cache the model calls fill.
		s.sessions.Transcript = store
		s.store = store
		s.logger.Info("transcript store", "store", where)
	} else {
		s.logger.Warn("no transcript store (--transcript off): every model call carries the whole conversation through history")
	}
	return nil
}

// openNotify makes the sender of notifications, if any sink is named.
func (m *Main) openNotify(s *started) error {
	sender, err := m.Notify.sender(m.StateDir, s.opts.HostPort, s.opts.Namespace)
	if err != nil {
		return err
	}
	if sender != nil {
		// Counted, never listed: a webhook URL may hold a token.
		s.logger.Info("notifications", "webhooks", len(m.Notify.Webhooks), "slack", len(m.Notify.Slack),
			"signed", sender.Secret != nil, "inbox", m.Notify.ConsoleURL)
	}
	s.sender = sender
	return nil
}

// lockCheckoutQueue takes the state directory's lock and names the queue
// of its checkouts (checkoutQueue).
func (m *Main) lockCheckoutQueue(s *started) {
	checkouts, unlock, note := checkoutQueue(m.TaskQueue, m.StateDir)
	s.deferClose(unlock)
	if note != "" {
		s.logger.Warn(note)
	}
	s.checkouts = checkouts
}

// heartbeatThrottle is the worker's MaxHeartbeatThrottleInterval.
const heartbeatThrottle = 5 * time.Second

// workerOptions are the options of every Temporal worker Run starts.
func (m *Main) workerOptions(s *started) {
	// Heartbeats carry the live output of tools and the partial text of a
	// streaming model; the SDK forwards them at most this often (by default
	// 80% of the heartbeat timeout), so the Web UI, watch and chat show
	// progress every few seconds. The SDK also gives each heartbeat RPC
	// this long to answer (sdk internalHeartBeat): at 2 s a server under
	// load (the fleet benchmark, 100 sessions on two cores) answered none
	// in time for half a minute and ~5% of commands came back worker_lost
	// from a worker that was alive. 5 s is the compromise: two tries in
	// the model's 20 s heartbeat timeout, six in a tool's 30 s.
	s.wopts = worker.Options{MaxHeartbeatThrottleInterval: heartbeatThrottle}
	// On SIGTERM every worker stops polling, and what runs may finish
	// for up to the drain timeout before its context is cancelled;
	// held says in the log what the drain waits for.
	s.wopts.WorkerStopTimeout = m.drain.timeout
	s.calls = newHeld(s.logger)
	s.wopts.Interceptors = []interceptor.WorkerInterceptor{s.calls}
	m.deployment.report(s.logger)
}

// rootQueues are a root's queues besides its own root queues: the
// worker's own queue for its jobs, and the queue its checkouts are pinned
// to.
type rootQueues struct {
	own, pinned string
}

// rootQueues names root i's queues: the own queue is new for each root,
// as it is for each process (ownQueue).
func (m *Main) rootQueues(s *started, i int, r servedRoot) rootQueues {
	return rootQueues{own: ownQueue(m.TaskQueue), pinned: rootCheckoutQueue(s.checkouts, i, r)}
}

// buildActivities makes root i's activities, confined to it, with every
// dependency given to activities.New at once. The first root says in
// the log where checkpoints and checkouts go; the others are the same.
func (m *Main) buildActivities(s *started, i int, r servedRoot, q rootQueues) (*activities.Activities, error) {
	tcfg := m.Tools
	tcfg.HidePaths, tcfg.Skills = r.tools.HidePaths, r.tools.Skills
	cfg := activities.Config{
		Model:            m.Model,
		Registry:         tools.NewRegistry(tools.Builtin(tcfg)...),
		Workspace:        r.ws,
		Worker:           activities.WorkerConfig{Rules: r.cfg.Rules, TrustWorkspace: r.cfg.Trusted, Notes: r.cfg.Notes, Skills: tcfg.Skills.Locations},
		Guardian:         m.Guardian,
		Notify:           s.sender,
		Jobs:             s.jobs,
		WorkerQueue:      q.own,
		Shell:            &tcfg.Shell,
		StateDir:         m.StateDir,
		InPlace:          m.InPlace,
		LSP:              tcfg.LSP,
		CheckpointRemote: m.CheckpointRemote,
		CheckoutQueue:    q.pinned,
		MaxCheckoutBytes: m.checkouts.max,
		Forge:            m.push.forge(),
		Setup:            m.setup.config(tcfg),
	}
	if s.store != nil {
		// Not a nil *transcript.Cache in the interface: that would be a
		// store that is there.
		cfg.Transcript = s.store
	}
	logger := s.logger
	if i > 0 {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg.MaxBundleBytes = m.bundles.apply(m.CheckpointRemote, m.Transcript, logger)
	if i == 0 {
		m.checkouts.report(m.StateDir, s.logger)
		if cfg.Setup != nil {
			s.logger.Info("new checkouts run a setup command first", "every_repository", cfg.Setup.Commands[""], "repositories", cfg.Setup.Repos(), "timeout", cfg.Setup.Timeout)
		}
		// Layers of earlier runs, with or without a setup command now.
		if removed, err := activities.PruneSetupLayers(m.StateDir, m.setup.keep, time.Now()); err != nil {
			s.logger.Warn("could not remove old setup layers", "error", err)
		} else if len(removed) > 0 {
			s.logger.Info("removed setup layers no session used", "keep", m.setup.keep, "layers", removed)
		}
		if cfg.Forge != nil {
			s.logger.Info("sessions' branches are published when they end", "push", cfg.Forge.String())
		}
	}
	servers, err := openMCP(r.cfg.MCP, r.ws.Root(), s.logger, tcfg)
	if err != nil {
		return nil, err
	}
	if servers != nil {
		s.deferClose(func() { servers.Close() })
		cfg.MCP = servers
		s.logger.Info("MCP servers (connected on first use)", "workspace", r.ws.Root(), "config", r.cfg.MCPFiles, "servers", servers.Servers())
	}
	return activities.New(cfg), nil
}

// rootWorkers are the Temporal workers of root i's activities, on queues
// of their own: the root's queues (sessions started under it run there,
// their first activity makes the checkout there), the worker's own queue
// for its jobs, and the queue its checkouts are pinned to. The shared
// queue runs sessions started without a directory, in the first root.
// The queues sessions run on are versioned when the worker is a
// deployment version (deploymentFlags.sessionOptions); the others never.
func (m *Main) rootWorkers(s *started, i int, r servedRoot, q rootQueues, acts *activities.Activities) []worker.Worker {
	var workers []worker.Worker
	sessionQueues := r.queues(m.TaskQueue)
	if i == 0 {
		sessionQueues = append([]string{m.TaskQueue}, sessionQueues...)
	}
	for _, sq := range sessionQueues {
		sw := worker.New(s.client, sq, m.deployment.sessionOptions(s.wopts))
		sw.RegisterWorkflowWithOptions(s.sessions.AgentSession, m.deployment.registerOptions(workflows.WorkflowType))
		sw.RegisterActivity(acts)
		workers = append(workers, sw)
	}
	for _, qn := range []string{q.own, q.pinned} {
		qw := worker.New(s.client, qn, s.wopts)
		qw.RegisterActivity(acts)
		workers = append(workers, qw)
	}
	s.logger.Info("workspace root served", "workspace", r.ws.Root(), "default", i == 0,
		"root_task_queues", r.queues(m.TaskQueue), "own_task_queue", q.own, "checkouts_task_queue", q.pinned)
	return workers
}

// serve runs the workers until a signal: two are caught, the first
// drains (drain.go) and then, with a checkpoint remote, hands the
// checkouts over (handover.go), the second stops at once. Background jobs still
// running after the drain die with the worker (startJobs).
func (m *Main) serve(s *started, workers []worker.Worker) error {
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sig)
	var handover func(context.Context)
	if m.CheckpointRemote != "" {
		handover = func(ctx context.Context) { handOver(ctx, m.StateDir, m.CheckpointRemote, s.logger) }
	}
	return serve(workers, sig, m.drain.timeout, s.calls, s.jobs, handover, s.logger)
}
