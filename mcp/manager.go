package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/longrun/longrun/tools"
)

// DefaultDeferAbove is the catalog size past which the tools of a server
// with no exposure setting are deferred: a model sent more specs than this
// every turn pays for them in tokens and chooses worse.
const DefaultDeferAbove = 25

// Options are what a Manager needs from its worker.
type Options struct {
	// Logger receives connection failures and restarts; nil discards.
	Logger *slog.Logger
	// Dir is the working directory of stdio servers: the workspace root,
	// so a server configured with relative paths finds them.
	Dir string
	// DeferAbove overrides DefaultDeferAbove when positive.
	DeferAbove int
	// Command builds the process of a stdio server (see Launch). The
	// worker sets it to run servers in its sandbox where one works; nil
	// runs them as plain child processes (ExecCommand). The process must
	// not be tied to a context: it outlives the call that starts it.
	Command func(Launch) (*Process, error)
	// IdleTimeout overrides DefaultIdleTimeout for the servers started
	// in sessions' checkouts (LookupIn) when positive.
	IdleTimeout time.Duration
}

// Launch is a stdio server to start: what Options.Command gets.
type Launch struct {
	// Server is the server's name in mcp.json, for messages.
	Server string
	// Argv is its command and arguments, as configured.
	Argv []string
	// Dir is the working directory and the root the server may see:
	// Options.Dir, the workspace root, or a session's checkout (LookupIn).
	Dir string
	// Env is its environment, already reduced to the allowlist (see
	// serverEnv).
	Env []string
	// NoSandbox is the server's "sandbox": false: a person's
	// configuration asks for it to run unsandboxed.
	NoSandbox bool
	// Network is the session's network setting for the instance of a
	// session's checkout (LookupIn): the server gets the network only if
	// the session does. Nil for the worker-level instance, which serves
	// every session in place: the worker decides.
	Network *bool
}

// Process is a stdio server's process as Options.Command built it. The
// Manager connects Cmd's stdin, stdout and stderr, then calls Start once;
// after a successful Start it calls Wait exactly once, when the
// connection ends (the server exited, or Close stopped it).
type Process struct {
	Cmd *exec.Cmd
	// Start starts Cmd; nil is Cmd.Start. A sandbox sets it to attach the
	// server's network before the server runs.
	Start func() error
	// Wait waits for Cmd and then releases whatever Start set up (the
	// sandbox's network helper); nil is Cmd.Wait.
	Wait func() error
}

func (p *Process) start() error {
	if p.Start != nil {
		return p.Start()
	}
	return p.Cmd.Start()
}

func (p *Process) wait() error {
	if p.Wait != nil {
		return p.Wait()
	}
	return p.Cmd.Wait()
}

// ExecCommand is the default Options.Command: the server as a plain
// child process of the worker, unsandboxed.
func ExecCommand(l Launch) (*Process, error) {
	cmd := exec.Command(l.Argv[0], l.Argv[1:]...)
	cmd.Dir = l.Dir
	cmd.Env = l.Env
	return &Process{Cmd: cmd}, nil
}

// Manager holds one worker's MCP servers. It is safe for concurrent use:
// the worker runs many tool activities at once.
type Manager struct {
	servers    map[string]*server
	names      []string
	deferAbove int
	logger     *slog.Logger

	// The stdio servers of sessions' checkouts (roots.go), by checkout.
	idle        time.Duration
	rootsMu     sync.Mutex
	roots       map[string]*root
	rootsClosed bool
	// reaping stops the idle reaper, started with the first root; reaped
	// is closed when it has returned.
	reaping, reaped chan struct{}
}

