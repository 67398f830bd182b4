package activities

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/tools"
)

func newActs(t *testing.T, model *sm.Server) (*Activities, string) {
	t.Helper()
	root := t.TempDir()
	ws, err := tools.NewWorkspace(root)
	require.NoError(t, err)
	reg := tools.NewRegistry(tools.Builtin(tools.DefaultConfig())...)
	url := ""
	if model != nil {
		url = model.URL()
	}
	return New(Config{Model: ModelConfig{BaseURL: url, APIKey: "sk-unit", DefaultModel: "m"}, Registry: reg, Workspace: ws}), root
}

func TestCallModelRoundTrip(t *testing.T) {
	t.Parallel()
	srv := sm.New(sm.Reply{Text: "thinking", ToolCalls: []sm.Call{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}}})
	defer srv.Close()
	a, _ := newActs(t, srv)
	cat, err := a.ListTools(context.Background())
	require.NoError(t, err)
	var defs []ToolDef
	for _, s := range cat.Tools {
		defs = append(defs, ToolDef{Name: s.Name, Description: s.Description, Parameters: s.Parameters})
	}
	resp, err := a.CallModel(context.Background(), ModelRequest{
		Messages: []conversation.Message{
			{Role: conversation.RoleSystem, Content: "sys"},
			{Role: conversation.RoleUser, Content: "hi"},
			{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c0", Name: "list", Arguments: "{}"}}},
			conversation.ToolMessage(conversation.ToolResult{CallID: "c0", Name: "list", Content: "a\n", Reason: conversation.ReasonRan}),
		},
		Tools: defs,
	})
	require.NoError(t, err)
	require.Equal(t, "thinking", resp.Message.Content)
	require.Equal(t, []conversation.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}}, resp.Message.ToolCalls)
	require.Equal(t, int64(120), resp.Usage.TotalTokens)

	req := srv.Requests()[0]
	require.Equal(t, "m", req.Model, "the worker's default model")
	require.Equal(t, "Bearer sk-unit", req.Header.Get("Authorization"))
	require.Len(t, req.Messages, 4)
	require.Equal(t, "c0", req.Messages[2].ToolCalls[0].ID)
	require.Equal(t, "c0", req.Messages[3].ToolCallID)
	require.Len(t, req.Tools, len(defs))
	require.NotContains(t, string(req.Raw), "read_only")
}

func TestCallModelFaults(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		reply        sm.Reply
		wantType     string
		nonRetryable bool
	}{
		{"server error", sm.Reply{Status: 500}, ErrTypeModelFault, false},
		{"rate limited", sm.Reply{Status: 429}, ErrTypeModelFault, false},
		{"bad request", sm.Reply{Status: 400}, ErrTypeModelRejected, true},
		{"unauthorized", sm.Reply{Status: 401}, ErrTypeModelRejected, true},
		{"garbage", sm.Reply{RawBody: "<html>oops"}, ErrTypeModelFault, false},
		{"no choices", sm.Reply{RawBody: `{"id":"x","object":"chat.completion","choices":[]}`}, ErrTypeModelFault, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := sm.New(tc.reply)
			defer srv.Close()
			a, _ := newActs(t, srv)
			_, err := a.CallModel(context.Background(), ModelRequest{Messages: []conversation.Message{{Role: "user", Content: "hi"}}})
			var appErr *temporal.ApplicationError
			require.True(t, errors.As(err, &appErr), "got %v", err)
			require.Equal(t, tc.wantType, appErr.Type())
			require.Equal(t, tc.nonRetryable, appErr.NonRetryable())
			require.Len(t, srv.Requests(), 1, "the client must not retry on its own")
		})
	}
}

