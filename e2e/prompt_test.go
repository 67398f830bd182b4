package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sm "github.com/longrun/longrun/scriptedmodel"
)

// The request the model receives starts with Longrun's default system
// prompt for the model's family, with the environment the worker found
// (working directory, branch, OS, shell, the date), then the project's
// AGENTS.md, then the session's own system prompt, then the user's
// message (issue 18, must-show 1). Started through the starter CLI, whose
// --system-mode replace sends the session's text instead of the default.
func TestDefaultSystemPromptInRequest(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Text("done"), sm.Text("done too"))
	// A checkout on a branch (git's own files, so no git binary is needed).
	require.NoError(t, os.MkdirAll(filepath.Join(e.workspace, ".git"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, ".git", "HEAD"), []byte("ref: refs/heads/prompt-e2e\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "AGENTS.md"), []byte("Always run make lint.\n"), 0o644))

	out, err := e.starter("start", "--in-place", "--id", "e2e-prompt-"+randHex(4), "--model", "claude-sonnet-4-5",
		"--system", "You work on the docs team.", "fix the typo")
	require.NoError(t, err, out)
	waitFor(t, "the first model request", 60*time.Second, func() bool { return len(e.model.Requests()) >= 1 })
	req := e.model.Requests()[0]
	require.GreaterOrEqual(t, len(req.Messages), 4)
	roles := []string{req.Messages[0].Role, req.Messages[1].Role, req.Messages[2].Role, req.Messages[3].Role}
	require.Equal(t, []string{"system", "system", "system", "user"}, roles)

	def := req.Messages[0].Content
	require.True(t, strings.HasPrefix(def, "You are Longrun, a coding agent"), def)
	require.Contains(t, def, "Use the todo list often", "the claude family's text")
	require.Contains(t, def, "Working directory: "+e.workspace)
	require.Contains(t, def, "Git: a checkout at "+e.workspace+", on branch prompt-e2e")
	require.Contains(t, def, "OS: linux/")
	require.Contains(t, def, "Shell: bash")
	require.Contains(t, def, "Date: "+time.Now().UTC().Format("2006-01-02"))
	require.Contains(t, def, "Permission profile: build; approvals: a person")
	require.Contains(t, def, "may take minutes or hours")
	require.Contains(t, def, "end with a short summary for the person", "how to end")
	require.Contains(t, req.Messages[1].Content, "Project instructions from AGENTS.md")
	require.Contains(t, req.Messages[1].Content, "Always run make lint.")
	require.Equal(t, "You work on the docs team.", req.Messages[2].Content)
	require.Equal(t, "fix the typo", req.Messages[3].Content)

	// replace: the session's text, then AGENTS.md; no default prompt.
	out, err = e.starter("start", "--in-place", "--id", "e2e-prompt-replace-"+randHex(4), "--system-mode", "replace",
		"--system", "You work on the docs team.", "fix it again")
	require.NoError(t, err, out)
	waitFor(t, "the second model request", 60*time.Second, func() bool { return len(e.model.Requests()) >= 2 })
	req = e.model.Requests()[1]
	require.Len(t, req.Messages, 3)
	require.Equal(t, "You work on the docs team.", req.Messages[0].Content)
	require.Contains(t, req.Messages[1].Content, "Always run make lint.")
	require.Equal(t, "fix it again", req.Messages[2].Content)

	out, err = e.starter("start", "--in-place", "--system-mode", "prepend", "x")
	require.Error(t, err)
	require.Contains(t, out, `--system-mode must be "append" or "replace"`)
}