// New returns a Manager for cfg. Nothing is started until the catalog is
// listed or a tool is called.
func New(cfg Config, opts Options) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "longrun", Version: "v1"},
		// No roots, sampling or elicitation: the worker has nobody to ask.
		&sdk.ClientOptions{Capabilities: &sdk.ClientCapabilities{}})
	m := &Manager{servers: map[string]*server{}, names: cfg.names(), deferAbove: DefaultDeferAbove, logger: logger,
		idle: DefaultIdleTimeout, roots: map[string]*root{}}
	if opts.IdleTimeout > 0 {
		m.idle = opts.IdleTimeout
	}
	if opts.DeferAbove > 0 {
		m.deferAbove = opts.DeferAbove
	}
	command := opts.Command
	if command == nil {
		command = ExecCommand
	}
	for _, name := range m.names {
		m.servers[name] = &server{name: name, cfg: cfg.Servers[name], client: client, dir: opts.Dir,
			command: command, logger: logger.With("mcp_server", name)}
	}
	return m, nil
}

// Servers describes each configured server in one line, for the worker's
// start-up log.
func (m *Manager) Servers() []string {
	out := make([]string, 0, len(m.names))
	for _, n := range m.names {
		s := m.servers[n].cfg
		if s.URL != "" {
			out = append(out, fmt.Sprintf("%s (url %s)", n, s.URL))
		} else {
			out = append(out, fmt.Sprintf("%s (command %s)", n, strings.Join(append([]string{s.Command}, s.Args...), " ")))
		}
	}
	return out
}

