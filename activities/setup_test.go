package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/tools"
)

// SetupCheckout runs the repository's setup command in the sandbox, in
// the checkout, with a module cache of its own that becomes the layer;
// a second checkout of the same lockfiles reuses it without running the
// command, and every command of a linked checkout sees that layer as its
// GOMODCACHE, read-only. A failing command is a result with Error and
// leaves no layer; a changed lockfile is a new key. Needs bwrap and
// pasta (the setup always has the network).
func TestSetupCheckoutRunsOnceAndReusesItsLayer(t *testing.T) {
	t.Parallel()
	if ok, why, _ := tools.CheckSandbox(tools.ShellConfig{Sandbox: tools.SandboxOn}); !ok {
		t.Skipf("SKIPPED LOUDLY: the setup runs only in the sandbox: %s", why)
	}
	if ok, why := tools.CheckSandboxNetwork(tools.ShellConfig{Sandbox: tools.SandboxOn}); !ok {
		t.Skipf("SKIPPED LOUDLY: the setup runs with the network, through pasta: %s", why)
	}
	ctx := context.Background()
	a, root := newActs(t, nil)
	state := t.TempDir()
	gitIn := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
		cmd.Dir = root
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "git %v: %s", args, out)
	}
	gitIn("init", "-q", ".")
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.sum"), []byte("one\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".gitignore"), []byte("setup-ran\n"), 0o644))
	gitIn("add", "go.sum", ".gitignore")
	gitIn("commit", "-qm", "first")

	command := `test -f go.sum && echo in-the-checkout; mkdir -p "$GOMODCACHE/cache/download" && echo fetched > "$GOMODCACHE/mod.txt" && echo done`
	tcfg := tools.Config{Shell: tools.ShellConfig{Sandbox: tools.SandboxOn}, StateDir: state}
	a = a.with(func(c *Config) {
		c.StateDir = state
		c.Setup = &SetupConfig{Commands: map[string]string{"": command}, Sandbox: tcfg}
	})
	open := func() checkout.Info {
		t.Helper()
		res, err := a.OpenCheckout(ctx, CheckoutRequest{})
		require.NoError(t, err)
		require.NotNil(t, res.Checkout)
		require.Equal(t, a.cfg.Setup.Commands[""], res.Setup, "OpenCheckout names the setup due")
		return *res.Checkout
	}

	first := open()
	res, err := a.SetupCheckout(ctx, SetupRequest{Checkout: first})
	require.NoError(t, err)
	require.Empty(t, res.Error, res.Output)
	require.False(t, res.Cached)
	require.Contains(t, res.Output, "done")
	require.Contains(t, res.Output, "in-the-checkout", "it ran in the checkout")
	layer := tools.SetupLayerDir(state, res.Key)
	require.FileExists(t, filepath.Join(layer, tools.SetupModCache, "mod.txt"), "its module cache is the layer")

	// A command of the session sees the layer, read-only.
	ws, err := tools.NewWorkspace(first.Dir)
	require.NoError(t, err)
	sh, ok := tools.NewRegistry(tools.Builtin(tcfg)...).Lookup("shell")
	require.True(t, ok)
	out := runShell(t, sh, ws, `cat "$GOMODCACHE/mod.txt"; echo x > "$GOMODCACHE/mod.txt" || echo read-only`)
	require.Contains(t, out, "fetched")
	require.Contains(t, out, "read-only")

	// Outside an activity every checkout has the same name: close the
	// first (which forgets its link) before the next.
	_, err = a.CloseCheckout(ctx, CloseCheckoutRequest{Checkout: first, Message: "done"})
	require.NoError(t, err)
	require.NoFileExists(t, tools.SetupLinkPath(state, first.Name), "the close forgets the link")

	second := open()
	rec := filepath.Join(layer, setupRecordFile)
	long := time.Now().Add(-90 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(rec, long, long))
	again, err := a.SetupCheckout(ctx, SetupRequest{Checkout: second})
	require.NoError(t, err)
	require.True(t, again.Cached)
	fi, err := os.Stat(rec)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now(), fi.ModTime(), time.Hour, "a reuse marks the layer used: a prune keeps it")
	require.Equal(t, res.Key, again.Key)
	require.Equal(t, res.Millis, again.FirstMillis)
	require.Contains(t, again.Output, "in-the-checkout", "a reused setup shows the output of the run it reuses")
	require.Empty(t, again.Again)
	ws2, err := tools.NewWorkspace(second.Dir)
	require.NoError(t, err)
	require.Contains(t, runShell(t, sh, ws2, `cat "$GOMODCACHE/mod.txt"`), "fetched")

	// A command that also installs into the checkout (as npm ci fills
	// node_modules) runs again in every new checkout: skipped, it would
	// leave the checkout without what it installs. Its layer stays the
	// first run's.
	a = a.with(func(c *Config) {
		c.Setup.Commands[""] = `echo "run $(date +%s%N)" > "$GOMODCACHE/run.txt"; mkdir -p node_modules/left-pad && echo pad > node_modules/left-pad/index.js; echo installed`
	})
	// Each run in a new checkout, the one before closed (outside an
	// activity every checkout has the same name).
	last := second
	setupNext := func() (checkout.Info, SetupResult) {
		t.Helper()
		_, err := a.CloseCheckout(ctx, CloseCheckoutRequest{Checkout: last, Message: "done"})
		require.NoError(t, err)
		last = open()
		res, err := a.SetupCheckout(ctx, SetupRequest{Checkout: last})
		require.NoError(t, err)
		require.Empty(t, res.Error, res.Output)
		require.False(t, res.Cached, "a setup that changed the checkout is never skipped")
		return last, res
	}
	_, installed := setupNext()
	require.Empty(t, installed.Again)
	npmLayer := tools.SetupLayerDir(state, installed.Key)
	madeRun, err := os.ReadFile(filepath.Join(npmLayer, tools.SetupModCache, "run.txt"))
	require.NoError(t, err)
	npm2, rerun := setupNext()
	require.Equal(t, installed.Key, rerun.Key)
	require.Contains(t, rerun.Again, "also changed the checkout (?? node_modules/)")
	require.Contains(t, rerun.Output, "installed")
	require.FileExists(t, filepath.Join(npm2.Dir, "node_modules", "left-pad", "index.js"), "the second checkout has what the command installs")
	still, err := os.ReadFile(filepath.Join(npmLayer, tools.SetupModCache, "run.txt"))
	require.NoError(t, err)
	require.Equal(t, string(madeRun), string(still), "the layer is the first run's, never written again")
	second = npm2

	// A changed lockfile is another key; a failing command leaves no layer.
	require.NoError(t, os.WriteFile(filepath.Join(root, "go.sum"), []byte("two\n"), 0o644))
	gitIn("commit", "-qam", "second")
	a = a.with(func(c *Config) { c.Setup.Commands[""] = "echo broken; exit 3" })
	_, err = a.CloseCheckout(ctx, CloseCheckoutRequest{Checkout: second, Message: "done"})
	require.NoError(t, err)
	third := open()
	failed, err := a.SetupCheckout(ctx, SetupRequest{Checkout: third})
	require.NoError(t, err, "a failed setup is a result, not a failed activity")
	require.Equal(t, 3, failed.ExitCode)
	require.Contains(t, failed.Error, "status 3")
	require.Contains(t, failed.Output, "broken")
	require.NotEqual(t, res.Key, failed.Key)
	require.NoDirExists(t, tools.SetupLayerDir(state, failed.Key))
	entries, err := os.ReadDir(filepath.Dir(layer))
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.ElementsMatch(t, []string{filepath.Base(layer), filepath.Base(npmLayer)}, names, "two layers, no staging directory left (the rerun's neither)")
}

