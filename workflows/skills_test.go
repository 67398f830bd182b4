package workflows

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/skills"
	"github.com/longrun/longrun/tools"
)

// toolNames are the names of a request's tool definitions.
func toolNames(defs []activities.ToolDef) []string {
	var out []string
	for _, d := range defs {
		out = append(out, d.Name)
	}
	return out
}

// A session whose workspace configuration lists skills sends their list
// as a system message after AGENTS.md and before its own system prompt,
// and offers the tool that loads them; one without skills sends neither,
// so its request is what it was before skills existed.
func TestSkillsListedAndToolOffered(t *testing.T) {
	t.Parallel()
	wc := activities.WorkspaceConfig{
		Instructions: &activities.Instructions{Path: "AGENTS.md", Content: "Run make lint."},
		Skills: []skills.Skill{
			{Name: "release", Description: "Cut a release.", Source: skills.SourceWorker, Path: "/cfg/skills/release/SKILL.md"},
			{Name: "pdf-forms", Description: "Fill PDF forms.", Source: skills.SourceUser, Path: "/home/u/.agents/skills/pdf-forms/SKILL.md"},
		},
	}
	for _, mode := range []string{SystemPromptAppend, SystemPromptReplace} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			h := newHarnessWith(t, wc, []activities.ModelResponse{textReply("done")}, nil)
			h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", SystemPrompt: "Be brief.", SystemPromptMode: mode})
			require.NoError(t, h.env.GetWorkflowError())
			req := h.requests[0]
			var roles, texts []string
			for _, m := range req.Messages {
				roles = append(roles, m.Role)
				texts = append(texts, m.Content)
			}
			skillsAt, ownAt := 2, 3
			if mode == SystemPromptReplace {
				skillsAt, ownAt = 2, 0
				require.Equal(t, []string{"system", "system", "system", "user"}, roles)
			} else {
				require.Equal(t, []string{"system", "system", "system", "system", "user"}, roles)
			}
			require.Contains(t, texts[skillsAt-1], "Run make lint.")
			require.Equal(t, skills.Section(wc.Skills, tools.SkillName), texts[skillsAt])
			require.Contains(t, texts[skillsAt], "- release: Cut a release.\n- pdf-forms: Fill PDF forms.")
			require.Equal(t, "Be brief.", texts[ownAt])
			require.Contains(t, toolNames(req.Tools), tools.SkillName)
		})
	}

	h := newHarness(t, []activities.ModelResponse{textReply("done")}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	req := h.requests[0]
	require.NotContains(t, toolNames(req.Tools), tools.SkillName, "no skills: no skill tool")
	require.Len(t, req.Messages, 2)
	require.Equal(t, conversation.RoleUser, req.Messages[1].Role)
	require.NotContains(t, req.Messages[0].Content, "`"+tools.SkillName+"`")
}
