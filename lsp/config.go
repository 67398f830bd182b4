package lsp

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ConfigFile is the name of the language servers' configuration in the
// worker's configuration directory (--config). Only the worker's owner
// writes it: a server is a program the worker runs (in the sandbox, over
// the session's files), so no workspace file may name one.
const ConfigFile = "lsp.json"

// Defaults of Config's durations.
const (
	DefaultDiagnosticsWait = 3 * time.Second
	DefaultIdleTimeout     = 10 * time.Minute
)

// ServerConfig is one language server: the program, which files it serves
// and what it is told at start.
type ServerConfig struct {
	Command string   `json:"command"`
	Args    []string `json:"args,omitempty"`
	// Patterns are the files the server serves: a pattern without "/"
	// matches the base name ("*.go", "go.mod"), one with "/" the path
	// relative to the workspace root (path.Match syntax).
	Patterns []string `json:"patterns"`
	// LanguageID is the languageId of the documents it is sent; empty:
	// guessed from each file's extension.
	LanguageID string `json:"language_id,omitempty"`
	// InitializationOptions are sent in the initialize request as they are.
	InitializationOptions json.RawMessage `json:"initialization_options,omitempty"`
	// Settings answer the server's workspace/configuration requests.
	Settings json.RawMessage `json:"settings,omitempty"`
	// Env is added to the server's environment (see Environ).
	Env map[string]string `json:"env,omitempty"`
	// Disabled turns a server off, the built-in gopls included.
	Disabled bool `json:"disabled,omitempty"`
}

// Config is lsp.json: the servers by name, and how long the tools wait
// for them.
type Config struct {
	Servers map[string]ServerConfig `json:"servers"`
	// DiagnosticsWait caps how long an edit's result waits for the
	// server's diagnostics ("3s"); a slow server never holds it longer.
	DiagnosticsWait string `json:"diagnostics_wait,omitempty"`
	// IdleTimeout stops a server nobody used for that long ("10m").
	IdleTimeout string `json:"idle_timeout,omitempty"`
	// Launch makes each server's process; set by the worker (never by
	// lsp.json), nil: no server starts (ErrNoLaunch).
	Launch Launch `json:"-"`

	wait, idle time.Duration
}

// GoplsName is the name of the built-in gopls entry.
const GoplsName = "gopls"

// Gopls is the built-in server for Go: gopls from the PATH.
func Gopls(command string) ServerConfig {
	return ServerConfig{Command: command, Patterns: []string{"*.go", "go.mod", "go.work"}, LanguageID: "go"}
}

// ErrNoConfig means there is no lsp.json; the built-in gopls still
// serves when it is on the PATH.
var ErrNoConfig = errors.New("no lsp.json")

// LoadConfig reads lsp.json at file. A missing file is ErrNoConfig.
func LoadConfig(file string) (Config, error) {
	raw, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return Config{}, ErrNoConfig
	}
	if err != nil {
		return Config{}, fmt.Errorf("read %s: %w", file, err)
	}
	var c Config
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%s: %w", file, err)
	}
	if err := c.normalize(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", file, err)
	}
	return c, nil
}

// WithDefaults completes c: gopls serves Go files when c does not name a
// "gopls" server and lookPath finds one, and the durations get their
// defaults. It reports which servers are on.
func (c Config) WithDefaults(lookPath func(string) (string, error)) (Config, error) {
	if lookPath == nil {
		lookPath = exec.LookPath
	}
	servers := map[string]ServerConfig{}
	for n, s := range c.Servers {
		servers[n] = s
	}
	if _, named := servers[GoplsName]; !named {
		if p, err := lookPath("gopls"); err == nil {
			servers[GoplsName] = Gopls(p)
		}
	}
	c.Servers = servers
	return c, c.normalize()
}

// normalize checks every server and parses the durations.
func (c *Config) normalize() error {
	for _, name := range c.Names() {
		s := c.Servers[name]
		if s.Disabled {
			continue
		}
		if s.Command == "" {
			return fmt.Errorf(`server %s: "command" is empty: name the program to run`, name)
		}
		if len(s.Patterns) == 0 {
			return fmt.Errorf(`server %s: "patterns" is empty: name the files it serves, e.g. ["*.ts", "*.tsx"]`, name)
		}
		for _, p := range s.Patterns {
			if _, err := path.Match(p, ""); err != nil {
				return fmt.Errorf("server %s: pattern %q: %w", name, p, err)
			}
		}
	}
	var err error
	if c.wait, err = duration(c.DiagnosticsWait, DefaultDiagnosticsWait); err != nil {
		return fmt.Errorf("diagnostics_wait: %w", err)
	}
	if c.idle, err = duration(c.IdleTimeout, DefaultIdleTimeout); err != nil {
		return fmt.Errorf("idle_timeout: %w", err)
	}
	return nil
}

func duration(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not positive", s)
	}
	return d, nil
}

// Names are the servers that are on, sorted, so the first match of a
// file is the same on every worker.
func (c Config) Names() []string {
	var out []string
	for n, s := range c.Servers {
		if !s.Disabled {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// serverFor names the server serving rel (slash-separated, relative to
// the workspace root), or "".
func (c Config) serverFor(rel string) string {
	base := path.Base(rel)
	for _, n := range c.Names() {
		for _, p := range c.Servers[n].Patterns {
			target := base
			if strings.Contains(p, "/") {
				target = rel
			}
			if ok, _ := path.Match(p, target); ok {
				return n
			}
		}
	}
	return ""
}

// languageIDs guesses a document's languageId from its extension.
var languageIDs = map[string]string{
	".go": "go", ".mod": "go.mod", ".work": "go.work", ".ts": "typescript", ".mts": "typescript", ".cts": "typescript",
	".tsx": "typescriptreact", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
	".jsx": "javascriptreact", ".py": "python", ".pyi": "python", ".rs": "rust", ".c": "c", ".h": "c",
	".cpp": "cpp", ".java": "java", ".rb": "ruby", ".json": "json",
}

func languageID(s ServerConfig, file string) string {
	if s.LanguageID != "" && filepath.Ext(file) != ".mod" && filepath.Ext(file) != ".work" {
		return s.LanguageID
	}
	if id, ok := languageIDs[filepath.Ext(file)]; ok {
		return id
	}
	return "plaintext"
}