// Specs lists every server's tools, sorted by name. alongside is the number
// of other tools in the catalog: when the whole catalog exceeds DeferAbove,
// the tools of servers with no exposure setting are deferred. A server that
// cannot be reached or listed is logged and left out; the catalog is never
// failed for one server.
func (m *Manager) Specs(ctx context.Context, alongside int) []tools.Spec {
	lists := make([][]tools.Spec, len(m.names))
	var wg sync.WaitGroup
	for i, n := range m.names {
		s := m.servers[n]
		wg.Go(func() {
			lctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
			defer cancel()
			specs, err := s.list(lctx)
			if err != nil {
				s.logger.Warn("MCP server unavailable: its tools are left out of the catalog", "error", err)
				return
			}
			lists[i] = specs
		})
	}
	wg.Wait()
	var all []tools.Spec
	for _, l := range lists {
		all = append(all, l...)
	}
	large := alongside+len(all) > m.deferAbove
	for i := range all {
		switch e := m.servers[all[i].Server].cfg.Exposure; {
		case e != "":
			all[i].Exposure = e
		case large:
			all[i].Exposure = tools.ExposureDeferred
		default:
			all[i].Exposure = tools.ExposureDirect
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all
}

// Lookup returns the tool a call names, when the name is one of a
// configured server's (server__tool). It does no I/O: whether the server
// has the tool is found out when it runs, so a worker that never listed
// the catalog (another worker of the queue did) still serves the call.
func (m *Manager) Lookup(name string) (tools.Tool, bool) {
	sn, ok := SplitName(name)
	if !ok {
		return nil, false
	}
	s, ok := m.servers[sn]
	if !ok {
		return nil, false
	}
	return &tool{s: s, name: name}, true
}

// Close ends every connection and stops the stdio servers, the
// checkouts' too (LookupIn); later calls fail with a result saying the
// worker is shutting down.
func (m *Manager) Close() error {
	m.closeRoots()
	var errs []error
	for _, n := range m.names {
		errs = append(errs, m.servers[n].close())
	}
	return errors.Join(errs...)
}

// server is one configured MCP server and its current connection.
type server struct {
	name    string
	cfg     ServerConfig
	client  *sdk.Client
	dir     string
	command func(Launch) (*Process, error)
	logger  *slog.Logger
	// network is the session's network setting of a checkout's instance
	// (Launch.Network); nil for the worker-level one.
	network *bool

	mu      sync.Mutex
	session *sdk.ClientSession
	closed  bool
	// tools maps exposed names to the server's own, from the last listing.
	tools map[string]entry
}

type entry struct {
	mcpName string
	spec    tools.Spec
}

// errClosed is the error of a call after Close.
var errClosed = errors.New("the worker is shutting down")

// connect returns the live session, starting one if there is none: the
// first use, or after the server crashed or the connection broke.
func (s *server) connect(ctx context.Context) (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.session != nil {
		return s.session, nil
	}
	var t sdk.Transport
	if s.cfg.URL != "" {
		// The URL is used as written: ${VAR} expands only in env, so a
		// url cannot carry one of the worker's secrets to its host.
		t = &sdk.StreamableClientTransport{Endpoint: s.cfg.URL,
			// Only replies to our own requests matter; no standing stream.
			DisableStandaloneSSE: true}
	} else {
		// Not bound to ctx: the process must outlive the call that
		// started it.
		p, err := s.command(Launch{
			Server: s.name, Argv: append([]string{s.cfg.Command}, s.cfg.Args...), Dir: s.dir,
			Env: serverEnv(os.Environ(), s.cfg.Env), NoSandbox: s.cfg.Sandbox != nil && !*s.cfg.Sandbox, Network: s.network,
		})
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", s.cfg.Command, err)
		}
		p.Cmd.Stderr = &logWriter{logger: s.logger}
		t = &processTransport{p: p, terminate: 2 * time.Second}
	}
	cs, err := s.client.Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	s.session = cs
	s.logger.Info("MCP server connected")
	go func() {
		// A stdio server that exits ends its session; forget it so the
		// next call starts the server again.
		err := cs.Wait()
		s.forget(cs, err)
	}()
	return cs, nil
}

// forget drops cs if it is still the current session.
func (s *server) forget(cs *sdk.ClientSession, why error) {
	s.mu.Lock()
	current := s.session == cs
	if current {
		s.session = nil
	}
	closed := s.closed
	s.mu.Unlock()
	if current && !closed {
		s.logger.Warn("MCP server connection ended; it is restarted on the next call", "error", why)
		_ = cs.Close()
	}
}

func (s *server) close() error {
	s.mu.Lock()
	s.closed = true
	cs := s.session
	s.session = nil
	s.mu.Unlock()
	if cs == nil {
		return nil
	}
	if err := cs.Close(); err != nil {
		return fmt.Errorf("close MCP server %s: %w", s.name, err)
	}
	return nil
}

// list asks the server for its tools and remembers how exposed names map
// back to the server's.
func (s *server) list(ctx context.Context) ([]tools.Spec, error) {
	cs, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	var listed []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			s.broken(cs, err)
			return nil, fmt.Errorf("list tools: %w", err)
		}
		listed = append(listed, t)
	}
	sort.Slice(listed, func(i, j int) bool { return listed[i].Name < listed[j].Name })
	omit := map[string]bool{}
	for _, n := range s.cfg.Omit {
		omit[n] = true
	}
	timeout := int(math.Ceil(s.cfg.timeout().Seconds()))
	byName := map[string]entry{}
	taken := map[string]bool{}
	specs := make([]tools.Spec, 0, len(listed))
	for _, t := range listed {
		if omit[t.Name] {
			continue
		}
		name := ExposedName(s.name, t.Name, taken)
		taken[name] = true
		params, replaced := parameters(name, t.InputSchema)
		if replaced {
			s.logger.Warn("MCP tool's input schema cannot be used; any arguments object is sent to the server", "tool", t.Name)
		}
		desc := t.Description
		if desc == "" {
			desc = or(t.Title, t.Name)
		}
		spec := tools.Spec{
			Name:        name,
			Description: desc,
			Parameters:  params,
			// A tool is read-only only when its server says so: anything
			// else might change the world and needs approval.
			ReadOnly:       t.Annotations != nil && t.Annotations.ReadOnlyHint,
			TimeoutSeconds: timeout,
			Server:         s.name,
			// What the session knows of a call of it: the permission rules
			// match its "path" argument, if it has one; its paths, label
			// and concurrency are unknown, and it never runs locally.
			Meta:       tools.MetaVersion,
			SubjectArg: "path",
		}
		byName[name] = entry{mcpName: t.Name, spec: spec}
		specs = append(specs, spec)
	}
	s.mu.Lock()
	s.tools = byName
	s.mu.Unlock()
	return specs, nil
}

