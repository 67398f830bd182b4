package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// A stdio server gets PATH, HOME, LANG, LC_*, TERM, TZ and what its
// configuration's env names (${VAR} expanded there), nothing else of the
// worker's environment: not the model's key, not cloud credentials
// (issue 15 finding 8). Not parallel: it sets the worker's environment.
func TestStdioServerEnvironment(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-worker-secret")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAWORKER")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "aws-worker-secret")
	t.Setenv("UNRELATED_SETTING", "x")
	t.Setenv("LC_ALL", "C.UTF-8")
	t.Setenv("PATH", "/usr/local/bin:/usr/bin:/bin")
	t.Setenv("GH_TOKEN", "gh-named-secret")
	cfg := stdioConfig(t)
	cfg.Env["GITHUB_TOKEN"] = "${GH_TOKEN}"
	cfg.Env["PLAIN"] = "as written"
	m := newManager(t, map[string]ServerConfig{"local": cfg})
	res := run(t, m, "local__env", `{}`)
	require.False(t, res.IsError, res.Content)
	env := strings.Split(res.Content, "\n")
	require.Contains(t, env, "GITHUB_TOKEN=gh-named-secret", "a name the configuration lists, expanded")
	require.Contains(t, env, "PLAIN=as written")
	require.Contains(t, env, "PATH=/usr/local/bin:/usr/bin:/bin")
	require.Contains(t, env, "LC_ALL=C.UTF-8")
	require.Contains(t, env, testServerEnv+"=stdio")
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		require.NotContains(t, []string{"OPENAI_API_KEY", "UNRELATED_SETTING", "GH_TOKEN"}, name)
		require.False(t, strings.HasPrefix(name, "AWS_"), kv)
	}
	require.NotContains(t, res.Content, "sk-worker-secret")
	require.NotContains(t, res.Content, "aws-worker-secret")
}

// ${VAR} in a url stays literal: the worker's key never goes to the host.
// Not parallel: it sets the worker's environment.
func TestURLNotExpanded(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-worker-secret")
	srv := newTestServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	var (
		mu   sync.Mutex
		uris []string
	)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		uris = append(uris, r.RequestURI)
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	m := newManager(t, map[string]ServerConfig{"kb": {URL: ts.URL + "/mcp?key=${OPENAI_API_KEY}"}})
	require.Equal(t, "table 1\nkey a", run(t, m, "kb__lookup_1", `{"key":"a"}`).Content)
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, uris)
	for _, u := range uris {
		require.Contains(t, u, "OPENAI_API_KEY", "the url as written")
		require.NotContains(t, u, "sk-worker-secret")
	}
}

// Options.Command builds every stdio server's process (the worker's
// sandbox hook): it gets the argv, the directory and the reduced
// environment, and what it returns is what runs.
func TestCommandHook(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-worker-secret")
	dir := t.TempDir()
	var (
		mu    sync.Mutex
		calls [][]string
		envs  [][]string
		dirs  []string
	)
	hook := func(argv []string, d string, env []string) (*exec.Cmd, error) {
		mu.Lock()
		calls, envs, dirs = append(calls, argv), append(envs, env), append(dirs, d)
		mu.Unlock()
		return ExecCommand(argv, d, env)
	}
	cfg := stdioConfig(t)
	m, err := New(Config{Servers: map[string]ServerConfig{"local": cfg}}, Options{Dir: dir, Command: hook})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	require.Len(t, m.Specs(context.Background(), 0), testServerTools)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, calls, 1)
	require.Equal(t, append([]string{cfg.Command}, cfg.Args...), calls[0])
	require.Equal(t, dir, dirs[0])
	require.Contains(t, envs[0], testServerEnv+"=stdio")
	require.NotContains(t, strings.Join(envs[0], "\n"), "sk-worker-secret")

	failing := func([]string, string, []string) (*exec.Cmd, error) {
		return nil, errString("no sandbox for you")
	}
	m2, err := New(Config{Servers: map[string]ServerConfig{"local": cfg}}, Options{Dir: dir, Command: failing})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m2.Close() })
	res := run(t, m2, "local__lookup_1", `{"key":"a"}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "no sandbox for you")
}

type errString string

func (e errString) Error() string { return string(e) }
