// Package lsp talks the Language Server Protocol to real language servers
// (gopls, typescript-language-server, pyright, rust-analyzer): one server
// per workspace root and configured server, started on first use and
// stopped when the session ends or the server sits idle. The tools ask it
// for diagnostics after an edit, definitions, references, hover text,
// symbols and renames. Plain Go: no Temporal.
//
// The framing and JSON-RPC are github.com/sourcegraph/jsonrpc2 (its
// VSCodeObjectCodec is the protocol's Content-Length framing); the
// protocol's structures are the few in protocol.go.
package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"
)

// ErrStopped means the server exited or was stopped.
var ErrStopped = errors.New("language server stopped")

// Client is one running language server for one workspace root.
type Client struct {
	name string
	cfg  ServerConfig
	root string
	proc *Process
	conn *jsonrpc2.Conn
	// stderr keeps the server's last output, for the error that says why
	// it failed.
	stderr *tailBuffer
	exited chan struct{}

	// syncMu makes each Sync whole: two calls on one file must not both
	// open it.
	syncMu sync.Mutex
	mu     sync.Mutex
	docs   map[string]*document // by absolute path
	// diags are the server's last diagnostics per document URI; seq
	// counts publications, so a waiter knows one came after its change.
	diags   map[string]published
	seq     int64
	changed chan struct{} // closed and replaced on every publication
	lastUse time.Time
	// versioned is set once the server names the version its diagnostics
	// are about; sentAt (by URI) is when a change was sent and no wait
	// has returned since, slowest the longest the server took to publish
	// after one (an open is not counted: the first loads the project). A
	// server that does not version may stay silent about a file whose
	// diagnostics did not change (typescript-language-server), so its
	// silence counts as an answer after settleLocked.
	versioned bool
	sentAt    map[string]time.Time
	slowest   time.Duration
}

type document struct {
	version int
	text    string
}

type published struct {
	seq     int64
	version *int
	diags   []Diagnostic
}

// Start runs the server with root as its workspace, through launch, and
// initializes it.
func Start(ctx context.Context, launch Launch, name string, cfg ServerConfig, root string) (*Client, error) {
	if launch == nil {
		return nil, fmt.Errorf("start %s: %w", name, ErrNoLaunch)
	}
	proc, err := launch(LaunchSpec{Server: name, Argv: append([]string{cfg.Command}, cfg.Args...), Root: root, Env: ServerEnv(cfg)})
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	cmd := proc.Cmd
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	tail := &tailBuffer{max: 4 << 10}
	cmd.Stderr = tail
	if err := proc.start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, cfg.Command, err)
	}
	c := &Client{name: name, cfg: cfg, root: root, proc: proc, stderr: tail, exited: make(chan struct{}),
		docs: map[string]*document{}, diags: map[string]published{}, sentAt: map[string]time.Time{}, changed: make(chan struct{}), lastUse: time.Now()}
	go func() { _ = proc.wait(); close(c.exited) }()
	stream := jsonrpc2.NewBufferedStream(stdio{stdout, stdin}, jsonrpc2.VSCodeObjectCodec{})
	// Handled in the order they come (not AsyncHandler): two
	// publications for one file must not swap. The handler never waits on
	// the server, so the read loop is never stuck.
	c.conn = jsonrpc2.NewConn(context.Background(), stream, jsonrpc2.HandlerWithError(c.handle))
	if err := c.initialize(ctx); err != nil {
		c.kill()
		return nil, fmt.Errorf("initialize %s: %w%s", name, err, c.stderrNote())
	}
	return c, nil
}

// stdio joins the server's stdout and stdin into one stream.
type stdio struct {
	io.ReadCloser
	io.WriteCloser
}

func (s stdio) Close() error {
	return errors.Join(s.ReadCloser.Close(), s.WriteCloser.Close())
}

