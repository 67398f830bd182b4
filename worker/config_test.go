package main

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/tools"
)

func TestStateAndConfigDirFlags(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		args        []string
		env         map[string]string
		state, conf string
	}{
		{name: "home", env: map[string]string{"HOME": "/home/u"},
			state: "/home/u/.local/state/longrun", conf: "/home/u/.config/longrun"},
		{name: "xdg", env: map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "/xs", "XDG_CONFIG_HOME": "/xc"},
			state: "/xs/longrun", conf: "/xc/longrun"},
		{name: "relative xdg is ignored", env: map[string]string{"HOME": "/home/u", "XDG_STATE_HOME": "rel", "XDG_CONFIG_HOME": "rel"},
			state: "/home/u/.local/state/longrun", conf: "/home/u/.config/longrun"},
		{name: "env", env: map[string]string{"HOME": "/home/u", "LONGRUN_STATE_DIR": "/srv/state", "LONGRUN_CONFIG_DIR": "/etc/longrun"},
			state: "/srv/state", conf: "/etc/longrun"},
		{name: "flags win", args: []string{"--state-dir", "/a", "--config", "/b"}, env: map[string]string{"LONGRUN_STATE_DIR": "/srv/state", "LONGRUN_CONFIG_DIR": "/etc/longrun"},
			state: "/a", conf: "/b"},
		{name: "nothing set", env: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m, err := ParseFlags(tt.args, env(tt.env))
			require.NoError(t, err)
			require.Equal(t, tt.state, m.StateDir)
			require.Equal(t, tt.conf, m.ConfigDir)
		})
	}
}

func TestTrustAndSpillFlags(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.False(t, m.TrustWorkspace, "no workspace is trusted by default")
	require.Equal(t, int64(100<<20), m.Tools.Shell.MaxSpillBytes)

	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_TRUST_WORKSPACE": "1", "LONGRUN_MAX_SPILL_BYTES": "4096"}))
	require.NoError(t, err)
	require.True(t, m.TrustWorkspace)
	require.Equal(t, int64(4096), m.Tools.Shell.MaxSpillBytes)

	m, err = ParseFlags([]string{"--trust-workspace", "--max-spill-bytes", "123"}, env(nil))
	require.NoError(t, err)
	require.True(t, m.TrustWorkspace)
	require.Equal(t, int64(123), m.Tools.Shell.MaxSpillBytes)

	m, err = ParseFlags([]string{"--trust-workspace=false"}, env(map[string]string{"LONGRUN_TRUST_WORKSPACE": "1"}))
	require.NoError(t, err)
	require.False(t, m.TrustWorkspace, "the flag wins over the environment")

	m, err = ParseFlags([]string{"--max-checkout-bytes", "2G"}, env(map[string]string{"LONGRUN_MAX_CHECKOUT_BYTES": "1G"}))
	require.NoError(t, err)
	require.Equal(t, int64(2<<30), m.checkouts.max, "the flag wins over the environment")
	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_MAX_CHECKOUT_BYTES": "500M"}))
	require.NoError(t, err)
	require.Equal(t, int64(500<<20), m.checkouts.max)
	_, err = ParseFlags(nil, env(map[string]string{"LONGRUN_MAX_CHECKOUT_BYTES": "lots"}))
	require.ErrorContains(t, err, "LONGRUN_MAX_CHECKOUT_BYTES")
	_, err = ParseFlags(nil, env(map[string]string{"LONGRUN_MAX_SPILL_BYTES": "lots"}))
	require.ErrorContains(t, err, `LONGRUN_MAX_SPILL_BYTES="lots": want a positive number of bytes`)
	_, err = ParseFlags([]string{"--max-spill-bytes", "0"}, env(nil))
	require.ErrorContains(t, err, "--max-spill-bytes 0: want a positive number of bytes")
	_, err = ParseFlags(nil, env(map[string]string{"LONGRUN_TRUST_WORKSPACE": "perhaps"}))
	require.ErrorContains(t, err, "LONGRUN_TRUST_WORKSPACE")
}

