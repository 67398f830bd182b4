package lsp

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// Manager holds the worker's language servers: one per workspace root
// (a session's checkout, or its directory of the worker's workspace) and
// configured server, started on first use, stopped by CloseRoot when the
// session ends, after IdleTimeout without use, and all by Close.
type Manager struct {
	cfg Config

	mu      sync.Mutex
	clients map[key]*slot
	closed  bool
	stop    chan struct{}
	done    chan struct{}
	// starts is cancelled by Close: a server still starting then gives up.
	starts context.Context
	cancel context.CancelFunc
}

type key struct{ root, server string }

// slot is one server's place: the first caller starts it, the others
// wait for that start.
type slot struct {
	ready  chan struct{}
	client *Client
	err    error
}

// NewManager returns a manager of cfg's servers (cfg as WithDefaults
// completed it); it stops idle servers until Close.
func NewManager(cfg Config) *Manager {
	if err := cfg.normalize(); err != nil {
		// WithDefaults and LoadConfig checked it already; a Config made in
		// code gets its defaults here.
		cfg.wait, cfg.idle = DefaultDiagnosticsWait, DefaultIdleTimeout
	}
	m := &Manager{cfg: cfg, clients: map[key]*slot{}, stop: make(chan struct{}), done: make(chan struct{})}
	m.starts, m.cancel = context.WithCancel(context.Background())
	go m.reapIdle()
	return m
}

// Config is the manager's configuration.
func (m *Manager) Config() Config { return m.cfg }

// DiagnosticsWait is the cap on an edit's wait for diagnostics.
func (m *Manager) DiagnosticsWait() time.Duration { return m.cfg.wait }

// IdleTimeout is how long an unused server is kept.
func (m *Manager) IdleTimeout() time.Duration { return m.cfg.idle }

// Servers are the names of the servers that are on.
func (m *Manager) Servers() []string { return m.cfg.Names() }

// ServerFor names the server for file (absolute) under root, or "".
func (m *Manager) ServerFor(root, file string) string {
	rel, err := filepath.Rel(root, file)
	if err != nil || strings.HasPrefix(rel, "..") {
		return ""
	}
	return m.cfg.serverFor(filepath.ToSlash(rel))
}

// Client returns the running server named server for root, starting it
// if needed; a server that died is started again.
func (m *Manager) Client(ctx context.Context, root, server string) (*Client, error) {
	k := key{root, server}
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil, ErrStopped
	}
	s := m.clients[k]
	if s != nil {
		select {
		case <-s.ready:
			if s.err != nil || !s.client.Alive() {
				s = nil // start again: a failed start is not remembered
			}
		default:
		}
	}
	if s == nil {
		s = &slot{ready: make(chan struct{})}
		m.clients[k] = s
		go func() {
			// The start outlives the caller's context: another call may
			// wait for it, and a start cut short leaves nothing usable.
			sctx, cancel := context.WithTimeout(m.starts, time.Minute)
			defer cancel()
			s.client, s.err = Start(sctx, m.cfg.Launch, server, m.cfg.Servers[server], root)
			close(s.ready)
		}()
	}
	m.mu.Unlock()
	select {
	case <-s.ready:
		return s.client, s.err
	case <-ctx.Done():
		return nil, fmt.Errorf("start %s: %w", server, ctx.Err())
	}
}

// ForFile returns the server for file (absolute) under root, started.
func (m *Manager) ForFile(ctx context.Context, root, file string) (*Client, string, error) {
	name := m.ServerFor(root, file)
	if name == "" {
		return nil, "", fmt.Errorf("no language server is configured for %s (servers: %s)", filepath.Base(file), strings.Join(m.Servers(), ", "))
	}
	c, err := m.Client(ctx, root, name)
	return c, name, err
}

// Running are the servers started for root and still running.
func (m *Manager) Running(root string) []*Client {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Client
	for k, s := range m.clients {
		if k.root != root {
			continue
		}
		select {
		case <-s.ready:
			if s.err == nil && s.client.Alive() {
				out = append(out, s.client)
			}
		default:
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// CloseRoot stops the servers of root and of every directory under it:
// the session that owned them ended.
func (m *Manager) CloseRoot(root string) {
	m.stopWhere(func(k key, _ *Client) bool {
		return k.root == root || strings.HasPrefix(k.root, root+string(filepath.Separator))
	})
}

// stopWhere stops the servers for which pick says so; pick gets a nil
// client for a server still starting.
func (m *Manager) stopWhere(pick func(key, *Client) bool) {
	m.mu.Lock()
	var stop []*Client
	for k, s := range m.clients {
		select {
		case <-s.ready:
		default:
			if pick(k, nil) {
				// Still starting: stopped once started, never handed out.
				delete(m.clients, k)
				go func() {
					if <-s.ready; s.err == nil {
						s.client.Stop()
					}
				}()
			}
			continue
		}
		if s.err != nil || !s.client.Alive() {
			delete(m.clients, k)
			continue
		}
		if pick(k, s.client) {
			stop = append(stop, s.client)
			delete(m.clients, k)
		}
	}
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, c := range stop {
		wg.Add(1)
		go func() { defer wg.Done(); c.Stop() }()
	}
	wg.Wait()
}

// reapIdle stops the servers nobody used for IdleTimeout.
func (m *Manager) reapIdle() {
	defer close(m.done)
	every := min(m.cfg.idle/4, time.Minute)
	tick := time.NewTicker(max(every, 10*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case now := <-tick.C:
			m.stopWhere(func(_ key, c *Client) bool { return c != nil && now.Sub(c.idleSince()) > m.cfg.idle })
		}
	}
}

// Close stops every server; the manager starts none after it.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.mu.Unlock()
	close(m.stop)
	m.cancel()
	<-m.done
	// Servers still starting finish their start and are stopped too.
	for {
		m.mu.Lock()
		var wait []*slot
		for _, s := range m.clients {
			wait = append(wait, s)
		}
		m.mu.Unlock()
		if len(wait) == 0 {
			return
		}
		for _, s := range wait {
			<-s.ready
		}
		m.stopWhere(func(key, *Client) bool { return true })
	}
}