func (c *Client) initialize(ctx context.Context) error {
	uri := FileURI(c.root)
	params := map[string]any{
		// null, not ours: the server runs in the sandbox's pid namespace,
		// where the worker's pid names nothing or another process, and
		// servers built on vscode-languageserver (pyright) exit when the
		// process they were given is not alive.
		"processId": nil,
		"rootUri":   uri,
		"rootPath":  c.root,
		"workspaceFolders": []map[string]string{
			{"uri": uri, "name": filepath.Base(c.root)},
		},
		"clientInfo": map[string]string{"name": "longrun"},
		"capabilities": map[string]any{
			"textDocument": map[string]any{
				"synchronization":    map[string]any{"didSave": true},
				"publishDiagnostics": map[string]any{"versionSupport": true, "relatedInformation": false},
				"hover":              map[string]any{"contentFormat": []string{"markdown", "plaintext"}},
				"documentSymbol":     map[string]any{"hierarchicalDocumentSymbolSupport": true},
				"definition":         map[string]any{"linkSupport": false},
				"rename":             map[string]any{"prepareSupport": false},
			},
			"workspace": map[string]any{
				"workspaceFolders": true,
				"configuration":    true,
				"workspaceEdit":    map[string]any{"documentChanges": true},
				"symbol":           map[string]any{},
			},
			"window": map[string]any{"workDoneProgress": false},
		},
	}
	if len(c.cfg.InitializationOptions) > 0 {
		params["initializationOptions"] = c.cfg.InitializationOptions
	}
	var res json.RawMessage
	if err := c.call(ctx, "initialize", params, &res); err != nil {
		return err
	}
	return c.conn.Notify(ctx, "initialized", map[string]any{})
}

// handle answers what the server asks and records its diagnostics. A
// request the client does not serve gets a null answer, which servers
// take as "no" without failing.
func (c *Client) handle(_ context.Context, _ *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	switch req.Method {
	case "textDocument/publishDiagnostics":
		var p publishDiagnosticsParams
		if req.Params != nil && json.Unmarshal(*req.Params, &p) == nil {
			c.publish(p)
		}
		return nil, nil
	case "workspace/configuration":
		var p struct {
			Items []struct {
				Section string `json:"section"`
			} `json:"items"`
		}
		if req.Params != nil {
			_ = json.Unmarshal(*req.Params, &p)
		}
		out := make([]json.RawMessage, len(p.Items))
		for i, it := range p.Items {
			out[i] = settingsSection(c.cfg.Settings, it.Section)
		}
		return out, nil
	case "workspace/applyEdit":
		// Edits reach the workspace only through the tools' approval.
		return map[string]any{"applied": false, "failureReason": "longrun applies edits only through an approved patch"}, nil
	case "workspace/workspaceFolders":
		return []map[string]string{{"uri": FileURI(c.root), "name": filepath.Base(c.root)}}, nil
	}
	return nil, nil
}

func (c *Client) publish(p publishDiagnosticsParams) {
	if !insideURI(c.root, p.URI) {
		return // about a file that is not the session's (confine.go)
	}
	p.Diagnostics = confineDiagnostics(c.root, p.Diagnostics)
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.diags[p.URI]; ok && old.version != nil && p.Version != nil && *p.Version < *old.version {
		return // about a version older than the one already reported
	}
	if p.Version != nil {
		c.versioned = true
	}
	if at, ok := c.sentAt[p.URI]; ok {
		c.slowest = max(c.slowest, time.Since(at))
		delete(c.sentAt, p.URI)
	}
	c.seq++
	c.diags[p.URI] = published{seq: c.seq, version: p.Version, diags: p.Diagnostics}
	close(c.changed)
	c.changed = make(chan struct{})
}

// call sends a request; it fails with the server's last words when the
// server is gone.
func (c *Client) call(ctx context.Context, method string, params, result any) error {
	c.touch()
	err := c.conn.Call(ctx, method, params, result)
	if err == nil {
		return nil
	}
	select {
	case <-c.exited:
		return fmt.Errorf("%s: %w%s", method, ErrStopped, c.stderrNote())
	default:
	}
	var rpcErr *jsonrpc2.Error
	if errors.As(err, &rpcErr) {
		return fmt.Errorf("%s: %s", method, rpcErr.Message)
	}
	return fmt.Errorf("%s: %w", method, err)
}