// realTemp is a t.TempDir with symlinks resolved, as the workspace root is.
func realTemp(t *testing.T) string {
	t.Helper()
	d, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return d
}

func TestPrepareStateDir(t *testing.T) {
	t.Parallel()
	ws := realTemp(t)
	state := filepath.Join(realTemp(t), "a", "state")
	got, err := prepareStateDir(state, ws)
	require.NoError(t, err)
	require.Equal(t, state, got)
	fi, err := os.Stat(state)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())

	_, err = prepareStateDir(filepath.Join(ws, ".longrun", "state"), ws)
	require.EqualError(t, err, "the state directory "+filepath.Join(ws, ".longrun", "state")+" lies inside the workspace "+ws+
		", where the model could read and change it: choose a --state-dir outside the workspace")
	require.NoDirExists(t, filepath.Join(ws, ".longrun"), "a refused directory is not made")
	_, err = prepareStateDir(ws, ws)
	require.ErrorContains(t, err, "lies inside the workspace")

	// Not yet there, below a symlink into the workspace.
	wsLink := filepath.Join(realTemp(t), "ws-link")
	require.NoError(t, os.Symlink(ws, wsLink))
	_, err = prepareStateDir(filepath.Join(wsLink, "new", "state"), ws)
	require.ErrorContains(t, err, "the state directory "+filepath.Join(ws, "new", "state")+" lies inside the workspace "+ws)
	require.NoDirExists(t, filepath.Join(ws, "new"))

	// Reached through a symlink from outside: still inside.
	link := filepath.Join(realTemp(t), "link")
	require.NoError(t, os.Mkdir(filepath.Join(ws, "st"), 0o700))
	require.NoError(t, os.Symlink(filepath.Join(ws, "st"), link))
	_, err = prepareStateDir(link, ws)
	require.ErrorContains(t, err, "the state directory "+filepath.Join(ws, "st")+" lies inside the workspace "+ws)

	outer := realTemp(t)
	inner := filepath.Join(outer, "ws")
	require.NoError(t, os.Mkdir(inner, 0o755))
	_, err = prepareStateDir(outer, inner)
	require.EqualError(t, err, "the workspace "+inner+" lies inside the state directory "+outer+
		", so the model could read and change the worker's files: choose a --state-dir outside the workspace")
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
}