// runShell runs command with the shell tool, approved, without the
// network, in ws, and returns its output.
func runShell(t *testing.T, sh tools.Tool, ws *tools.Workspace, command string) string {
	t.Helper()
	args, err := json.Marshal(map[string]string{"command": command})
	require.NoError(t, err)
	res, err := sh.Run(context.Background(), tools.Env{Workspace: ws, Session: "s-setup"}, args)
	require.NoError(t, err)
	return res.Content
}

// TestChangedEntries: what a command changed is what git status lists
// after it and did not before, cut after maxChanged with how many more.
func TestChangedEntries(t *testing.T) {
	t.Parallel()
	require.Empty(t, changedEntries("?? a\x00!! b/", "!! b/\x00?? a"), "the same entries in another order")
	require.Equal(t, []string{"M go.sum", "!! node_modules/"}, changedEntries("?? a", "?? a\x00 M go.sum\x00!! node_modules/"))
	var after []string
	for i := range maxChanged + 3 {
		after = append(after, fmt.Sprintf("?? f%d", i))
	}
	got := changedEntries("", strings.Join(after, "\x00"))
	require.Len(t, got, maxChanged+1)
	require.Equal(t, "and 3 more", got[maxChanged])
}

// TestPruneSetupLayers removes the layers no checkout links and nobody
// made or reused within keep, read-only module caches and all, and
// leaves the rest: a linked layer, a fresh one, a staging directory (its
// own cleanup's), a directory that is no layer.
func TestPruneSetupLayers(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	now := time.Now()
	layer := func(key string, age time.Duration) {
		t.Helper()
		dir := tools.SetupLayerDir(state, key)
		mod := filepath.Join(dir, tools.SetupModCache, "example.test")
		require.NoError(t, os.MkdirAll(mod, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(mod, "m.go"), []byte("package m\n"), 0o444))
		require.NoError(t, os.Chmod(mod, 0o555)) // as Go leaves its module cache
		rec := filepath.Join(dir, setupRecordFile)
		require.NoError(t, os.WriteFile(rec, []byte(`{"command":"go mod download"}`), 0o600))
		require.NoError(t, os.Chtimes(rec, now.Add(-age), now.Add(-age)))
	}
	layer("old", 40*24*time.Hour)
	layer("linked", 40*24*time.Hour)
	layer("fresh", time.Hour)
	layer(".make-old-123", 40*24*time.Hour)
	require.NoError(t, os.MkdirAll(tools.SetupLayerDir(state, "norecord"), 0o700))
	link := tools.SetupLinkPath(state, "session-checkout")
	require.NoError(t, os.MkdirAll(filepath.Dir(link), 0o700))
	require.NoError(t, os.WriteFile(link, []byte("linked\n"), 0o600))

	removed, err := PruneSetupLayers(state, 30*24*time.Hour, now)
	require.NoError(t, err)
	require.Equal(t, []string{"old"}, removed)
	require.NoDirExists(t, tools.SetupLayerDir(state, "old"))
	for _, k := range []string{"linked", "fresh", ".make-old-123", "norecord"} {
		require.DirExists(t, tools.SetupLayerDir(state, k))
	}

	removed, err = PruneSetupLayers(state, 0, now)
	require.NoError(t, err)
	require.Empty(t, removed, "keep 0 keeps every layer")
	removed, err = PruneSetupLayers(t.TempDir(), time.Hour, now)
	require.NoError(t, err)
	require.Empty(t, removed, "a state directory without layers")
}