func (c *Client) touch() {
	c.mu.Lock()
	c.lastUse = time.Now()
	c.mu.Unlock()
}

func (c *Client) idleSince() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastUse
}

// Alive reports whether the server process still runs.
func (c *Client) Alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// Stop asks the server to shut down and kills it (and its process group)
// if it has not exited within two seconds.
func (c *Client) Stop() {
	if c.Alive() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		if c.conn.Call(ctx, "shutdown", nil, nil) == nil {
			_ = c.conn.Notify(ctx, "exit", nil)
		}
		cancel()
		select {
		case <-c.exited:
		case <-time.After(2 * time.Second):
		}
	}
	c.kill()
}

// kill ends the server and its process group at once.
func (c *Client) kill() {
	if c.Alive() {
		switch {
		case c.proc.Kill != nil:
			c.proc.Kill()
		case c.proc.Cmd.Process != nil:
			// Its own process group (the launcher's Setpgid): stopping
			// it stops what it started (gopls runs `go list`).
			_ = syscall.Kill(-c.proc.Cmd.Process.Pid, syscall.SIGKILL)
		}
		<-c.exited
	}
	_ = c.conn.Close()
}

func (c *Client) stderrNote() string {
	s := strings.TrimSpace(c.stderr.String())
	if s == "" {
		return ""
	}
	return "; the server said: " + s
}

// Sync makes the server see file (absolute) as it is on disk: opened on
// first use, changed and saved when its content differs from what the
// server has. It returns the version the server now has, and whether it
// changed. A file that no longer exists is closed.
func (c *Client) Sync(ctx context.Context, file string) (int, bool, error) {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	raw, err := os.ReadFile(file)
	uri := FileURI(file)
	c.mu.Lock()
	d := c.docs[file]
	c.mu.Unlock()
	if err != nil {
		if errors.Is(err, os.ErrNotExist) && d != nil {
			c.mu.Lock()
			delete(c.docs, file)
			delete(c.diags, uri) // a file opened again starts at version 1
			c.mu.Unlock()
			if err := c.conn.Notify(ctx, "textDocument/didClose", map[string]any{"textDocument": textDocumentIdentifier{URI: uri}}); err != nil {
				return 0, true, err
			}
			return 0, true, c.watched(ctx, uri, fileDeleted)
		}
		return 0, false, fmt.Errorf("read file %s: %w", file, err)
	}
	text := string(raw)
	c.touch()
	switch {
	case d == nil:
		c.mu.Lock()
		c.docs[file] = &document{version: 1, text: text}
		c.mu.Unlock()
		// The server may have read the file from disk before it changed
		// (pyright: when it checked a file importing it), and opening it
		// does not make the server check those importers again; a
		// watched-file event does.
		if err := c.watched(ctx, uri, fileChanged); err != nil {
			return 1, true, err
		}
		err := c.conn.Notify(ctx, "textDocument/didOpen", map[string]any{
			"textDocument": textDocumentItem{URI: uri, LanguageID: languageID(c.cfg, file), Version: 1, Text: text}})
		return 1, true, err
	case d.text == text:
		return d.version, false, nil
	}
	c.mu.Lock()
	d.version++
	d.text = text
	v := d.version
	c.sentAt[uri] = time.Now()
	c.mu.Unlock()
	if err := c.conn.Notify(ctx, "textDocument/didChange", map[string]any{
		"textDocument":   versionedTextDocumentIdentifier{URI: uri, Version: v},
		"contentChanges": []map[string]string{{"text": text}},
	}); err != nil {
		return v, true, err
	}
	return v, true, c.conn.Notify(ctx, "textDocument/didSave", map[string]any{"textDocument": textDocumentIdentifier{URI: uri}, "text": text})
}

// FileChangeType values of workspace/didChangeWatchedFiles.
const (
	fileChanged = 2
	fileDeleted = 3
)

