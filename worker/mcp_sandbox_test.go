package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/mcp"
	"github.com/longrun/longrun/tools"
)

// probeServerEnv makes the test binary a stdio MCP server (TestMain) with
// two tools, write and read, that do what a hostile server would try.
const probeServerEnv = "LONGRUN_WORKER_TEST_MCP_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(probeServerEnv) == "stdio" {
		if err := probeServer().Run(context.Background(), &sdk.StdioTransport{}); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func probeServer() *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "probe", Version: "v0"}, nil)
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)
	answer := func(text string, err error) (*sdk.CallToolResult, error) {
		if err != nil {
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: err.Error()}}}, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
	}
	path := func(req *sdk.CallToolRequest) string {
		var args struct{ Path string }
		_ = json.Unmarshal(req.Params.Arguments, &args)
		return args.Path
	}
	s.AddTool(&sdk.Tool{Name: "write", Description: "Writes a file.", InputSchema: schema},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return answer("written", os.WriteFile(path(req), []byte("written by the MCP server"), 0o644))
		})
	s.AddTool(&sdk.Tool{Name: "read", Description: "Reads a file.", InputSchema: schema},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			b, err := os.ReadFile(path(req))
			return answer(string(b), err)
		})
	return s
}

// sandboxChildren lists this process's children that are bwrap or pasta
// (whose process name is passt or passt.avx2: pasta is passt's other name).
func sandboxChildren() map[int]string {
	out := map[int]string{}
	entries, _ := os.ReadDir("/proc")
	for _, en := range entries {
		pid, err := strconv.Atoi(en.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", en.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat) // pid (comm) state ppid ...
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		comm := s[open+1 : end]
		if f := strings.Fields(s[end+1:]); len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) &&
			(strings.HasPrefix(comm, "bwrap") || strings.HasPrefix(comm, "pasta") || strings.HasPrefix(comm, "passt")) {
			out[pid] = comm
		}
	}
	return out
}

// lockedBuffer is a log sink safe for the Manager's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestMCPServerSandboxed: a stdio MCP server started by the worker runs in
// its sandbox: it serves its tools and reads the workspace, but cannot
// write the workspace or read a file in the worker's home, and Close
// leaves no bwrap or pasta behind. Unsandboxed (the hook before this
// test), the write landed in the workspace and the home file was read.
//
// Not parallel: it counts this process's bwrap and pasta children.
func TestMCPServerSandboxed(t *testing.T) {
	tcfg := tools.DefaultConfig()
	if ok, why, _ := tools.CheckSandbox(tcfg.Shell); !ok {
		t.Skipf("the MCP sandbox test needs bwrap working: %s (install the bubblewrap package; .ci/run does)", why)
	}
	network, _ := tools.CheckSandboxNetwork(tcfg.Shell)
	ws := realTemp(t)
	// The server is this test binary, under the hidden /tmp: the sandbox
	// binds the program the worker resolved back at its place. (A copy in
	// the workspace would be refused: the model writes there.)
	server, err := os.Executable()
	require.NoError(t, err)
	writeFile(t, filepath.Join(ws, "visible.txt"), "workspace content")
	home, err := os.UserHomeDir()
	require.NoError(t, err)
	secret, err := os.CreateTemp(home, ".longrun-mcp-test-*")
	require.NoError(t, err, "the test plants a file in the worker's home")
	_, _ = secret.WriteString("hunter2")
	secret.Close()
	t.Cleanup(func() { os.Remove(secret.Name()) })

	logs := &lockedBuffer{}
	cfg := mcp.Config{Servers: map[string]mcp.ServerConfig{
		"probe": {Command: server, Args: []string{"-test.run=^$"}, Env: map[string]string{probeServerEnv: "stdio"}},
	}}
	m, err := openMCP(cfg, ws, slog.New(slog.NewTextHandler(logs, nil)), tcfg)
	require.NoError(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = m.Close()
		}
	})
	ctx := context.Background()
	var names []string
	for _, s := range m.Specs(ctx, 0) {
		names = append(names, s.Name)
	}
	require.Equal(t, []string{"probe__read", "probe__write"}, names, "the sandboxed server serves its tools; logs:\n%s", logs)
	call := func(name, path string) tools.Result {
		tl, ok := m.Lookup(name)
		require.True(t, ok)
		raw, err := json.Marshal(map[string]string{"path": path})
		require.NoError(t, err)
		res, err := tl.Run(ctx, tools.Env{}, raw)
		require.NoError(t, err)
		return res
	}

	res := call("probe__read", filepath.Join(ws, "visible.txt"))
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "workspace content", res.Content)
	res = call("probe__write", filepath.Join(ws, "planted.txt"))
	require.True(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "read-only file system")
	require.NoFileExists(t, filepath.Join(ws, "planted.txt"))
	res = call("probe__read", secret.Name())
	require.True(t, res.IsError, res.Content)
	require.NotContains(t, res.Content, "hunter2")
	require.NotContains(t, logs.String(), "runs unsandboxed")

	running := sandboxChildren()
	var comms []string
	for _, c := range running {
		comms = append(comms, c)
	}
	require.Contains(t, strings.Join(comms, " "), "bwrap", "the server runs in bwrap")
	if network {
		require.Contains(t, strings.Join(comms, " "), "pass", "the server has pasta's network")
	} else {
		t.Log("no pasta on this worker: the server's network helper is not checked")
	}
	require.NoError(t, m.Close())
	closed = true
	require.Eventually(t, func() bool {
		now := sandboxChildren()
		for pid := range running {
			if _, still := now[pid]; still {
				return false
			}
		}
		return true
	}, 5*time.Second, 20*time.Millisecond, "bwrap or pasta left after Manager.Close: %v", sandboxChildren())
}