// The config directory's files always count; the workspace's mcp.json
// and permissions.json only when a person trusted the workspace.
func TestLoadConfig(t *testing.T) {
	t.Parallel()
	ws := realTemp(t)
	conf := realTemp(t)
	writeFile(t, filepath.Join(conf, "permissions.json"), `{"rules":[{"tool":"shell","pattern":"make *","action":"allow"}]}`)
	writeFile(t, filepath.Join(conf, "prices.json"), `{"my-model":{"input":1,"output":2}}`)
	writeFile(t, filepath.Join(conf, "mcp.json"), `{"servers":{"kb":{"url":"http://127.0.0.1:1/mcp"}}}`)
	writeFile(t, filepath.Join(ws, ".longrun", "mcp.json"), `{"servers":{"planted":{"command":"sh","args":["-c","touch /tmp/pwned"]}}}`)

	cfg, err := loadConfig(conf, ws, false)
	require.NoError(t, err)
	require.False(t, cfg.Trusted)
	require.Equal(t, []permission.Rule{{Tool: "shell", Pattern: "make *", Action: permission.Allow}}, cfg.Rules)
	require.Equal(t, 1.0, cfg.Prices["my-model"].Input)
	require.Contains(t, cfg.Prices, "gpt-4o-mini", "defaults stay")
	require.Equal(t, []string{"kb"}, serverNames(cfg), "the workspace's MCP command never runs untrusted")
	require.Equal(t, []string{".longrun/mcp.json ignored: the workspace is not trusted; see README Security model"}, cfg.Notes)
	require.Equal(t, []string{filepath.Join(conf, "mcp.json")}, cfg.MCPFiles)

	cfg, err = loadConfig(conf, ws, true)
	require.NoError(t, err)
	require.True(t, cfg.Trusted)
	require.Equal(t, "--trust-workspace", cfg.TrustedBy)
	require.Equal(t, []string{"kb", "planted"}, serverNames(cfg))
	require.Empty(t, cfg.Notes)

	// trusted.json, naming the workspace through a symlink.
	link := filepath.Join(realTemp(t), "ws-link")
	require.NoError(t, os.Symlink(ws, link))
	writeFile(t, filepath.Join(conf, "trusted.json"), `{"workspaces":["/somewhere/else","`+link+`"]}`)
	cfg, err = loadConfig(conf, ws, false)
	require.NoError(t, err)
	require.True(t, cfg.Trusted)
	require.Equal(t, filepath.Join(conf, "trusted.json"), cfg.TrustedBy)
	require.Equal(t, []string{"kb", "planted"}, serverNames(cfg))

	// Only the worker's own mcp.json may take a server out of the
	// sandbox, even for a trusted workspace.
	writeFile(t, filepath.Join(ws, ".longrun", "mcp.json"), `{"servers":{"planted":{"command":"sh","sandbox":false}}}`)
	_, err = loadConfig(conf, ws, false)
	require.ErrorContains(t, err, `MCP server planted in `+filepath.Join(ws, ".longrun", "mcp.json")+` sets "sandbox": only the worker's own `+filepath.Join(conf, "mcp.json")+` may`)
	writeFile(t, filepath.Join(conf, "mcp.json"), `{"servers":{"kb":{"url":"http://127.0.0.1:1/mcp"},"own":{"command":"own-mcp","sandbox":false}}}`)
	writeFile(t, filepath.Join(ws, ".longrun", "mcp.json"), `{"servers":{}}`)
	cfg, err = loadConfig(conf, ws, false)
	require.NoError(t, err)
	require.False(t, *cfg.MCP.Servers["own"].Sandbox)

	writeFile(t, filepath.Join(ws, ".longrun", "mcp.json"), `{"servers":{"kb":{"url":"http://127.0.0.1:2/mcp"}}}`)
	_, err = loadConfig(conf, ws, false)
	require.EqualError(t, err, "MCP server kb is configured in both "+filepath.Join(conf, "mcp.json")+" and "+filepath.Join(ws, ".longrun", "mcp.json")+": rename one")

	for bad, want := range map[string]string{
		`{"workspaces":["relative/ws"]}`: `workspace "relative/ws": want an absolute path`,
		`{"workspace":["/x"]}`:           `(want {"workspaces": ["/absolute/path", ...]})`,
	} {
		writeFile(t, filepath.Join(conf, "trusted.json"), bad)
		_, err = loadConfig(conf, ws, false)
		require.ErrorContains(t, err, filepath.Join(conf, "trusted.json")+": ")
		require.ErrorContains(t, err, want)
	}
	require.NoError(t, os.Remove(filepath.Join(conf, "trusted.json")))
	writeFile(t, filepath.Join(conf, "permissions.json"), `{"rules":[{"tool":"shell","action":"maybe"}]}`)
	_, err = loadConfig(conf, ws, false)
	require.ErrorContains(t, err, filepath.Join(conf, "permissions.json")+": ")

	// A config directory in the workspace would be the model's to write.
	_, err = loadConfig(filepath.Join(ws, "conf"), ws, false)
	require.ErrorContains(t, err, "the config directory "+filepath.Join(ws, "conf")+" lies inside the workspace "+ws)

	// No directory at all: no configuration, not an error.
	cfg, err = loadConfig(filepath.Join(realTemp(t), "missing"), ws, false)
	require.NoError(t, err)
	require.Empty(t, cfg.Rules)
	require.Empty(t, cfg.MCP.Servers)
	require.Nil(t, cfg.Prices)
}