// watched tells the server that the file at uri changed on disk. The
// client does not watch the workspace; it says so for the files it
// learns of (an edit's), which is what servers that read files they have
// not opened (pyright, gopls) need to check the files depending on them.
func (c *Client) watched(ctx context.Context, uri string, kind int) error {
	return c.conn.Notify(ctx, "workspace/didChangeWatchedFiles", map[string]any{
		"changes": []map[string]any{{"uri": uri, "type": kind}}})
}

// SyncOpen re-syncs every document the server holds open with the disk,
// so a file a command changed is not answered from an old picture.
func (c *Client) SyncOpen(ctx context.Context) error {
	c.mu.Lock()
	files := make([]string, 0, len(c.docs))
	for f := range c.docs {
		files = append(files, f)
	}
	c.mu.Unlock()
	var errs []error
	for _, f := range files {
		if _, _, err := c.Sync(ctx, f); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// seqNow is the publication count, taken before a change so a waiter can
// tell the publications that came after it.
func (c *Client) seqNow() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// WaitDiagnostics waits until the server has published diagnostics for
// every file in want (absolute path -> the version sent) after
// publication number since, then for a short quiet spell in which later
// publications (a second analysis pass) are taken too, all within
// deadline. It returns the diagnostics per file and the files the server
// did not answer for in time.
func (c *Client) WaitDiagnostics(ctx context.Context, want map[string]int, since int64, deadline time.Time) (map[string][]Diagnostic, []string) {
	return c.waitDiagnostics(ctx, want, since, deadline, Quiet)
}

// Quiet is how long a wait for diagnostics goes on once every file has
// some, for a server that publishes in passes (gopls: type errors, then
// its analyzers).
const Quiet = 150 * time.Millisecond

// FirstDiagnostics is WaitDiagnostics without the quiet spell: it returns
// as soon as every file has diagnostics for its version (benchmarks).
func (c *Client) FirstDiagnostics(ctx context.Context, want map[string]int, since int64, deadline time.Time) (map[string][]Diagnostic, []string) {
	return c.waitDiagnostics(ctx, want, since, deadline, 0)
}

// SeqNow is the publication count, to give FirstDiagnostics as since.
func (c *Client) SeqNow() int64 { return c.seqNow() }

// Settle is the least time a wait gives a server that does not version
// its diagnostics before its silence about a file it reported on before
// is taken to mean "unchanged"; twice the longest it took to publish
// after a change, when that is longer.
const Settle = time.Second

// settleLocked is how long a wait gives the server before its silence
// answers; 0: never (its publications are versioned, so every change
// gets one).
func (c *Client) settleLocked() time.Duration {
	if c.versioned {
		return 0
	}
	return max(Settle, 2*c.slowest)
}

func (c *Client) waitDiagnostics(ctx context.Context, want map[string]int, since int64, deadline time.Time, quiet time.Duration) (map[string][]Diagnostic, []string) {
	defer func() {
		// A publication after the wait is not the answer to its change.
		c.mu.Lock()
		for f := range want {
			delete(c.sentAt, FileURI(f))
		}
		c.mu.Unlock()
	}()
	arrivedAt := time.Time{}
	start := time.Now()
	for {
		c.mu.Lock()
		settle := c.settleLocked()
		now := time.Now()
		silent := settle > 0 && now.Sub(start) >= settle
		missing := c.missingLocked(want, since, silent)
		ch := c.changed
		c.mu.Unlock()
		if len(missing) == 0 && arrivedAt.IsZero() {
			arrivedAt = now
		}
		stop := deadline
		if !arrivedAt.IsZero() && arrivedAt.Add(quiet).Before(stop) {
			stop = arrivedAt.Add(quiet)
		}
		if len(missing) > 0 && settle > 0 && !silent && start.Add(settle).Before(stop) {
			stop = start.Add(settle)
		}
		if !now.Before(stop) {
			return c.diagnosticsOf(want), missing
		}
		timer := time.NewTimer(stop.Sub(now))
		select {
		case <-ch:
		case <-timer.C:
		case <-c.exited:
		case <-ctx.Done():
		}
		timer.Stop()
		if !c.Alive() || ctx.Err() != nil {
			c.mu.Lock()
			missing = c.missingLocked(want, since, false)
			c.mu.Unlock()
			return c.diagnosticsOf(want), missing
		}
	}
}

// missingLocked are the files in want the server has not published for
// since; with silent, a file it published for before and has been
// silent about since counts as published (unchanged).
func (c *Client) missingLocked(want map[string]int, since int64, silent bool) []string {
	var missing []string
	for f, v := range want {
		p, ok := c.diags[FileURI(f)]
		if !ok || p.seq <= since || (p.version != nil && *p.version < v) {
			if silent && ok && p.version == nil {
				continue
			}
			missing = append(missing, f)
		}
	}
	return missing
}

// diagnosticsOf are the last diagnostics of each file in want.
func (c *Client) diagnosticsOf(want map[string]int) map[string][]Diagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]Diagnostic{}
	for f := range want {
		if p, ok := c.diags[FileURI(f)]; ok {
			out[f] = p.diags
		}
	}
	return out
}