// Where no sandbox works (here: mode off) a stdio server still runs,
// unsandboxed, and the worker says so, naming the server.
func TestMCPServerWithoutSandbox(t *testing.T) {
	t.Parallel()
	tcfg := tools.DefaultConfig()
	tcfg.Shell.Sandbox = tools.SandboxOff
	exe, err := os.Executable()
	require.NoError(t, err)
	ws := realTemp(t)
	logs := &lockedBuffer{}
	cfg := mcp.Config{Servers: map[string]mcp.ServerConfig{
		"probe": {Command: exe, Args: []string{"-test.run=^$"}, Env: map[string]string{probeServerEnv: "stdio"}},
	}}
	m, err := openMCP(cfg, ws, slog.New(slog.NewTextHandler(logs, nil)), tcfg)
	require.NoError(t, err)
	defer m.Close()
	require.Len(t, m.Specs(context.Background(), 0), 2)
	tl, ok := m.Lookup("probe__write")
	require.True(t, ok)
	res, err := tl.Run(context.Background(), tools.Env{}, json.RawMessage(`{"path":`+strconv.Quote(filepath.Join(ws, "w.txt"))+`}`))
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	require.Equal(t, 1, strings.Count(logs.String(), "MCP server runs unsandboxed, with the worker's rights: no sandbox works on this worker"), logs.String())
	require.Contains(t, logs.String(), "mcp_server=probe")
}

// TestMCPServerRunsTheHostsProgramNotTheWorkspaces cannot be parallel
// (t.Setenv). A model-written pyhelper_mcp.py in the workspace is not what
// `python3 -m pyhelper_mcp` imports (PYTHONSAFEPATH=1 keeps its working
// directory, the workspace, off sys.path), a node_modules/.bin the model made is
// not on the server's PATH, a program inside the workspace is refused,
// and a package runner (npx) starts outside the workspace. Before, the
// planted module ran as the MCP server.
func TestMCPServerRunsTheHostsProgramNotTheWorkspaces(t *testing.T) {
	python := "/usr/bin/python3"
	if _, err := os.Stat(python); err != nil {
		t.Skip("SKIPPED LOUDLY: the planted-module test needs " + python + " (.ci/run installs python3)")
	}
	ws := realTemp(t)
	planted := "import sys\nsys.stderr.write('PLANTED-RAN\\n')\nsys.exit(7)\n"
	writeFile(t, filepath.Join(ws, "pyhelper_mcp.py"), planted)
	bin := filepath.Join(ws, "node_modules", ".bin")
	writeFile(t, filepath.Join(bin, "evil-mcp"), "#!/bin/sh\necho PLANTED-RAN >&2\n")
	require.NoError(t, os.Chmod(filepath.Join(bin, "evil-mcp"), 0o755))
	// A package runner found on the host starts outside the workspace:
	// here a stand-in named npx that reports where it starts.
	host := t.TempDir()
	writeFile(t, filepath.Join(host, "npx"), "#!/bin/sh\necho \"NPX-CWD=$PWD\" >&2\n")
	require.NoError(t, os.Chmod(filepath.Join(host, "npx"), 0o755))
	t.Setenv("PATH", bin+string(filepath.ListSeparator)+os.Getenv("PATH"))
	for _, mode := range []tools.SandboxMode{tools.SandboxAuto, tools.SandboxOff} {
		tcfg := tools.DefaultConfig()
		tcfg.Shell.Sandbox = mode
		logs := &lockedBuffer{}
		cfg := mcp.Config{Servers: map[string]mcp.ServerConfig{
			"py":   {Command: python, Args: []string{"-m", "pyhelper_mcp"}},
			"npx":  {Command: "evil-mcp"},
			"path": {Command: filepath.Join(bin, "evil-mcp")},
			"run":  {Command: filepath.Join(host, "npx"), Args: []string{"-y", "some-mcp"}},
		}}
		m, err := openMCP(cfg, ws, slog.New(slog.NewTextHandler(logs, nil)), tcfg)
		require.NoError(t, err)
		require.Empty(t, m.Specs(context.Background(), 0), "sandbox %s", mode)
		require.NoError(t, m.Close())
		out := logs.String()
		require.NotContains(t, out, "PLANTED-RAN", "sandbox %s", mode)
		require.Contains(t, out, "No module named pyhelper_mcp", "sandbox %s", mode)
		require.Contains(t, out, "evil-mcp is not on the worker's PATH", "sandbox %s", mode)
		require.Contains(t, out, "inside the workspace", "sandbox %s", mode)
		require.Contains(t, out, "NPX-CWD=/", "sandbox %s", mode)
		require.NotContains(t, out, "NPX-CWD="+ws, "sandbox %s", mode)
	}
}
