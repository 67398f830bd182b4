package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/tools"
)

// SetupRequest and SetupResult are SetupCheckout's input and output: see
// package contract.
type (
	SetupRequest = contract.SetupRequest
	SetupResult  = contract.SetupResult
)

// DefaultSetupTimeout bounds a setup command that names no bound of its
// own (longrun-worker --setup-timeout).
const DefaultSetupTimeout = 20 * time.Minute

// SetupConfig is the worker's setup commands (longrun-worker --setup):
// what runs in a new checkout of a repository before the session's first
// model call, and the sandbox it runs in.
type SetupConfig struct {
	// Commands maps a repository's top directory (absolute) to its
	// command; the key "" is the command of every other repository.
	Commands map[string]string
	// Sandbox is the sandbox the command runs in: the shell's, with the
	// network on (tools.SandboxCommand), so it gets the command
	// environment and none of the worker's credentials.
	Sandbox tools.Config
	// Timeout bounds one run; 0 is DefaultSetupTimeout.
	Timeout time.Duration
	// Keep is how long a layer no session used stays: a new layer prunes
	// the others older than it that no checkout is linked to
	// (PruneSetupLayers); 0 keeps them all.
	Keep time.Duration
}

// DefaultSetupKeep is how long an unused setup layer stays
// (longrun-worker --setup-keep): a layer is a whole module cache, one per
// lockfile hash, so a busy repository leaves one per dependency change.
const DefaultSetupKeep = 30 * 24 * time.Hour

// layersMu orders a layer's reuse (its record touched, the checkout
// linked) against a prune of the layers, so a layer is never removed
// between a session choosing it and linking to it.
var layersMu sync.Mutex

// For is the setup command of the repository at repo, "" for none.
func (c *SetupConfig) For(repo string) string {
	if c == nil {
		return ""
	}
	if cmd, ok := c.Commands[filepath.Clean(repo)]; ok && repo != "" {
		return cmd
	}
	return c.Commands[""]
}

