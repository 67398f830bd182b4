package activities

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/lsp"
	"github.com/longrun/longrun/tools"
)

// A language server that never answers does not hold a write's result
// past the cap, and the result says the diagnostics are not available.
func TestEditResultWithABrokenServerWaitsOnlyTheCap(t *testing.T) {
	t.Parallel()
	a, _ := newActs(t, nil)
	m := lsp.NewManager(lsp.Config{
		Launch:          testLSPLaunch(),
		Servers:         map[string]lsp.ServerConfig{"mute": {Command: "sleep", Args: []string{"60"}, Patterns: []string{"*.go"}}},
		DiagnosticsWait: "500ms",
	})
	t.Cleanup(m.Close)
	a = a.with(func(c *Config) { c.LSP = m })
	start := time.Now()
	res := runTool(t, a, ToolRequest{CallID: "c_w", Name: tools.WriteName, Arguments: json.RawMessage(`{"path": "a.go", "content": "package m\n"}`)})
	require.Less(t, time.Since(start), 3*time.Second)
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "wrote 10 bytes to a.go (created)")
	require.Contains(t, res.Content, "Diagnostics not available for a.go")

	// A file no server serves gets no note.
	res = runTool(t, a, ToolRequest{CallID: "c_t", Name: tools.WriteName, Arguments: json.RawMessage(`{"path": "notes.txt", "content": "x\n"}`)})
	require.NotContains(t, res.Content, "Diagnostics")
}

// Preparing a tool that prepares nothing is the workflow's mistake: a
// non-retryable error, and nothing runs.
func TestPrepareOfAToolThatPreparesNothingFails(t *testing.T) {
	t.Parallel()
	a, root := newActs(t, nil)
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.RunTool, ToolRequest{CallID: "c", Name: tools.WriteName, Prepare: true,
		Arguments: json.RawMessage(`{"path": "x", "content": "x"}`)})
	require.ErrorContains(t, err, "prepares nothing")
	require.NoFileExists(t, filepath.Join(root, "x"))
}

// testLSPLaunch runs language servers as the worker does: in the sandbox
// where one works here, else as with --sandbox off.
func testLSPLaunch() lsp.Launch {
	mode := tools.SandboxAuto
	if ok, _, _ := tools.CheckSandbox(tools.ShellConfig{Sandbox: mode}); !ok {
		mode = tools.SandboxOff
	}
	return tools.LanguageServerLaunch(tools.Config{Shell: tools.ShellConfig{Sandbox: mode}})
}
