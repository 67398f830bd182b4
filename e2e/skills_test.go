package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// writeSkillFolder makes dir/name/SKILL.md, and the other files given
// (relative to the folder).
func writeSkillFolder(t *testing.T, dir, name, desc, body string, files map[string]string) {
	t.Helper()
	files[skillFile] = "---\nname: " + name + "\ndescription: " + desc + "\n---\n" + body
	for rel, content := range files {
		p := filepath.Join(dir, name, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

const skillFile = "SKILL.md"

// skillsMessage is the request's system message listing the skills, or "".
func skillsMessage(req sm.Request) string {
	for _, m := range req.Messages {
		if m.Role == "system" && strings.HasPrefix(m.Content, "Skills: ") {
			return m.Content
		}
	}
	return ""
}

func hasTool(req sm.Request, name string) bool {
	for _, tl := range req.Tools {
		if tl.Function.Name == name {
			return true
		}
	}
	return false
}

// Skills through a real worker (issue 21, must-show 3): the worker's own
// (its configuration directory's skills/) and the user's (--skills-dirs)
// are listed in the request by name and description, and the skill tool
// loads one: its body reaches the model in the tool result. A skill in
// the workspace's .longrun/skills is neither listed nor loadable while
// the workspace is untrusted (the tool says why); once the worker trusts
// the workspace, it is listed first and loads, a file of its folder too.
func TestSkillsListedAndLoaded(t *testing.T) {
	t.Parallel()
	user := t.TempDir()
	e := newEnvWorkerEnv(t, []string{"LONGRUN_SKILLS_DIRS=" + user},
		// The untrusted session.
		sm.Tools(
			sm.Call{ID: "c_rel", Name: "skill", Arguments: `{"name": "release"}`},
			sm.Call{ID: "c_ws", Name: "skill", Arguments: `{"name": "ws-conventions"}`},
			sm.Call{ID: "c_wsf", Name: "skill", Arguments: `{"name": "ws-conventions", "file": "references/naming.md"}`},
		),
		sm.Text("ok"),
		// The trusted one.
		sm.Tools(
			sm.Call{ID: "c_ws", Name: "skill", Arguments: `{"name": "ws-conventions"}`},
			sm.Call{ID: "c_wsf", Name: "skill", Arguments: `{"name": "ws-conventions", "file": "references/naming.md"}`},
		),
		sm.Text("ok"),
		// The trusted one with a checkout of its own.
		sm.Tools(sm.Call{ID: "c_ws", Name: "skill", Arguments: `{"name": "ws-conventions"}`}),
		sm.Text("ok"),
	)
	writeSkillFolder(t, filepath.Join(e.configDir, "skills"), "release", `"Cut a release: tag, changelog, announce."`,
		"# Releasing\n\n1. Run scripts/tag.sh with the version.\n", map[string]string{"scripts/tag.sh": "git tag \"$1\"\n"})
	writeSkillFolder(t, user, "pdf-forms", "Fill in PDF forms.", "Use pdftk.\n", map[string]string{})
	writeSkillFolder(t, filepath.Join(e.workspace, ".longrun", "skills"), "ws-conventions", "The project's naming conventions.",
		"Name things as references/naming.md says.\n", map[string]string{"references/naming.md": "Use kebab-case for files.\n"})

	id := e.start(workflows.SessionInput{Prompt: "release v1.2"})
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	reqs := e.model.Requests()
	require.Len(t, reqs, 2)
	list := skillsMessage(reqs[0])
	require.Contains(t, list, "call `skill` with its name")
	require.Contains(t, list, "- release: Cut a release: tag, changelog, announce.")
	require.Contains(t, list, "- pdf-forms: Fill in PDF forms.")
	require.NotContains(t, list, "ws-conventions", "an untrusted workspace's skill is not listed")
	require.True(t, hasTool(reqs[0], "skill"))

	got, ok := reqs[1].LastToolResult("c_rel")
	require.True(t, ok)
	require.Contains(t, got, "# Releasing\n\n1. Run scripts/tag.sh with the version.")
	require.Contains(t, got, "Files of the skill's folder (read one with file): scripts/tag.sh")
	got, _ = reqs[1].LastToolResult("c_ws")
	require.Contains(t, got, "skill ws-conventions is in the workspace's .longrun/skills, which is not used: the workspace is not trusted")
	require.NotContains(t, got, "Name things")
	got, _ = reqs[1].LastToolResult("c_wsf")
	require.Contains(t, got, "the workspace is not trusted")
	require.NotContains(t, got, "kebab-case")
	msgs := e.checkSession(id)
	require.False(t, resultFor(msgs, "c_rel").IsError)
	require.True(t, resultFor(msgs, "c_ws").IsError)
	recordHistory(t, id, "skills_listed_and_loaded")

	e.trustWorkspace()
	id = e.start(workflows.SessionInput{Prompt: "rename the files"})
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	reqs = e.model.Requests()
	require.Len(t, reqs, 4)
	list = skillsMessage(reqs[2])
	require.Contains(t, list, "\n\n- ws-conventions: The project's naming conventions.\n- release:", "the workspace's first")
	got, _ = reqs[3].LastToolResult("c_ws")
	require.Contains(t, got, "Skill ws-conventions (workspace, .longrun/skills/ws-conventions/SKILL.md):\n\nName things as references/naming.md says.")
	got, _ = reqs[3].LastToolResult("c_wsf")
	require.Equal(t, "Use kebab-case for files.\n", got)

	// The workspace becomes a git repository whose skill is not committed:
	// a session with a checkout of its own lists it (its configuration is
	// read from the person's working directory) and loads it from there,
	// though its checkout (a git worktree of what is committed) does not
	// hold it.
	git(t, e.workspace, "init", "-q", ".")
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "README.md"), []byte("# project\n"), 0o644))
	git(t, e.workspace, "add", "README.md")
	git(t, e.workspace, "commit", "-qm", "first")
	id = e.startIsolated(workflows.SessionInput{Prompt: "rename in a checkout"})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	require.NotEmpty(t, r.Branch, "the session had a checkout of its own")
	reqs = e.model.Requests()
	require.Len(t, reqs, 6)
	require.Contains(t, skillsMessage(reqs[4]), "- ws-conventions: The project's naming conventions.")
	got, _ = reqs[5].LastToolResult("c_ws")
	require.Contains(t, got, "Skill ws-conventions (workspace, .longrun/skills/ws-conventions/SKILL.md):\n\nName things as references/naming.md says.")
}

// A session whose worker has no skills sends neither a list nor the
// skill tool: its request is what it was before skills existed.
func TestNoSkillsNoToolNoList(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Text("ok"))
	id := e.start(workflows.SessionInput{Prompt: "hi"})
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	req := e.model.Requests()[0]
	require.Empty(t, skillsMessage(req))
	require.False(t, hasTool(req, "skill"))
	require.True(t, hasTool(req, "read"))
}