// Repos lists the repositories with a command of their own, sorted, for
// the worker's log.
func (c *SetupConfig) Repos() []string {
	var out []string
	for r := range c.Commands {
		if r != "" {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// setupRecord is what a layer keeps of the run that made it, beside its
// caches (setup.json): what a later session's result shows.
type setupRecord struct {
	Command string    `json:"command"`
	Session string    `json:"session"`
	At      time.Time `json:"at"`
	Millis  int64     `json:"millis"`
	Output  string    `json:"output"`
	// Changed is what the run changed in the checkout besides the layer
	// (git status entries, the first few): a later session of the key
	// runs the command again, since only the layer is reused.
	Changed []string `json:"changed,omitempty"`
}

const setupRecordFile = "setup.json"

// setupDue is the setup command a new checkout of repo gets on this
// worker: none for a copy of a directory outside git (no lockfiles to
// key a layer by) or without a state directory.
func (a *Activities) setupDue(in checkout.Info) string {
	if in.Copy || a.cfg.StateDir == "" {
		return ""
	}
	return a.cfg.Setup.For(in.Repo)
}

// SetupCheckout runs the repository's setup command in the session's new
// checkout, in the sandbox with the network on, before the first model
// call, and links the checkout to the layer it filled (its module cache,
// tools.SetupModCache): every later command of the session sees that
// layer read-only. The layer is keyed by the command and the base's
// lockfiles (checkout.LockfileKey): when a session of the same key made
// it already, the command does not run again and the result says whose
// run is reused, unless that run also changed the checkout (npm ci's
// node_modules: what a layer does not hold), which git status before and
// after tells; then it runs again (Again says why), the layer kept as it
// is. A command that fails, or cannot run, is a result with
// Error, not a failed activity: the session goes on and its model is
// told (the checkout is there, the task may not even need what setup
// fetches, and a person can read why in the history).
func (a *Activities) SetupCheckout(ctx context.Context, req SetupRequest) (SetupResult, error) {
	defer heartbeatEvery(ctx, ctx, HeartbeatEvery)()
	start := time.Now()
	command := a.setupDue(req.Checkout)
	res := SetupResult{Command: command, ExitCode: -1}
	if command == "" {
		res.Error = "this worker has no setup command for " + req.Checkout.Repo
		return res, nil
	}
	dir, err := a.ownCheckout(req.Checkout.Name)
	if err != nil {
		return res, temporal.NewNonRetryableApplicationError(err.Error(), "BadCheckout", nil)
	}
	if res.Key, err = checkout.LockfileKey(ctx, dir, req.Checkout.Base, command); err != nil {
		return res, err
	}
	layer := tools.SetupLayerDir(a.cfg.StateDir, res.Key)
	layersMu.Lock()
	rec, made := readSetupRecord(layer)
	var linkErr error
	if made {
		// Marked used and linked under the lock: no prune removes a
		// layer a session has chosen.
		touchLayer(layer)
		linkErr = a.linkSetup(req.Checkout.Name, res.Key)
	}
	layersMu.Unlock()
	if linkErr != nil {
		return res, linkErr
	}
	if made {
		res.FirstMillis, res.MadeBy = rec.Millis, rec.Session
		if len(rec.Changed) == 0 {
			res.Cached, res.ExitCode, res.Output = true, 0, rec.Output
			res.Millis = time.Since(start).Milliseconds()
			return res, nil
		}
		res.Again = fmt.Sprintf("the run that made its layer (session %s) also changed the checkout (%s), which the layer does not hold: run again",
			rec.Session, strings.Join(rec.Changed, ", "))
	}
	staging, err := newStaging(layer, a.setupTimeout())
	if err != nil {
		return res, err
	}
	var before string
	var beforeErr error
	if !made {
		// Only the run that makes a layer records what it changed.
		before, beforeErr = checkoutStatus(ctx, dir)
	}
	out, code, runErr := a.runSetup(ctx, dir, req.Checkout.Sub, command, filepath.Join(staging, tools.SetupModCache))
	res.Millis, res.Output, res.ExitCode = time.Since(start).Milliseconds(), out, code
	switch {
	case runErr != nil:
		res.Error = runErr.Error()
	case code != 0:
		res.Error = fmt.Sprintf("the setup command exited with status %d", code)
	}
	if res.Error != "" {
		_ = removeLayer(staging)
		if activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("the repository's setup failed", "command", command, "error", res.Error)
		}
		return res, nil
	}
	if made {
		// The layer of the first run stays: it is what every session
		// of the key is linked to, and it is never written again.
		return res, removeLayer(staging)
	}
	after, afterErr := checkoutStatus(ctx, dir)
	changed := changedEntries(before, after)
	if err := errors.Join(beforeErr, afterErr); err != nil {
		// Not knowing is taken as changed: a later session runs the
		// command rather than miss what it installs.
		changed = []string{"its state could not be read: " + err.Error()}
	}
	if err := finishLayer(staging, layer, setupRecord{Command: command, Session: sessionID(ctx), At: time.Now().UTC(), Millis: res.Millis, Output: out, Changed: changed}); err != nil {
		return res, err
	}
	layersMu.Lock()
	defer layersMu.Unlock()
	if err := a.linkSetup(req.Checkout.Name, res.Key); err != nil {
		return res, err
	}
	if keep := a.cfg.Setup.Keep; keep > 0 {
		// A new layer is where the disk grows: the old ones go now.
		removed, err := pruneSetupLayers(a.cfg.StateDir, keep, time.Now())
		if err == nil && len(removed) > 0 && activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Info("removed setup layers no session used", "keep", keep, "layers", removed)
		}
	}
	return res, nil
}

// touchLayer marks the layer used now: its record's time is what a prune
// reads.
func touchLayer(layer string) {
	now := time.Now()
	_ = os.Chtimes(filepath.Join(layer, setupRecordFile), now, now)
}

// PruneSetupLayers removes the setup layers under stateDir that no
// checkout is linked to and no session made or reused within keep, and
// returns their keys. A layer is only ever read, so one removed is made
// again by the next session of its lockfiles. The worker runs it at
// start; a new layer runs it too.
func PruneSetupLayers(stateDir string, keep time.Duration, now time.Time) ([]string, error) {
	layersMu.Lock()
	defer layersMu.Unlock()
	return pruneSetupLayers(stateDir, keep, now)
}

func pruneSetupLayers(stateDir string, keep time.Duration, now time.Time) ([]string, error) {
	if stateDir == "" || keep <= 0 {
		return nil, nil
	}
	dir := filepath.Dir(tools.SetupLayerDir(stateDir, "x"))
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list the setup layers: %w", err)
	}
	linked := map[string]bool{}
	links := filepath.Dir(tools.SetupLinkPath(stateDir, "x"))
	if ls, err := os.ReadDir(links); err == nil {
		for _, l := range ls {
			if b, err := os.ReadFile(filepath.Join(links, l.Name())); err == nil {
				linked[strings.TrimSpace(string(b))] = true
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("list the checkouts' setup links: %w", err)
	}
	var removed []string
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || linked[name] {
			continue // staging directories are newStaging's to clean
		}
		fi, err := os.Stat(filepath.Join(dir, name, setupRecordFile))
		if err != nil || now.Sub(fi.ModTime()) < keep {
			continue
		}
		if err := removeLayer(filepath.Join(dir, name)); err != nil {
			return removed, fmt.Errorf("remove the setup layer %s: %w", name, err)
		}
		removed = append(removed, name)
	}
	return removed, nil
}

// checkoutStatus is the checkout's git status, ignored files included,
// for telling whether a setup command changed the checkout.
func checkoutStatus(ctx context.Context, dir string) (string, error) {
	return checkout.Git(ctx, dir, "status", "--porcelain=v1", "-z", "--ignored")
}

// maxChanged bounds what a setup record keeps of what changed.
const maxChanged = 5

// changedEntries are the git status entries (porcelain -z) in after and
// not in before: what a command changed in the checkout, the first
// maxChanged, then how many more.
func changedEntries(before, after string) []string {
	had := map[string]bool{}
	for _, e := range strings.Split(before, "\x00") {
		had[e] = true
	}
	var out []string
	n := 0
	for _, e := range strings.Split(after, "\x00") {
		if e == "" || had[e] {
			continue
		}
		if n++; n <= maxChanged {
			out = append(out, strings.TrimSpace(e))
		}
	}
	if n > maxChanged {
		out = append(out, fmt.Sprintf("and %d more", n-maxChanged))
	}
	return out
}

func (a *Activities) setupTimeout() time.Duration {
	if a.cfg.Setup != nil && a.cfg.Setup.Timeout > 0 {
		return a.cfg.Setup.Timeout
	}
	return DefaultSetupTimeout
}

// runSetup runs command with bash in the sandbox: the checkout writable,
// the network on, modCache its writable GOMODCACHE. It returns the tail
// of its output and its exit code; an error when it could not run or
// timed out.
func (a *Activities) runSetup(ctx context.Context, dir, sub, command, modCache string) (string, int, error) {
	if err := os.MkdirAll(modCache, 0o700); err != nil {
		return "", -1, fmt.Errorf("make the setup's module cache: %w", err)
	}
	work := dir
	if sub != "" {
		work = filepath.Join(dir, filepath.FromSlash(sub))
	}
	sc, err := tools.SandboxCommand(a.cfg.Setup.Sandbox, tools.SandboxSpec{
		Argv: []string{"bash", "-c", command}, Dir: work, Root: dir, Network: true, SetupModCache: modCache,
	})
	if err != nil {
		return "", -1, fmt.Errorf("the setup command did not run: it runs only in the sandbox, with the network: %w", err)
	}
	defer sc.Close()
	out := &tailBuffer{max: contract.SetupOutputMax}
	sc.Cmd.Stdout, sc.Cmd.Stderr = out, out
	if err := sc.Start(); err != nil {
		return out.String(), -1, fmt.Errorf("the setup command did not start: %w", err)
	}
	done := make(chan struct{})
	timeout := a.setupTimeout()
	var timedOut atomic.Bool
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		case <-time.After(timeout):
			timedOut.Store(true)
		}
		if pid := sc.PID(); pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL)
		}
		_ = sc.Cmd.Process.Kill()
	}()
	err = sc.Wait()
	close(done)
	var exit *exec.ExitError
	switch {
	case timedOut.Load():
		return out.String(), -1, fmt.Errorf("the setup command did not finish within %s (longrun-worker --setup-timeout)", timeout)
	case ctx.Err() != nil:
		return out.String(), -1, ctx.Err()
	case errors.As(err, &exit):
		return out.String(), exit.ExitCode(), nil
	case err != nil:
		return out.String(), -1, err
	}
	return out.String(), 0, nil
}

