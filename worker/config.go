package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/mcp"
	"github.com/longrun/longrun/permission"
)

// Files of the worker's configuration directory (--config). A person
// writes them; no workspace can, so what they say holds against a model
// that rewrote everything in the workspace.
const (
	configPermissions = "permissions.json" // rules, the "worker" layer
	configPrices      = "prices.json"      // as LONGRUN_PRICES
	configTrusted     = "trusted.json"     // {"workspaces": ["/abs/path"]}
	configGuardian    = "guardian.md"      // the guardian's system prompt
)

// workerConfig is what the worker read from its configuration directory
// (and, for a trusted workspace, from the workspace) at start.
type workerConfig struct {
	Rules   []permission.Rule
	MCP     mcp.Config
	Prices  activities.PriceTable // nil: none in the directory
	Trusted bool
	// TrustedBy says why the workspace is trusted, for the log.
	TrustedBy string
	// Notes name the workspace files that were ignored, for every
	// session's notes and the worker's log.
	Notes []string
	// MCPFiles are the MCP configuration files that were used.
	MCPFiles []string
	// GuardianPrompt is guardian.md, the guardian's system prompt; empty:
	// the built-in one.
	GuardianPrompt string
}

// defaultDir is $<xdgVar>/longrun, else $HOME/<homeRel>/longrun; "" when
// neither is set. A relative XDG value is ignored, as the XDG Base
// Directory specification says.
func defaultDir(getenv func(string) string, xdgVar, homeRel string) string {
	if x := getenv(xdgVar); filepath.IsAbs(x) {
		return filepath.Join(x, "longrun")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, homeRel, "longrun")
	}
	return ""
}

// prepareStateDir makes the state directory (0700) and returns its real
// path. It refuses one inside the workspace, or a workspace inside it:
// what the worker keeps there (transcripts, job logs, spilled output) is
// kept out of the model's reach only when no file tool and no sandbox can
// name it.
func prepareStateDir(dir, workspaceRoot string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("--state-dir %s: %w", dir, err)
	}
	// Checked before anything is made, so a refused directory is not
	// left behind in the workspace; checked again once it is real.
	if err := apart("state directory", realOrClean(abs), "--state-dir", workspaceRoot); err != nil {
		return "", err
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("--state-dir: create %s: %w", abs, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("--state-dir %s: %w", abs, err)
	}
	if err := apart("state directory", real, "--state-dir", workspaceRoot); err != nil {
		return "", err
	}
	return real, nil
}

// apart fails when dir and the workspace overlap, naming both.
func apart(what, dir, flag, workspaceRoot string) error {
	switch {
	case within(dir, workspaceRoot):
		return fmt.Errorf("the %s %s lies inside the workspace %s, where the model could read and change it: choose a %s outside the workspace", what, dir, workspaceRoot, flag)
	case within(workspaceRoot, dir):
		return fmt.Errorf("the workspace %s lies inside the %s %s, so the model could read and change the worker's files: choose a %s outside the workspace", workspaceRoot, what, dir, flag)
	}
	return nil
}