// broken drops a session whose transport failed (as opposed to the server
// answering with an error), so the next use reconnects.
func (s *server) broken(cs *sdk.ClientSession, err error) {
	var rpcErr *jsonrpc.Error
	if errors.As(err, &rpcErr) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return
	}
	s.forget(cs, err)
}

// resolve finds the server's name for an exposed one, listing the server
// if this worker has not yet (or the tool is new since).
func (s *server) resolve(ctx context.Context, name string) (entry, bool, error) {
	s.mu.Lock()
	e, ok := s.tools[name]
	s.mu.Unlock()
	if ok {
		return e, true, nil
	}
	if _, err := s.list(ctx); err != nil {
		return entry{}, false, err
	}
	s.mu.Lock()
	e, ok = s.tools[name]
	s.mu.Unlock()
	return e, ok, nil
}

// tool is one MCP tool as the worker's tools.Tool.
type tool struct {
	s    *server
	name string
}

// Spec is the spec from the last listing, or just the name and server
// before the server has been listed on this worker.
func (t *tool) Spec() tools.Spec {
	t.s.mu.Lock()
	defer t.s.mu.Unlock()
	if e, ok := t.s.tools[t.name]; ok {
		return e.spec
	}
	return tools.Spec{Name: t.name, Server: t.s.name}
}

// Run calls the tool within the server's timeout. Every failure of the
// server is a result naming it, so the model can carry on without it; only
// the caller's own cancellation is left to the caller (the activity
// reports it).
func (t *tool) Run(ctx context.Context, env tools.Env, args json.RawMessage) (tools.Result, error) {
	s := t.s
	timeout := s.cfg.timeout()
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if env.Heartbeat != nil {
		env.Heartbeat("waiting for MCP server " + s.name)
	}
	fail := func(what string, err error) tools.Result {
		switch {
		case ctx.Err() != nil:
			return tools.Errorf("MCP server %s: call cancelled", s.name)
		case errors.Is(err, context.DeadlineExceeded):
			return tools.Errorf("MCP server %s: %s did not answer within %s", s.name, t.name, timeout)
		}
		return tools.Errorf("MCP server %s %s: %v", s.name, what, err)
	}
	e, ok, err := s.resolve(cctx, t.name)
	if err != nil {
		return fail("is unavailable", err), nil
	}
	if !ok {
		return tools.Errorf("MCP server %s has no tool %s (omitted by the workspace, or removed since the catalog was listed)", s.name, t.name), nil
	}
	cs, err := s.connect(cctx)
	if err != nil {
		return fail("is unavailable", err), nil
	}
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	res, err := cs.CallTool(cctx, &sdk.CallToolParams{Name: e.mcpName, Arguments: args})
	if err != nil {
		s.broken(cs, err)
		return fail("failed to run "+e.mcpName, err), nil
	}
	return toResult(s.name, res), nil
}

// logWriter passes a stdio server's stderr to the worker's log, so its
// complaints (a missing token, a crash) are where the operator looks.
type logWriter struct{ logger *slog.Logger }

func (w *logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			w.logger.Info("MCP server stderr", "line", line)
		}
	}
	return len(p), nil
}

// serverEnv is a stdio server's environment: from the worker's (environ)
// only what every program needs (PATH, HOME, LANG, LC_*, TERM, TZ), then
// the server's own env entries, where ${VAR} is expanded from the worker's
// environment so the file can name a secret without holding it. Nothing
// else of the worker's (its model key, cloud credentials) reaches a
// server unless its configuration names it.
func serverEnv(environ []string, set map[string]string) []string {
	lookup := map[string]string{}
	var env []string
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		lookup[name] = value
		if _, own := set[name]; !own && passedToServers(name) {
			env = append(env, kv)
		}
	}
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		env = append(env, k+"="+os.Expand(set[k], func(v string) string { return lookup[v] }))
	}
	return env
}

// passedToServers reports whether a variable of the worker's environment
// is one every stdio server gets.
func passedToServers(name string) bool {
	switch name {
	case "PATH", "HOME", "LANG", "TERM", "TZ":
		return true
	}
	return strings.HasPrefix(name, "LC_")
}