// linkSetup points the checkout name at the layer key (tools reads it:
// setupModCacheFor).
func (a *Activities) linkSetup(name, key string) error {
	link := tools.SetupLinkPath(a.cfg.StateDir, name)
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		return fmt.Errorf("link the checkout to its setup: %w", err)
	}
	if err := os.WriteFile(link, []byte(key+"\n"), 0o600); err != nil {
		return fmt.Errorf("link the checkout to its setup: %w", err)
	}
	return nil
}

// unlinkSetup forgets the checkout's layer when the checkout closes.
func (a *Activities) unlinkSetup(name string) {
	if a.cfg.StateDir != "" && name != "" {
		_ = os.Remove(tools.SetupLinkPath(a.cfg.StateDir, name))
	}
}

// readSetupRecord reads a finished layer's record; a layer without one is
// not there (a layer appears whole, by rename, with its record).
func readSetupRecord(layer string) (setupRecord, bool) {
	var rec setupRecord
	b, err := os.ReadFile(filepath.Join(layer, setupRecordFile))
	if err != nil || json.Unmarshal(b, &rec) != nil {
		return rec, false
	}
	return rec, true
}

// newStaging makes the directory a layer is filled in, beside it, so it
// appears whole by a rename; it first removes the staging directories of
// runs of the same key older than the setup timeout (a worker killed
// mid-run left them).
func newStaging(layer string, timeout time.Duration) (string, error) {
	parent := filepath.Dir(layer)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return "", fmt.Errorf("make the setup layers' directory: %w", err)
	}
	prefix := ".make-" + filepath.Base(layer) + "-"
	if old, err := filepath.Glob(filepath.Join(parent, prefix+"*")); err == nil {
		for _, o := range old {
			if fi, err := os.Stat(o); err == nil && time.Since(fi.ModTime()) > timeout+time.Minute {
				_ = removeLayer(o)
			}
		}
	}
	dir, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return "", fmt.Errorf("make a setup layer: %w", err)
	}
	return dir, nil
}

// finishLayer writes the record into staging and renames it to layer.
// When another session of the same key finished first, its layer stays
// and staging goes.
func finishLayer(staging, layer string, rec setupRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(staging, setupRecordFile), b, 0o600); err != nil {
		return fmt.Errorf("record the setup layer: %w", err)
	}
	if err := os.Rename(staging, layer); err != nil {
		if _, ok := readSetupRecord(layer); ok {
			return removeLayer(staging)
		}
		return fmt.Errorf("keep the setup layer: %w", err)
	}
	return nil
}

// removeLayer removes a layer's directory: Go leaves its module cache
// read-only, so each directory is made writable first.
func removeLayer(dir string) error {
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}

// tailBuffer keeps the last max bytes written to it, marking a cut.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
	cut bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf, t.cut = append(t.buf[:0], t.buf[over:]...), true
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.ToValidUTF8(string(t.buf), "")
	if t.cut {
		return "[… earlier output cut]\n" + s
	}
	return s
}
