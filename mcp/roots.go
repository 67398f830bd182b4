package mcp

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/longrun/longrun/tools"
)

// DefaultIdleTimeout is how long a checkout's stdio servers are kept
// without a call before they are stopped (the next call starts them
// again), as the language servers are.
const DefaultIdleTimeout = 10 * time.Minute

// root is the stdio servers of one session's checkout: each configured
// stdio server started again with the checkout as its working directory
// and sandbox root, so it sees the session's edits rather than the
// worker's workspace.
type root struct {
	servers map[string]*server
	// busy counts calls running; used is when the last one ended. The
	// idle reaper stops only a root with no call running.
	busy int
	used time.Time
}

// LookupIn is Lookup for a session with its own checkout at dir: a stdio
// server's tool runs in that checkout's own instance of the server,
// started on its first call. A server reached by URL has no working
// directory, so its tools are the worker-level ones; so are all tools
// when dir is "" (the session runs in place). The tool's spec is the
// worker-level listing's: a catalog does not depend on the directory.
func (m *Manager) LookupIn(name, dir string) (tools.Tool, bool) {
	t, ok := m.Lookup(name)
	if !ok || dir == "" {
		return t, ok
	}
	base := t.(*tool)
	if base.s.cfg.URL != "" {
		return t, true
	}
	return &rootTool{base: base, m: m, dir: filepath.Clean(dir)}, true
}

// CloseRoot stops the stdio servers started for dir and for every
// directory under it: the session that owned the checkout ended.
func (m *Manager) CloseRoot(dir string) {
	dir = filepath.Clean(dir)
	m.stopRoots(func(d string, _ *root) bool {
		return d == dir || strings.HasPrefix(d, dir+string(filepath.Separator))
	})
}

// RootsRunning are the checkouts that have servers started, sorted.
func (m *Manager) RootsRunning() []string {
	m.rootsMu.Lock()
	defer m.rootsMu.Unlock()
	out := make([]string, 0, len(m.roots))
	for d := range m.roots {
		out = append(out, d)
	}
	sort.Strings(out)
	return out
}

// acquire returns dir's root, made on first use with the session's
// network setting, counted busy until release; nil once the Manager is
// closed.
func (m *Manager) acquire(dir string, network bool) *root {
	m.rootsMu.Lock()
	defer m.rootsMu.Unlock()
	if m.rootsClosed {
		return nil
	}
	r := m.roots[dir]
	if r == nil {
		r = &root{servers: map[string]*server{}}
		for _, n := range m.names {
			b := m.servers[n]
			if b.cfg.URL == "" {
				r.servers[n] = &server{name: n, cfg: b.cfg, client: b.client, dir: dir, command: b.command,
					logger: b.logger.With("checkout", dir), network: &network}
			}
		}
		m.roots[dir] = r
		if m.reaping == nil && m.idle > 0 {
			m.reaping = make(chan struct{})
			m.reaped = make(chan struct{})
			go m.reapIdle(m.reaping, m.reaped)
		}
	}
	r.busy++
	return r
}

func (m *Manager) release(r *root) {
	m.rootsMu.Lock()
	r.busy--
	r.used = time.Now()
	m.rootsMu.Unlock()
}

// stopRoots stops the roots pick names, outside the lock: stopping a
// server waits for its process to exit.
func (m *Manager) stopRoots(pick func(string, *root) bool) {
	m.rootsMu.Lock()
	var stop []*server
	for d, r := range m.roots {
		if pick(d, r) {
			delete(m.roots, d)
			for _, s := range r.servers {
				stop = append(stop, s)
			}
		}
	}
	m.rootsMu.Unlock()
	var wg sync.WaitGroup
	for _, s := range stop {
		wg.Go(func() {
			if err := s.close(); err != nil {
				s.logger.Warn("MCP server of a checkout did not stop cleanly", "error", err)
			}
		})
	}
	wg.Wait()
}

// reapIdle stops the roots with no call for the idle timeout.
func (m *Manager) reapIdle(stop, done chan struct{}) {
	defer close(done)
	tick := time.NewTicker(max(min(m.idle/4, time.Minute), 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-tick.C:
			m.stopRoots(func(_ string, r *root) bool { return r.busy == 0 && now.Sub(r.used) > m.idle })
		}
	}
}

// closeRoots stops every checkout's servers and starts none after: the
// worker is shutting down.
func (m *Manager) closeRoots() {
	m.rootsMu.Lock()
	m.rootsClosed = true
	stop, done := m.reaping, m.reaped
	m.reaping = nil
	m.rootsMu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
	m.stopRoots(func(string, *root) bool { return true })
}

// rootTool is an MCP tool of a stdio server as a session with its own
// checkout calls it.
type rootTool struct {
	base *tool
	m    *Manager
	dir  string
}

// Spec is the worker-level instance's.
func (t *rootTool) Spec() tools.Spec { return t.base.Spec() }

// Run calls the tool on the checkout's instance of the server, starting
// it if this is the checkout's first call (or the server exited since).
func (t *rootTool) Run(ctx context.Context, env tools.Env, args json.RawMessage) (tools.Result, error) {
	r := t.m.acquire(t.dir, env.AllowNetwork)
	if r == nil {
		return tools.Errorf("MCP server %s: %v", t.base.s.name, errClosed), nil
	}
	defer t.m.release(r)
	return (&tool{s: r.servers[t.base.s.name], name: t.base.name}).Run(ctx, env, args)
}
