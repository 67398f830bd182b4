package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

var openAIName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func newManager(t *testing.T, servers map[string]ServerConfig) *Manager {
	t.Helper()
	m, err := New(Config{Servers: servers}, Options{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func run(t *testing.T, m *Manager, name, args string) tools.Result {
	t.Helper()
	tl, ok := m.Lookup(name)
	require.True(t, ok, name)
	res, err := tl.Run(context.Background(), tools.Env{}, json.RawMessage(args))
	require.NoError(t, err, "server failures are results, not errors")
	return res
}

func TestSpecsListsEveryToolDeferredWhenLarge(t *testing.T) {
	t.Parallel()
	ts := httpServer(t)
	m := newManager(t, map[string]ServerConfig{"kb": {URL: ts.URL}})
	specs := m.Specs(context.Background(), 10)
	require.Len(t, specs, testServerTools)
	lookups := 0
	for i, s := range specs {
		if i > 0 {
			require.Less(t, specs[i-1].Name, s.Name, "sorted")
		}
		require.Regexp(t, openAIName, s.Name)
		require.True(t, strings.HasPrefix(s.Name, "kb__"), s.Name)
		require.Equal(t, "kb", s.Server)
		require.Equal(t, tools.ExposureDeferred, s.Exposure, "74 tools in the catalog")
		require.Equal(t, 30, s.TimeoutSeconds)
		require.Equal(t, tools.MetaVersion, s.Meta, "an MCP tool declares what the session knows of it")
		require.Equal(t, "path", s.SubjectArg, "the permission rules match an MCP tool's path argument")
		require.False(t, s.LocalOK, "an MCP call never runs as a local activity")
		require.Empty(t, s.Paths, "its paths are unknown: the batch planner treats it as touching everything")
		if strings.HasPrefix(s.Name, "kb__lookup_") {
			lookups++
			require.True(t, s.ReadOnly, "readOnlyHint")
			require.NoError(t, tools.ValidateArguments(s, `{"key":"k"}`))
			err := tools.ValidateArguments(s, `{}`)
			require.ErrorContains(t, err, "field `key`: required", "the server's schema is the session's")
		} else {
			require.False(t, s.ReadOnly, "%s: no readOnlyHint means it needs approval", s.Name)
			require.NoError(t, tools.ValidateArguments(s, `{}`))
		}
	}
	require.Equal(t, 60, lookups)
	descs := map[string]bool{}
	for _, s := range specs {
		descs[s.Description] = true
	}
	require.Len(t, descs, testServerTools, "descriptions are the server's, distinct")
}

func TestSpecsExposure(t *testing.T) {
	t.Parallel()
	ts := httpServer(t)
	cases := []struct {
		name      string
		cfg       ServerConfig
		alongside int
		want      string
	}{
		{"configured direct beats size", ServerConfig{URL: ts.URL, Exposure: tools.ExposureDirect}, 10, tools.ExposureDirect},
		{"configured deferred", ServerConfig{URL: ts.URL, Exposure: tools.ExposureDeferred, Omit: omitAllBut("fail")}, 0, tools.ExposureDeferred},
		{"small catalog is direct", ServerConfig{URL: ts.URL, Omit: omitAllBut("fail", "slow")}, 23, tools.ExposureDirect},
		{"one over is deferred", ServerConfig{URL: ts.URL, Omit: omitAllBut("fail", "slow")}, 24, tools.ExposureDeferred},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			m := newManager(t, map[string]ServerConfig{"kb": c.cfg})
			specs := m.Specs(context.Background(), c.alongside)
			require.NotEmpty(t, specs)
			for _, s := range specs {
				require.Equal(t, c.want, s.Exposure, s.Name)
			}
		})
	}
}

// omitAllBut omits every test-server tool except keep.
func omitAllBut(keep ...string) []string {
	all := []string{"fail", "slow", "picture", "crash", "env"}
	for i := range 60 {
		all = append(all, fmt.Sprintf("lookup_%d", i))
	}
	var out []string
	for _, n := range all {
		if !contains(keep, n) {
			out = append(out, n)
		}
	}
	return out
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestOmit(t *testing.T) {
	t.Parallel()
	ts := httpServer(t)
	m := newManager(t, map[string]ServerConfig{"kb": {URL: ts.URL, Omit: []string{"lookup_7", "crash"}}})
	specs := m.Specs(context.Background(), 0)
	require.Len(t, specs, testServerTools-2)
	for _, s := range specs {
		require.NotContains(t, []string{"kb__lookup_7", "kb__crash"}, s.Name)
	}
	res := run(t, m, "kb__lookup_7", `{"key":"x"}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "MCP server kb has no tool kb__lookup_7")
}

func TestCall(t *testing.T) {
	t.Parallel()
	ts := httpServer(t)
	m := newManager(t, map[string]ServerConfig{"kb": {URL: ts.URL}})
	// No listing first: a worker that did not list the catalog still
	// serves the call.
	res := run(t, m, "kb__lookup_42", `{"key":"alpha"}`)
	require.Equal(t, tools.Result{Content: "table 42\nkey alpha"}, res)

	res = run(t, m, "kb__fail", `{}`)
	require.Equal(t, tools.Result{Content: "the table is locked", IsError: true}, res)

	res = run(t, m, "kb__picture", ``)
	require.Equal(t, "here it is\n[image image/png, 1234 bytes]\n[resource file:///a.bin, application/octet-stream, 10 bytes]", res.Content)
	require.False(t, res.IsError)

	res = run(t, m, "kb__nope", `{}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "MCP server kb has no tool kb__nope")

	_, ok := m.Lookup("other__lookup_1")
	require.False(t, ok, "not a configured server")
	_, ok = m.Lookup("read")
	require.False(t, ok, "a built-in")
}

func TestCallTimeout(t *testing.T) {
	t.Parallel()
	ts := httpServer(t)
	m := newManager(t, map[string]ServerConfig{"kb": {URL: ts.URL, Timeout: Duration(300 * time.Millisecond)}})
	start := time.Now()
	res := run(t, m, "kb__slow", `{}`)
	require.Less(t, time.Since(start), 5*time.Second)
	require.Equal(t, tools.Result{Content: "MCP server kb: kb__slow did not answer within 300ms", IsError: true}, res)
	// The connection survives a timeout.
	require.Equal(t, "table 1\nkey b", run(t, m, "kb__lookup_1", `{"key":"b"}`).Content)
}

func TestServerDown(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	url := "http://" + l.Addr().String() + "/mcp"
	require.NoError(t, l.Close())
	ts := httpServer(t)
	m := newManager(t, map[string]ServerConfig{
		"down": {URL: url, Timeout: Duration(2 * time.Second)},
		"gone": {Command: "/nonexistent/mcp-server"},
		"kb":   {URL: ts.URL, Omit: omitAllBut("fail")},
	})
	specs := m.Specs(context.Background(), 0)
	require.Len(t, specs, 1, "the catalog lists what it could")
	require.Equal(t, "kb__fail", specs[0].Name)

	res := run(t, m, "down__lookup_1", `{"key":"a"}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "MCP server down is unavailable: ")
	res = run(t, m, "gone__x", `{}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "MCP server gone is unavailable: ")
	require.Contains(t, res.Content, "/nonexistent/mcp-server")
}

func TestStdioRestartAfterCrash(t *testing.T) {
	t.Parallel()
	m := newManager(t, map[string]ServerConfig{"local": stdioConfig(t)})
	require.Len(t, m.Specs(context.Background(), 0), testServerTools)
	require.Equal(t, "table 3\nkey a", run(t, m, "local__lookup_3", `{"key":"a"}`).Content)

	res := run(t, m, "local__crash", `{}`)
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "MCP server local failed to run crash")

	// The next call starts the server again.
	require.Eventually(t, func() bool {
		return run(t, m, "local__lookup_4", `{"key":"b"}`).Content == "table 4\nkey b"
	}, 10*time.Second, 100*time.Millisecond)

	require.NoError(t, m.Close())
	res = run(t, m, "local__lookup_4", `{"key":"b"}`)
	require.Equal(t, tools.Result{Content: "MCP server local is unavailable: the worker is shutting down", IsError: true}, res)
}
