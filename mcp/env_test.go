package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
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
	var started, waited atomic.Int32
	var launches []Launch
	hook := func(l Launch) (*Process, error) {
		mu.Lock()
		calls, envs, dirs = append(calls, l.Argv), append(envs, l.Env), append(dirs, l.Dir)
		launches = append(launches, l)
		mu.Unlock()
		p, err := ExecCommand(l)
		if err != nil {
			return nil, err
		}
		// A sandbox's Start and Wait: the Manager must use them, not
		// Cmd's, and wait exactly once when the server stops.
		p.Start = func() error { started.Add(1); return p.Cmd.Start() }
		p.Wait = func() error { waited.Add(1); return p.Cmd.Wait() }
		return p, nil
	}
	cfg := stdioConfig(t)
	off := false
	unsandboxed := cfg
	unsandboxed.Sandbox = &off
	m, err := New(Config{Servers: map[string]ServerConfig{"local": cfg, "own": unsandboxed}}, Options{Dir: dir, Command: hook})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	require.Len(t, m.Specs(context.Background(), 0), 2*testServerTools)
	require.Equal(t, int32(2), started.Load())
	require.Zero(t, waited.Load())
	require.NoError(t, m.Close())
	require.Equal(t, int32(2), waited.Load(), "Close waits for every server it started")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, calls, 2)
	sort.Slice(launches, func(i, j int) bool { return launches[i].Server < launches[j].Server })
	require.Equal(t, "local", launches[0].Server)
	require.False(t, launches[0].NoSandbox)
	require.Equal(t, "own", launches[1].Server)
	require.True(t, launches[1].NoSandbox, `"sandbox": false reaches the hook`)
	require.Equal(t, append([]string{cfg.Command}, cfg.Args...), calls[0])
	require.Equal(t, dir, dirs[0])
	require.Contains(t, envs[0], testServerEnv+"=stdio")
	require.NotContains(t, strings.Join(envs[0], "\n"), "sk-worker-secret")

	failing := func(Launch) (*Process, error) {
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