// within reports whether path is dir or beneath it (both clean, absolute).
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// realOrClean resolves the symlinks of an absolute path as far as it
// exists: its longest existing ancestor is resolved and the rest joined on.
func realOrClean(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// loadConfig reads the configuration directory dir for the workspace
// workspaceRoot (a real path). A missing directory or file is no
// configuration; a malformed file stops the worker with its name.
// trustFlag is --trust-workspace.
func loadConfig(dir, workspaceRoot string, trustFlag bool) (workerConfig, error) {
	var wc workerConfig
	dir, err := filepath.Abs(dir)
	if err != nil {
		return wc, fmt.Errorf("--config: %w", err)
	}
	if err := apart("config directory", realOrClean(dir), "--config", workspaceRoot); err != nil {
		return wc, err
	}
	if wc.Rules, err = activities.LoadRulesFile(filepath.Join(dir, configPermissions), permission.LayerWorker); err != nil {
		return wc, err
	}
	prices := filepath.Join(dir, configPrices)
	if _, err := os.Stat(prices); err == nil {
		if wc.Prices, err = activities.LoadPrices(prices); err != nil {
			return wc, err
		}
	}
	switch raw, err := os.ReadFile(filepath.Join(dir, configGuardian)); {
	case err == nil:
		if strings.TrimSpace(string(raw)) == "" {
			return wc, fmt.Errorf("%s is empty: write the guardian's prompt in it, or remove it for the built-in one", filepath.Join(dir, configGuardian))
		}
		wc.GuardianPrompt = string(raw)
	case !errors.Is(err, os.ErrNotExist):
		return wc, fmt.Errorf("read %s: %w", filepath.Join(dir, configGuardian), err)
	}
	trusted, err := loadTrusted(filepath.Join(dir, configTrusted))
	if err != nil {
		return wc, err
	}
	switch {
	case trustFlag:
		wc.Trusted, wc.TrustedBy = true, "--trust-workspace"
	case containsPath(trusted, workspaceRoot):
		wc.Trusted, wc.TrustedBy = true, filepath.Join(dir, configTrusted)
	}

	own := filepath.Join(dir, mcp.ConfigFile)
	cfg, err := mcp.LoadConfig(own)
	switch {
	case errors.Is(err, mcp.ErrNoConfig):
		cfg = mcp.Config{Servers: map[string]mcp.ServerConfig{}}
	case err != nil:
		return wc, err
	default:
		wc.MCPFiles = append(wc.MCPFiles, own)
	}
	ws := filepath.Join(workspaceRoot, mcp.ConfigPath)
	if !wc.Trusted {
		// An MCP command from a workspace file would run on this machine
		// with nobody having looked at it.
		if _, err := os.Lstat(ws); err == nil {
			wc.Notes = append(wc.Notes, activities.UntrustedNote(mcp.ConfigPath))
		}
		wc.MCP = cfg
		return wc, nil
	}
	wcfg, err := mcp.LoadConfig(ws)
	switch {
	case errors.Is(err, mcp.ErrNoConfig):
	case err != nil:
		return wc, err
	default:
		wc.MCPFiles = append(wc.MCPFiles, ws)
		for name, s := range wcfg.Servers {
			// Running a server unsandboxed is the worker's owner's call:
			// a workspace's file cannot make it, trusted or not.
			if s.Sandbox != nil {
				return wc, fmt.Errorf(`MCP server %s in %s sets "sandbox": only the worker's own %s may; move the server there to run it outside the sandbox`, name, ws, own)
			}
			if _, dup := cfg.Servers[name]; dup {
				return wc, fmt.Errorf("MCP server %s is configured in both %s and %s: rename one", name, own, ws)
			}
			cfg.Servers[name] = s
		}
	}
	wc.MCP = cfg
	return wc, nil
}

// loadTrusted reads trusted.json: {"workspaces": ["/abs/path", ...]}, the
// workspaces whose own configuration a person vouches for. Paths are
// returned resolved, so a symlinked spelling matches.
func loadTrusted(path string) ([]string, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var f struct {
		Workspaces []string `json:"workspaces"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %v (want {\"workspaces\": [\"/absolute/path\", ...]})", path, err)
	}
	out := make([]string, 0, len(f.Workspaces))
	for _, w := range f.Workspaces {
		if !filepath.IsAbs(w) {
			return nil, fmt.Errorf("%s: workspace %q: want an absolute path", path, w)
		}
		out = append(out, realOrClean(w))
	}
	return out, nil
}

func containsPath(list []string, p string) bool {
	for _, x := range list {
		if x == p {
			return true
		}
	}
	return false
}

// envDuration is the duration in the variable name, def when it is unset.
// zero says what 0 means where 0 is allowed ("stop at once"); "" allows
// only a positive duration. A value that does not parse, or is out of
// range, is an error naming the variable and what to write (example:
// "90s or 10m").
func envDuration(getenv func(string) string, name string, def time.Duration, example, zero string) (time.Duration, error) {
	v := getenv(name)
	if v == "" {
		return def, nil
	}
	d, err := time.ParseDuration(v)
	switch {
	case zero == "" && (err != nil || d <= 0):
		return 0, fmt.Errorf("%s=%q: want a positive duration such as %s", name, v, example)
	case err != nil || d < 0:
		return 0, fmt.Errorf("%s=%q: want a duration such as %s (0: %s)", name, v, example, zero)
	}
	return d, nil
}
