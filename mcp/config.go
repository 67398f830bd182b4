// Package mcp connects a worker to the MCP servers its configuration names
// (mcp.json in the worker's config directory, and a trusted workspace's
// .longrun/mcp.json) through the official go-sdk client: it lists their
// tools as tools.Specs and runs calls to them, with a per-server timeout,
// normalising what comes back into a tools.Result. Connections are opened
// lazily and belong to the worker process that opened them.
package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/longrun/longrun/tools"
)

// ConfigPath is where a workspace keeps its MCP configuration, relative to
// the workspace root. The worker reads it only for a workspace a person
// marked trusted: its commands run on the worker's machine.
const ConfigPath = ".longrun/mcp.json"

// ConfigFile is the MCP configuration's name in the worker's own
// configuration directory (--config).
const ConfigFile = "mcp.json"

// DefaultTimeout bounds one call (and one connect or listing) when a server
// names no timeout.
const DefaultTimeout = 30 * time.Second

// Config is the content of an mcp.json.
type Config struct {
	Servers map[string]ServerConfig `json:"servers"`
}

// ServerConfig is one MCP server: a command started over stdio, or the URL
// of a streamable HTTP endpoint.
type ServerConfig struct {
	Command string   `json:"command,omitempty"`
	Args    []string `json:"args,omitempty"`
	// Env is what a stdio server gets beyond PATH, HOME, LANG, LC_*, TERM
	// and TZ; ${VAR} in a value is expanded from the worker's environment
	// (only here: args and url are used as written).
	Env map[string]string `json:"env,omitempty"`
	URL string            `json:"url,omitempty"`
	// Timeout bounds each call to the server.
	Timeout Duration `json:"timeout,omitzero"`
	// Omit lists the server's tool names (as the server spells them) that
	// are never offered, for tools the workspace does not want the model
	// to have.
	Omit []string `json:"omit,omitempty"`
	// Exposure is tools.ExposureDirect or tools.ExposureDeferred for every
	// tool of the server; empty lets the catalog's size decide.
	Exposure string `json:"exposure,omitempty"`
	// Sandbox false runs a stdio server outside the worker's sandbox, with
	// the worker's rights (for a server that must write the workspace or
	// reach this host's services). Unset or true: sandboxed where the
	// sandbox works. The worker accepts false only from its own config
	// directory, never from a workspace's file.
	Sandbox *bool `json:"sandbox,omitempty"`
}

// Duration is a time.Duration read from a Go duration string ("30s") or a
// number of seconds, as SessionInput's timeouts are.
type Duration time.Duration

// UnmarshalJSON accepts "30s" or 30.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: %w", s, err)
		}
		*d = Duration(v)
		return nil
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(b)), 64)
	if err != nil {
		return fmt.Errorf("duration %s: want a string such as \"30s\" or a number of seconds", b)
	}
	*d = Duration(f * float64(time.Second))
	return nil
}

// MarshalJSON writes the duration as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// timeout is the server's call timeout, defaulted.
func (s ServerConfig) timeout() time.Duration {
	if s.Timeout > 0 {
		return time.Duration(s.Timeout)
	}
	return DefaultTimeout
}

// serverNameRe is what a server name may be. The name becomes the prefix of
// every tool name the model sees, so it must fit OpenAI's function names,
// and it may not hold the separator, so a tool name splits back into server
// and tool unambiguously.
var serverNameRe = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_-]{0,29}$`)

// ErrNoConfig is returned by LoadConfig when the workspace has no MCP
// configuration, which is the common case and not a fault.
var ErrNoConfig = errors.New("no MCP configuration")

// LoadConfig reads and checks an MCP configuration file. A file that does
// not exist is ErrNoConfig; a malformed one is an error naming the file and
// the problem, so the worker refuses to start rather than silently running
// without the servers someone configured.
func LoadConfig(path string) (Config, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Config{}, ErrNoConfig
	}
	if err != nil {
		return Config{}, fmt.Errorf("read MCP config %s: %w", path, err)
	}
	var c Config
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("MCP config %s: %w", path, err)
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("MCP config %s: %w", path, err)
	}
	return c, nil
}

// Validate checks every server entry.
func (c Config) Validate() error {
	for _, name := range c.names() {
		s := c.Servers[name]
		switch {
		case !serverNameRe.MatchString(name) || strings.Contains(name, Separator) || strings.HasSuffix(name, "_"):
			return fmt.Errorf("server %q: a name is 1-30 letters, digits, - or _, starts with a letter or digit, holds no %q and does not end in _", name, Separator)
		case s.Command == "" && s.URL == "":
			return fmt.Errorf("server %s: set command (stdio) or url (streamable HTTP)", name)
		case s.Command != "" && s.URL != "":
			return fmt.Errorf("server %s: set command or url, not both", name)
		case s.URL != "" && !strings.HasPrefix(s.URL, "http://") && !strings.HasPrefix(s.URL, "https://"):
			return fmt.Errorf("server %s: url %q: want http:// or https://", name, s.URL)
		case s.URL != "" && (len(s.Args) > 0 || len(s.Env) > 0 || s.Sandbox != nil):
			return fmt.Errorf("server %s: args, env and sandbox are for a command, not a url", name)
		case s.Timeout < 0:
			return fmt.Errorf("server %s: negative timeout", name)
		}
		switch s.Exposure {
		case "", tools.ExposureDirect, tools.ExposureDeferred:
		default:
			return fmt.Errorf("server %s: exposure %q: want %q or %q", name, s.Exposure, tools.ExposureDirect, tools.ExposureDeferred)
		}
	}
	return nil
}

// names returns the server names sorted, so listing and logging are stable.
func (c Config) names() []string {
	out := make([]string, 0, len(c.Servers))
	for n := range c.Servers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