// AllDiagnostics are the last diagnostics the server published, by file.
func (c *Client) AllDiagnostics() map[string][]Diagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]Diagnostic{}
	for uri, p := range c.diags {
		if f, ok := URIPath(uri); ok && len(p.diags) > 0 {
			out[f] = p.diags
		}
	}
	return out
}

// Request sends method with params and decodes the answer into result.
func (c *Client) Request(ctx context.Context, method string, params, result any) error {
	return c.call(ctx, method, params, result)
}

// FileURI is the file: URI of an absolute path.
func FileURI(p string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(p)}).String()
}

// URIPath is the path of a file: URI.
func URIPath(uri string) (string, bool) {
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return "", false
	}
	return filepath.FromSlash(u.Path), true
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if over := t.buf.Len() - t.max; over > 0 {
		t.buf.Next(over)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// Diagnose returns the diagnostics of file (already synced) for the
// version the server holds, waiting until deadline for the server to
// publish them; missing reports that it did not.
func (c *Client) Diagnose(ctx context.Context, file string, deadline time.Time) ([]Diagnostic, bool) {
	c.mu.Lock()
	v := 0
	if d := c.docs[file]; d != nil {
		v = d.version
	}
	c.mu.Unlock()
	diags, missing := c.WaitDiagnostics(ctx, map[string]int{file: v}, 0, deadline)
	return diags[file], len(missing) > 0
}

// ErrorsSince are the errors the server published after publication
// number since for files other than those in skip: what an edit broke
// elsewhere (a caller in another file).
func (c *Client) ErrorsSince(since int64, skip map[string]int) map[string][]Diagnostic {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]Diagnostic{}
	for uri, p := range c.diags {
		f, ok := URIPath(uri)
		if !ok || p.seq <= since {
			continue
		}
		if _, own := skip[f]; own {
			continue
		}
		for _, d := range p.diags {
			if d.Severity == SeverityError || d.Severity == 0 {
				out[f] = append(out[f], d)
			}
		}
	}
	return out
}

// settingsSection answers a workspace/configuration item for section
// ("python.analysis") from a server's settings. Settings keyed by the
// section's first name ({"python": {"analysis": {...}}}, as VS Code
// keeps them) answer with the value at the section's path, null where
// there is none; settings that are not (gopls's {"staticcheck": true},
// asked for as "gopls") are the server's own section and answer whole.
func settingsSection(settings json.RawMessage, section string) json.RawMessage {
	if len(settings) == 0 {
		return json.RawMessage("null")
	}
	if section == "" {
		return settings
	}
	names := strings.Split(section, ".")
	var top map[string]json.RawMessage
	if json.Unmarshal(settings, &top) != nil {
		return settings
	}
	cur, keyed := top[names[0]]
	if !keyed {
		return settings
	}
	for _, n := range names[1:] {
		var obj map[string]json.RawMessage
		if json.Unmarshal(cur, &obj) != nil {
			return json.RawMessage("null")
		}
		v, ok := obj[n]
		if !ok {
			return json.RawMessage("null")
		}
		cur = v
	}
	return cur
}