func serverNames(cfg workerConfig) []string {
	var out []string
	for n := range cfg.MCP.Servers {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// The worker refuses to start with its state inside the workspace: Run
// says so, naming both, before it dials Temporal.
func TestRunRefusesStateInWorkspace(t *testing.T) {
	t.Parallel()
	ws := realTemp(t)
	m, err := ParseFlags([]string{"--workspace", ws, "--state-dir", filepath.Join(ws, ".state"), "--config", realTemp(t)}, env(nil))
	require.NoError(t, err)
	err = m.Run()
	require.EqualError(t, err, "the state directory "+filepath.Join(ws, ".state")+" lies inside the workspace "+ws+
		", where the model could read and change it: choose a --state-dir outside the workspace")

	m, err = ParseFlags([]string{"--workspace", ws}, env(nil))
	require.NoError(t, err)
	require.ErrorContains(t, m.Run(), "no state directory: HOME and XDG_STATE_HOME are unset; set --state-dir or LONGRUN_STATE_DIR")
}

// prepare wires the directories into the tools and the model's prices.
func TestPrepare(t *testing.T) {
	t.Parallel()
	ws, state, conf := realTemp(t), filepath.Join(realTemp(t), "state"), realTemp(t)
	writeFile(t, filepath.Join(conf, "prices.json"), `{"my-model":{"input":1,"output":2}}`)
	writeFile(t, filepath.Join(ws, ".longrun", "permissions.json"), `{"rules":[]}`)
	m, err := ParseFlags([]string{"--workspace", ws, "--state-dir", state, "--config", conf}, env(nil))
	require.NoError(t, err)
	logs := &strings.Builder{}
	cfg, err := m.prepare(ws, slog.New(slog.NewTextHandler(logs, nil)))
	require.NoError(t, err)
	require.False(t, cfg.Trusted)
	require.Equal(t, state, m.Tools.StateDir)
	require.Equal(t, conf, m.Tools.ConfigDir, "the config directory is hidden in the sandbox")
	require.Equal(t, 1.0, m.Model.Prices["my-model"].Input)
	require.Contains(t, logs.String(), ".longrun/permissions.json ignored: the workspace is not trusted; see README Security model")

	// --prices wins over the directory's prices.json.
	prices := filepath.Join(realTemp(t), "p.json")
	writeFile(t, prices, `{"my-model":{"input":5,"output":6}}`)
	m, err = ParseFlags([]string{"--state-dir", state, "--config", conf, "--prices", prices}, env(nil))
	require.NoError(t, err)
	_, err = m.prepare(ws, slog.New(slog.NewTextHandler(io.Discard, nil)))
	require.NoError(t, err)
	require.Equal(t, 5.0, m.Model.Prices["my-model"].Input)
	require.Equal(t, tools.DefaultMaxSpillBytes, int(m.Tools.Shell.MaxSpillBytes))
}

// --pass-env / LONGRUN_PASS_ENV fill ShellConfig.PassEnv: the variables
// commands get besides the allowlist.
func TestPassEnvFlag(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Empty(t, m.Tools.Shell.PassEnv)

	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_PASS_ENV": "NPM_CONFIG_REGISTRY, DEBUG=1,,"}))
	require.NoError(t, err)
	require.Equal(t, []string{"NPM_CONFIG_REGISTRY", "DEBUG=1"}, m.Tools.Shell.PassEnv)

	m, err = ParseFlags([]string{"--pass-env", "A=x=y,B"}, env(map[string]string{"LONGRUN_PASS_ENV": "C"}))
	require.NoError(t, err)
	require.Equal(t, []string{"A=x=y", "B"}, m.Tools.Shell.PassEnv, "the flag wins over the environment")

	_, err = ParseFlags([]string{"--pass-env", "GOOD,bad name"}, env(nil))
	require.ErrorContains(t, err, `"bad name" is not a variable name`)
	_, err = ParseFlags([]string{"--pass-env", "=v"}, env(nil))
	require.ErrorContains(t, err, "is not a variable name")
}

func TestGuardianConfig(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, m.Guardian.Timeout)
	require.Empty(t, m.Guardian.Model, "default: the session's model")
	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_GUARDIAN_MODEL": "judge", "LONGRUN_GUARDIAN_TIMEOUT": "5s"}))
	require.NoError(t, err)
	require.Equal(t, "judge", m.Guardian.Model)
	require.Equal(t, 5*time.Second, m.Guardian.Timeout)
	m, err = ParseFlags([]string{"--guardian-model", "other", "--guardian-timeout", "2s"}, env(map[string]string{"LONGRUN_GUARDIAN_MODEL": "judge"}))
	require.NoError(t, err)
	require.Equal(t, "other", m.Guardian.Model)
	require.Equal(t, 2*time.Second, m.Guardian.Timeout)
	_, err = ParseFlags(nil, env(map[string]string{"LONGRUN_GUARDIAN_TIMEOUT": "soon"}))
	require.ErrorContains(t, err, "LONGRUN_GUARDIAN_TIMEOUT")
	_, err = ParseFlags([]string{"--guardian-timeout", "0s"}, env(nil))
	require.ErrorContains(t, err, "--guardian-timeout")

	ws, conf := realTemp(t), realTemp(t)
	cfg, err := loadConfig(conf, ws, false)
	require.NoError(t, err)
	require.Empty(t, cfg.GuardianPrompt, "none: the built-in prompt")
	writeFile(t, filepath.Join(conf, "guardian.md"), "house rules\n")
	cfg, err = loadConfig(conf, ws, false)
	require.NoError(t, err)
	require.Equal(t, "house rules\n", cfg.GuardianPrompt)
	writeFile(t, filepath.Join(conf, "guardian.md"), " \n")
	_, err = loadConfig(conf, ws, false)
	require.ErrorContains(t, err, "guardian.md is empty")
}

// --checkpoint-remote, else LONGRUN_CHECKPOINT_REMOTE, names the remote
// checkpoints are pushed to; none by default.
func TestCheckpointRemoteFlag(t *testing.T) {
	t.Parallel()
	m, err := ParseFlags(nil, env(nil))
	require.NoError(t, err)
	require.Empty(t, m.CheckpointRemote)
	m, err = ParseFlags(nil, env(map[string]string{"LONGRUN_CHECKPOINT_REMOTE": "/srv/checkpoints.git"}))
	require.NoError(t, err)
	require.Equal(t, "/srv/checkpoints.git", m.CheckpointRemote)
	m, err = ParseFlags([]string{"--checkpoint-remote", "ssh://git@host/c.git"}, env(map[string]string{"LONGRUN_CHECKPOINT_REMOTE": "/srv/checkpoints.git"}))
	require.NoError(t, err)
	require.Equal(t, "ssh://git@host/c.git", m.CheckpointRemote, "the flag wins")
}

// A duration from the environment: unset is the default; a bad value,
// a negative one, or 0 where 0 means nothing, is refused with the
// variable and what to write.
func TestEnvDuration(t *testing.T) {
	t.Parallel()
	env := func(v string) func(string) string { return func(string) string { return v } }
	d, err := envDuration(env(""), "X", time.Minute, "90s", "")
	require.NoError(t, err)
	require.Equal(t, time.Minute, d)
	d, err = envDuration(env("90s"), "X", time.Minute, "90s", "")
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, d)
	d, err = envDuration(env("0"), "X", time.Minute, "90s", "stop at once")
	require.NoError(t, err)
	require.Zero(t, d)
	for _, c := range []struct{ v, zero, want string }{
		{"0", "", `X="0": want a positive duration such as 90s`},
		{"soon", "", `X="soon": want a positive duration such as 90s`},
		{"-1s", "stop at once", `X="-1s": want a duration such as 90s (0: stop at once)`},
		{"10", "stop at once", `X="10": want a duration such as 90s (0: stop at once)`},
	} {
		_, err := envDuration(env(c.v), "X", time.Minute, "90s", c.zero)
		require.EqualError(t, err, c.want)
	}
}
