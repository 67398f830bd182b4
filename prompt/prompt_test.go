package prompt

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with the rendered prompts")

// goldenEnv is a build session with a person approving, on a git
// checkout, with every built-in tool: what most sessions see.
func goldenEnv(model string) Env {
	return Env{
		Model:   model,
		WorkDir: "/srv/work/app",
		GitRoot: "/srv/work", Branch: "main",
		OS: "linux/amd64 (Debian GNU/Linux 12 (bookworm))", Shell: "bash",
		Date:    time.Date(2026, 12, 3, 17, 4, 5, 0, time.UTC),
		Sandbox: true, Profile: "build",
		ApprovalTimeout: time.Hour,
		Tools:           []string{"apply_patch", "edit", "glob", "grep", "job_output", "list", "read", "shell", "task", "todo", "write"},
		ReadTools:       []string{"glob", "grep", "list", "read"},
		AskTools:        []string{"apply_patch", "edit", "shell", "write"},
	}
}

// The rendered default prompt of each family is pinned in
// testdata/<family>.golden; go test ./prompt -update rewrites them after a
// deliberate change, and the diff is the review.
func TestGoldenPerFamily(t *testing.T) {
	t.Parallel()
	models := map[Family]string{FamilyGPT5: "gpt-5-codex", FamilyClaude: "claude-sonnet-4-5", FamilyGemini: "gemini-2.5-pro", FamilyDefault: "qwen3-coder"}
	for _, f := range Families {
		t.Run(string(f), func(t *testing.T) {
			t.Parallel()
			env := goldenEnv(models[f])
			// Each family gets the edit tools tools.EditToolsFor gives it.
			if f == FamilyGPT5 {
				env.Tools = without(env.Tools, "edit", "write")
				env.AskTools = without(env.AskTools, "edit", "write")
			} else {
				env.Tools = without(env.Tools, "apply_patch")
				env.AskTools = without(env.AskTools, "apply_patch")
			}
			require.Equal(t, f, FamilyOf(env.Model))
			got, err := Render(env)
			require.NoError(t, err)
			golden(t, string(f)+".golden", got)
		})
	}
}

// Variants of the environment change only the lines they concern.
func TestGoldenVariants(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		env  func(Env) Env
	}{
		{"plan-unattended", func(e Env) Env {
			e.Profile, e.Unattended = "plan", true
			e.Tools, e.AskTools = []string{"glob", "grep", "list", "read", "todo"}, nil
			return e
		}},
		{"auto-nosandbox-detached-subagent", func(e Env) Env {
			e.Profile, e.Sandbox, e.Network, e.SubAgent = "auto", false, true, true
			e.Branch, e.Head = "", "1a2b3c4"
			return e
		}},
		{"unknown-environment", func(e Env) Env {
			return Env{Model: e.Model, Tools: []string{"read", "shell"}, ReadTools: []string{"read"}, AskTools: []string{"shell"}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := RenderFamily(FamilyDefault, tt.env(goldenEnv("qwen3-coder")))
			require.NoError(t, err)
			golden(t, "default-"+tt.name+".golden", got)
		})
	}
}

func TestFamilyOf(t *testing.T) {
	t.Parallel()
	for model, want := range map[string]Family{
		"gpt-5": FamilyGPT5, "gpt-5-codex": FamilyGPT5, "openai/gpt-5.1-mini": FamilyGPT5, "codex-mini-latest": FamilyGPT5,
		"o4-mini": FamilyGPT5, "o3": FamilyGPT5,
		"claude-sonnet-4-5": FamilyClaude, "anthropic/claude-opus-4.1": FamilyClaude,
		"gemini-2.5-pro": FamilyGemini, "google/gemini-3-flash": FamilyGemini,
		"gpt-4.1": FamilyDefault, "gpt-oss-120b": FamilyDefault, "deepseek-chat": FamilyDefault,
		"qwen3-coder": FamilyDefault, "": FamilyDefault, "llama3.1": FamilyDefault,
	} {
		require.Equal(t, want, FamilyOf(model), model)
	}
}

// The prompt is the cache prefix of every request: the same input must
// render the same bytes.
func TestRenderIsStable(t *testing.T) {
	t.Parallel()
	a, err := Render(goldenEnv("gpt-5"))
	require.NoError(t, err)
	b, err := Render(goldenEnv("gpt-5"))
	require.NoError(t, err)
	require.Equal(t, a, b)
	require.NotContains(t, a, "\n\n\n")
	require.NotContains(t, a, "<no value>")
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got+"\n"), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "no golden file: run go test ./prompt -update")
	require.Equal(t, string(want), got+"\n", "rendered prompt differs from %s (go test ./prompt -update rewrites it)", path)
}

func without(names []string, drop ...string) []string {
	var out []string
	for _, n := range names {
		keep := true
		for _, d := range drop {
			keep = keep && n != d
		}
		if keep {
			out = append(out, n)
		}
	}
	return out
}
