package lsp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/lsp/lsptest"
)

func TestLoadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(s string) string {
		p := filepath.Join(dir, ConfigFile)
		require.NoError(t, os.WriteFile(p, []byte(s), 0o600))
		return p
	}
	_, err := LoadConfig(filepath.Join(dir, "none.json"))
	require.ErrorIs(t, err, ErrNoConfig)

	for name, tc := range map[string]struct{ json, err string }{
		"no command":   {`{"servers": {"ts": {"patterns": ["*.ts"]}}}`, `server ts: "command" is empty`},
		"no patterns":  {`{"servers": {"ts": {"command": "tsls"}}}`, `server ts: "patterns" is empty`},
		"bad pattern":  {`{"servers": {"ts": {"command": "tsls", "patterns": ["[*.ts"]}}}`, `pattern "[*.ts"`},
		"unknown key":  {`{"servers": {"ts": {"command": "tsls", "patterns": ["*.ts"], "cmd": "x"}}}`, `unknown field "cmd"`},
		"bad duration": {`{"servers": {}, "diagnostics_wait": "soon"}`, `diagnostics_wait`},
	} {
		_, err := LoadConfig(write(tc.json))
		require.ErrorContains(t, err, tc.err, name)
	}

	c, err := LoadConfig(write(`{"servers": {"ts": {"command": "typescript-language-server", "args": ["--stdio"], "patterns": ["*.ts", "web/*.js"]},
		"gopls": {"disabled": true}}, "diagnostics_wait": "1s"}`))
	require.NoError(t, err)
	c, err = c.WithDefaults(func(string) (string, error) { return "/usr/bin/gopls", nil })
	require.NoError(t, err)
	require.Equal(t, []string{"ts"}, c.Names(), "a disabled gopls stays off even when it is on the PATH")
	require.Equal(t, "ts", c.serverFor("src/a.ts"))
	require.Equal(t, "ts", c.serverFor("web/x.js"), "a pattern with a slash matches the path from the root")
	require.Equal(t, "", c.serverFor("lib/x.js"))
	require.Equal(t, time.Second, c.wait)

	c, err = Config{}.WithDefaults(func(string) (string, error) { return "/opt/gopls", nil })
	require.NoError(t, err)
	require.Equal(t, "/opt/gopls", c.Servers[GoplsName].Command, "gopls from the PATH is built in")
	require.Equal(t, GoplsName, c.serverFor("x/y.go"))
	c, err = Config{}.WithDefaults(func(string) (string, error) { return "", errors.New("not found") })
	require.NoError(t, err)
	require.Empty(t, c.Names())
}

func TestServerEnvKeepsGoOffTheNetworkAndCgoOff(t *testing.T) {
	t.Parallel()
	env := ServerEnv(ServerConfig{Env: map[string]string{"GOFLAGS": "-tags=x", "CGO_ENABLED": "1"}})
	require.Equal(t, []string{"GOPROXY=off", "GOTOOLCHAIN=local", "GOFLAGS=-tags=x", "CGO_ENABLED=0"}, env,
		"cgo stays off even when lsp.json turns it on: the C compiler would quote any file it can include")
	env = ServerEnv(ServerConfig{Env: map[string]string{"GOPROXY": "https://proxy.golang.org"}})
	require.Equal(t, "GOPROXY=https://proxy.golang.org", env[len(env)-2], "the server's own env may allow the proxy again")
}

func TestIdleServerIsStopped(t *testing.T) {
	gopls := lsptest.Gopls(t)
	root := goModule(t, map[string]string{"a.go": "package m\n"})
	m := NewManager(Config{Launch: testLaunch, Servers: map[string]ServerConfig{GoplsName: Gopls(gopls)}, IdleTimeout: "300ms"})
	defer m.Close()
	c, _, err := m.ForFile(context.Background(), root, filepath.Join(root, "a.go"))
	require.NoError(t, err)
	require.Len(t, m.Running(root), 1)
	require.Eventually(t, func() bool { return !c.Alive() && len(m.Running(root)) == 0 }, 20*time.Second, 50*time.Millisecond,
		"a server nobody used for idle_timeout is stopped")
	// The next use starts it again.
	c2, _, err := m.ForFile(context.Background(), root, filepath.Join(root, "a.go"))
	require.NoError(t, err)
	require.True(t, c2.Alive())
}

func TestLanguageIDFromTheExtension(t *testing.T) {
	t.Parallel()
	for file, want := range map[string]string{"a.py": "python", "stubs/a.pyi": "python", "a.ts": "typescript", "a.mts": "typescript",
		"a.tsx": "typescriptreact", "a.mjs": "javascript", "a.go": "go", "go.mod": "go.mod", "a.txt": "plaintext"} {
		require.Equal(t, want, languageID(ServerConfig{}, file), file)
	}
	require.Equal(t, "python", languageID(ServerConfig{LanguageID: "python"}, "a.txt"), "language_id wins")
}
