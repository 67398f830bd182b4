package workflows

import (
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/prompt"
	"github.com/longrun/longrun/toolsearch"
	"github.com/longrun/longrun/toolspec"
)

// addSystemPrompt builds the system messages of a new session, once, when
// the workspace configuration arrives: the default prompt rendered for the
// session's model family and environment, then the project's AGENTS.md,
// then the list of skills (skills.go), then the session's own
// system_prompt (already the first message). They
// are never re-rendered, so every request of the session starts with the
// same bytes (the provider's prompt cache) and a continue-as-new carries
// them in the transcript.
func (s *driver) addSystemPrompt(ctx workflow.Context, wc activities.WorkspaceConfig) error {
	switch s.in.SystemPromptMode {
	case "", SystemPromptAppend, SystemPromptReplace:
	default:
		return temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("system_prompt_mode %q: want %q (the session's system_prompt follows the default prompt) or %q (it replaces it)",
				s.in.SystemPromptMode, SystemPromptAppend, SystemPromptReplace),
			"InvalidSessionInput", nil)
	}
	if s.in.SystemPromptMode == SystemPromptReplace {
		s.addInstructions(wc.Instructions)
		s.addSkills(wc.Skills)
		return nil
	}
	text, err := prompt.Render(s.promptEnv(ctx, wc))
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), "DefaultPrompt", err)
	}
	// The session's own system messages move after AGENTS.md.
	i := 0
	for i < len(s.Messages) && s.Messages[i].Role == conversation.RoleSystem {
		i++
	}
	own := slices.Clone(s.Messages[:i])
	s.Messages = s.Messages[i:]
	s.addInstructions(wc.Instructions)
	s.addSkills(wc.Skills)
	j := 0
	for j < len(s.Messages) && s.Messages[j].Role == conversation.RoleSystem {
		j++
	}
	msgs := []conversation.Message{{Role: conversation.RoleSystem, Content: text}}
	msgs = append(msgs, s.Messages[:j]...)
	msgs = append(msgs, own...)
	s.Messages = append(msgs, s.Messages[j:]...)
	return nil
}

// promptEnv gathers what the default prompt says: facts the workspace
// activity recorded, the session's options, the tools it offers (after
// the profile and the model's edit tools chose), and the date from the
// workflow's clock.
func (s *driver) promptEnv(ctx workflow.Context, wc activities.WorkspaceConfig) prompt.Env {
	model := s.in.Model
	if model == "" {
		model = s.cat.defaultModel
	}
	env := prompt.Env{
		Model:      model,
		Date:       workflow.Now(ctx),
		Sandbox:    !wc.NoSandbox,
		Network:    s.in.Network,
		Profile:    s.in.Profile,
		Unattended: s.in.Approval == ApproverNone,
		SubAgent:   s.in.Parent != nil,
	}
	if env.Profile == "" {
		env.Profile = permission.ProfileBuild
	}
	if s.in.ApprovalTimeout > 0 {
		env.ApprovalTimeout = time.Duration(s.in.ApprovalTimeout)
	}
	if e := wc.Environment; e != nil {
		env.WorkDir, env.GitRoot, env.Branch, env.Head, env.OS, env.Shell = e.WorkDir, e.GitRoot, e.Branch, e.Head, e.OS, e.Shell
		s.checkoutEnvironment(&env.WorkDir, &env.GitRoot, &env.Branch, &env.Head)
	}
	// The session answers these itself: they neither read nor ask.
	own := []string{todoSpec().Name, taskSpec().Name, toolsearch.SearchSpec().Name}
	for _, d := range s.cat.toolDefs {
		env.Tools = append(env.Tools, d.Name)
		spec := s.cat.specs[d.Name]
		switch {
		case spec.Server != "" || spec.Exposure == toolspec.ExposureDeferred || slices.Contains(own, d.Name):
			// MCP tools, tools sent only once found (the job tools) and
			// the session's own are left out of the two lists.
		case spec.Web:
			// A web tool only reads but asks: neither list fits, and
			// its description says so.
		case spec.ReadOnly:
			env.ReadTools = append(env.ReadTools, d.Name)
		default:
			env.AskTools = append(env.AskTools, d.Name)
		}
	}
	slices.Sort(env.Tools)
	slices.Sort(env.ReadTools)
	slices.Sort(env.AskTools)
	return env
}