func TestLoadWorkspaceConfig(t *testing.T) {
	t.Parallel()
	a, root := newActs(t, nil)
	a = a.with(func(c *Config) { c.Worker = WorkerConfig{TrustWorkspace: true} })
	wc, err := a.LoadWorkspaceConfig(context.Background(), "")
	require.NoError(t, err)
	require.Empty(t, wc.Rules)

	require.NoError(t, os.MkdirAll(filepath.Join(root, ".longrun"), 0o755))
	file := filepath.Join(root, ".longrun", "permissions.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"rules":[{"tool":"shell","pattern":"go test *","action":"allow"}]}`), 0o644))
	wc, err = a.LoadWorkspaceConfig(context.Background(), "")
	require.NoError(t, err)
	require.Len(t, wc.Rules, 1)

	for _, bad := range []string{`{"rules":[{"tool":"shell","action":"maybe"}]}`, `{"rulez":[]}`, `not json`} {
		require.NoError(t, os.WriteFile(file, []byte(bad), 0o644))
		_, err = a.LoadWorkspaceConfig(context.Background(), "")
		var appErr *temporal.ApplicationError
		require.True(t, errors.As(err, &appErr), bad)
		require.Equal(t, ErrTypeBadWorkspaceConfig, appErr.Type())
		require.Contains(t, appErr.Message(), "permissions.json")
	}
	_, err = a.LoadWorkspaceConfig(context.Background(), "../outside")
	require.Error(t, err)
}

// TestLoadWorkspaceConfigSaysWhetherSandboxed: a session learns from the
// recorded configuration whether a sandbox stands behind its approvals;
// a worker that never said how it runs commands counts as unsandboxed.
func TestLoadWorkspaceConfigSaysWhetherSandboxed(t *testing.T) {
	t.Parallel()
	a, _ := newActs(t, nil)
	wc, err := a.LoadWorkspaceConfig(context.Background(), "")
	require.NoError(t, err)
	require.True(t, wc.NoSandbox, "not told: fail closed")

	a = a.with(func(c *Config) { sh := tools.ShellConfig{Sandbox: tools.SandboxOff}; c.Shell = &sh })
	wc, err = a.LoadWorkspaceConfig(context.Background(), "")
	require.NoError(t, err)
	require.True(t, wc.NoSandbox, "--sandbox off")

	cfg := tools.ShellConfig{Sandbox: tools.SandboxAuto}
	if ok, why, _ := tools.CheckSandbox(cfg); !ok {
		t.Skipf("the sandboxed half needs bwrap: %s (install the bubblewrap package; .ci/run does)", why)
	}
	a = a.with(func(c *Config) { c.Shell = &cfg })
	wc, err = a.LoadWorkspaceConfig(context.Background(), "")
	require.NoError(t, err)
	require.False(t, wc.NoSandbox)
}

// TestModelReplyTooLargeFailsOnce: a reply over MaxModelReplyBytes is a
// non-retryable ModelReplyTooLarge after one request, not a result the
// server would refuse and the retry policy pay for again.
func TestModelReplyTooLargeFailsOnce(t *testing.T) {
	t.Parallel()
	for _, stream := range []bool{true, false} {
		srv := sm.New(sm.Text(strings.Repeat("x", 3<<20)))
		defer srv.Close()
		a, _ := newActs(t, srv)
		a.cfg.Model.NoStream = !stream
		_, err := a.CallModel(context.Background(), ModelRequest{Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}}})
		var appErr *temporal.ApplicationError
		require.True(t, errors.As(err, &appErr), "%v", err)
		require.Equal(t, ErrTypeModelReplyTooLarge, appErr.Type())
		require.True(t, appErr.NonRetryable())
		require.Contains(t, appErr.Message(), "more than the 1572864 a session can record")
		require.Len(t, srv.Requests(), 1)
	}
	// Just under the limit passes.
	srv := sm.New(sm.Text(strings.Repeat("x", MaxModelReplyBytes-1024)))
	defer srv.Close()
	a, _ := newActs(t, srv)
	_, err := a.CallModel(context.Background(), ModelRequest{Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}}})
	require.NoError(t, err)
}

// with returns new activities whose Config is a's as change leaves it:
// what a test of the worker's wiring would pass to New.
func (a *Activities) with(change func(*Config)) *Activities {
	cfg := a.cfg
	change(&cfg)
	return New(cfg)
}

// TestRunToolOutsideAnActivity: a tool that outlasts a heartbeat period,
// run by a caller that is not an activity (a test, the worker itself),
// finishes instead of panicking in the SDK's heartbeat: CI once lost the
// whole package that way when a slow machine let a quick call pass the
// second.
func TestRunToolOutsideAnActivity(t *testing.T) {
	t.Parallel()
	a, _ := newActs(t, nil)
	a = a.with(func(c *Config) { sh := tools.ShellConfig{Sandbox: tools.SandboxOff}; c.Shell = &sh })
	r, err := a.RunTool(context.Background(), ToolRequest{CallID: "s", Name: "shell", Arguments: json.RawMessage(`{"command":"sleep 1.5; echo done"}`)})
	require.NoError(t, err)
	require.False(t, r.IsError, "%+v", r)
	require.Contains(t, r.Content, "done")
}
