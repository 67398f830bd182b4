package activities

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/tools"
)

// write creates root/rel with content, and its directories.
func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
}

func TestInstructions(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		files   map[string]string // relative to the workspace root
		workDir string
		path    string // "" means no instructions
		content string
	}{
		{name: "none", files: map[string]string{"sub/README.md": "x"}, workDir: "sub"},
		{name: "in the workspace root", files: map[string]string{"AGENTS.md": "root rules\n"}, path: "AGENTS.md", content: "root rules\n"},
		{name: "in the working directory", files: map[string]string{"sub/AGENTS.md": "sub rules"}, workDir: "sub", path: "sub/AGENTS.md", content: "sub rules"},
		{name: "in a parent", files: map[string]string{"AGENTS.md": "root rules", "sub/deeper/x.go": "package x"}, workDir: "sub/deeper", path: "AGENTS.md", content: "root rules"},
		{
			name:    "nearest wins",
			files:   map[string]string{"AGENTS.md": "root", "sub/AGENTS.md": "sub", "sub/deeper/x.go": "package x", "sub/deeper/other/AGENTS.md": "not on the way up"},
			workDir: "sub/deeper", path: "sub/AGENTS.md", content: "sub",
		},
		{name: "a directory named AGENTS.md is skipped", files: map[string]string{"AGENTS.md": "root", "sub/AGENTS.md/x": "x"}, workDir: "sub", path: "AGENTS.md", content: "root"},
		{name: "workdir given with a trailing slash", files: map[string]string{"sub/AGENTS.md": "sub"}, workDir: "sub/", path: "sub/AGENTS.md", content: "sub"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, root := newActs(t, nil)
			for rel, content := range tc.files {
				write(t, root, rel, content)
			}
			wc, err := a.LoadWorkspaceConfig(context.Background(), tc.workDir)
			require.NoError(t, err)
			require.Empty(t, wc.Notes)
			if tc.path == "" {
				require.Nil(t, wc.Instructions)
				return
			}
			require.Equal(t, &Instructions{Path: tc.path, Content: tc.content}, wc.Instructions)
		})
	}
}

func TestInstructionsNotOutsideTheRoot(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	write(t, base, "AGENTS.md", "above the workspace")
	write(t, base, "outside/AGENTS.md", "outside")
	write(t, base, "ws/sub/x.go", "package x")
	ws, err := tools.NewWorkspace(filepath.Join(base, "ws"))
	require.NoError(t, err)
	a := New(Config{Workspace: ws})

	wc, err := a.LoadWorkspaceConfig(context.Background(), "sub")
	require.NoError(t, err)
	require.Nil(t, wc.Instructions, "the search stops at the workspace root")

	// A symlink out is skipped with a note, and the search goes on up.
	require.NoError(t, os.Symlink(filepath.Join(base, "outside", "AGENTS.md"), filepath.Join(base, "ws", "sub", "AGENTS.md")))
	wc, err = a.LoadWorkspaceConfig(context.Background(), "sub")
	require.NoError(t, err)
	require.Nil(t, wc.Instructions)
	require.Len(t, wc.Notes, 1)
	require.Contains(t, wc.Notes[0], "sub/AGENTS.md ignored")
	require.Contains(t, wc.Notes[0], "outside the workspace")

	write(t, base, "ws/AGENTS.md", "inside")
	wc, err = a.LoadWorkspaceConfig(context.Background(), "sub")
	require.NoError(t, err)
	require.Equal(t, &Instructions{Path: "AGENTS.md", Content: "inside"}, wc.Instructions)
	require.Len(t, wc.Notes, 1)

	// A symlink to a file inside the workspace is followed.
	require.NoError(t, os.Remove(filepath.Join(base, "ws", "sub", "AGENTS.md")))
	write(t, base, "ws/docs/agents.md", "shared")
	require.NoError(t, os.Symlink(filepath.Join("..", "docs", "agents.md"), filepath.Join(base, "ws", "sub", "AGENTS.md")))
	wc, err = a.LoadWorkspaceConfig(context.Background(), "sub")
	require.NoError(t, err)
	require.Equal(t, &Instructions{Path: "sub/AGENTS.md", Content: "shared"}, wc.Instructions)
	require.Empty(t, wc.Notes)

	// A dangling one is a note, not a failure.
	require.NoError(t, os.Remove(filepath.Join(base, "ws", "sub", "AGENTS.md")))
	require.NoError(t, os.Symlink("missing.md", filepath.Join(base, "ws", "sub", "AGENTS.md")))
	wc, err = a.LoadWorkspaceConfig(context.Background(), "sub")
	require.NoError(t, err)
	require.Equal(t, "AGENTS.md", wc.Instructions.Path)
	require.Len(t, wc.Notes, 1)
}

func TestInstructionsCap(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := 0; b.Len() < 40<<10; i++ {
		b.WriteString("- rule number ")
		b.WriteString(strings.Repeat("x", i%50))
		b.WriteString("\n")
	}
	full := b.String()
	long := "a" + strings.Repeat("é", 20<<10) // one 40 KiB line; 32 KiB falls inside a rune
	cases := []struct {
		name, content string
		body          func(t *testing.T, body string)
	}{
		{"at a line boundary", full, func(t *testing.T, body string) {
			require.True(t, strings.HasPrefix(full, body))
			require.True(t, strings.HasSuffix(body, "\n"))
			require.Greater(t, len(body), MaxInstructionsBytes-100, "cut at the last line, not earlier")
		}},
		{"one long line, at a character boundary", long, func(t *testing.T, body string) {
			require.Equal(t, "a"+strings.Repeat("é", (MaxInstructionsBytes-1)/2)+"\n", body)
		}},
		{"exactly at the cap is not cut", strings.Repeat("a", MaxInstructionsBytes), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, root := newActs(t, nil)
			write(t, root, "AGENTS.md", tc.content)
			wc, err := a.LoadWorkspaceConfig(context.Background(), "")
			require.NoError(t, err)
			ins := wc.Instructions
			require.NotNil(t, ins)
			if tc.body == nil {
				require.False(t, ins.Truncated)
				require.Equal(t, tc.content, ins.Content)
				return
			}
			require.True(t, ins.Truncated)
			body, ok := strings.CutSuffix(ins.Content, "[AGENTS.md cut at 32 KiB]")
			require.True(t, ok, "ends with the marker")
			require.LessOrEqual(t, len(body), MaxInstructionsBytes+1)
			tc.body(t, body)
		})
	}
}

func TestInstructionsBesidePermissions(t *testing.T) {
	t.Parallel()
	a, root := newActs(t, nil)
	a = a.with(func(c *Config) { c.Worker = WorkerConfig{TrustWorkspace: true} })
	write(t, root, "sub/.longrun/permissions.json", `{"rules":[{"tool":"shell","pattern":"go test *","action":"allow"}]}`)
	write(t, root, "AGENTS.md", "run go test")
	wc, err := a.LoadWorkspaceConfig(context.Background(), "sub")
	require.NoError(t, err)
	require.Len(t, wc.Rules, 1)
	require.Equal(t, filepath.Join("sub", PermissionsFile), wc.Path)
	require.Equal(t, "run go test", wc.Instructions.Content)

	// A malformed permissions file still stops the session, instructions or not.
	write(t, root, "sub/.longrun/permissions.json", `not json`)
	_, err = a.LoadWorkspaceConfig(context.Background(), "sub")
	require.Error(t, err)
}
