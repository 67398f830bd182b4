package workflows

import (
	"fmt"
	"strings"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/session"
	tools "github.com/longrun/longrun/toolspec" // the tool contract; renamed in one go after issue 30's merges
)

// setupPolicy reads the workspace's rules through an activity (so they are
// recorded) and builds the engine from them and the session's options.
func (s *driver) setupPolicy(ctx workflow.Context) error {
	wc, err := s.loadWorkspaceConfig(ctx)
	if err != nil {
		return fmt.Errorf("workspace permissions: %w", err)
	}
	s.notes.on = wc.Notify && s.in.Parent == nil
	approver := s.in.Approval
	if approver == "" {
		approver = permission.ApproverPerson
	}
	if wc.NoSandbox && s.in.Profile == permission.ProfileAuto {
		// auto runs commands nobody approved; without a sandbox nothing
		// would stand between them and the worker's machine.
		return temporal.NewNonRetryableApplicationError(
			"profile auto needs the shell sandbox, and the worker that loaded this session's configuration has none "+
				"(bubblewrap missing or not working, or the worker runs with --sandbox off): "+
				"start the session with profile build so a person approves each command, or run it on a worker whose sandbox works",
			ErrTypeSandboxRequired, nil)
	}
	e, err := permission.New(permission.Config{
		Profile:   s.in.Profile,
		Approver:  approver,
		NoSandbox: wc.NoSandbox,
		Layers: []permission.Layer{
			{Name: permission.LayerWorker, Rules: wc.WorkerRules},
			{Name: permission.LayerWorkspace, Rules: wc.Rules},
			{Name: permission.LayerSession, Rules: s.in.Rules},
		},
	})
	if err != nil {
		return temporal.NewNonRetryableApplicationError(fmt.Sprintf("session permissions: %v", err), "InvalidSessionInput", err)
	}
	s.engine = e
	// A tool the profile or rules deny outright is not shown at all.
	visible := s.cat.toolDefs[:0]
	for _, d := range s.cat.toolDefs {
		if e.Visible(d.Name, s.cat.specs[d.Name].Kind(), s.cat.specs[d.Name].ReadOnly) && offered(s.cat.specs[d.Name], wc) {
			visible = append(visible, d)
		}
	}
	s.cat.toolDefs = s.editToolsForModel(visible)
	if s.in.Resume == nil {
		return s.addSystemPrompt(ctx, wc) // the default prompt, AGENTS.md, the session's own (prompt.go)
	}
	return nil
}

// addInstructions puts the project's AGENTS.md in the system prompt, after
// the session's own system prompt and before the first user message, as
// Codex and OpenCode do. The activity read it, so it is in history.
func (s *driver) addInstructions(in *activities.Instructions) {
	if in == nil || strings.TrimSpace(in.Content) == "" {
		return
	}
	msg := conversation.Message{Role: conversation.RoleSystem,
		Content: fmt.Sprintf("Project instructions from %s (follow them unless the user says otherwise):\n\n%s", in.Path, in.Content)}
	i := 0
	for i < len(s.Messages) && s.Messages[i].Role == conversation.RoleSystem {
		i++
	}
	s.Messages = append(s.Messages[:i], append([]conversation.Message{msg}, s.Messages[i:]...)...)
}

// editToolsForModel keeps the edit tools the session's model works best
// with (tools.EditToolsFor: apply_patch for GPT-5-class models, edit and
// write for the rest). A model whose id the session does not know gets
// every tool.
func (s *driver) editToolsForModel(defs []activities.ToolDef) []activities.ToolDef {
	model := s.in.Model
	if model == "" {
		model = s.cat.defaultModel
	}
	if model == "" {
		return defs
	}
	hide := map[string]bool{}
	for _, n := range tools.EditToolsFor(model) {
		hide[n] = true
	}
	out := defs[:0]
	for _, d := range defs {
		if !hide[d.Name] {
			out = append(out, d)
		}
	}
	return out
}

// remember adds the approval's rule for the session and returns the other
// waiting calls it now allows (released with an approval of their own).
func (s *driver) remember(ctx workflow.Context, ap Approval, approved []int) ([]string, error) {
	var released []string
	for _, i := range approved {
		// The person's typed pattern, else exactly this call (literal).
		rule := permission.Remembered(s.batch.Calls[i].Perm, ap.Pattern)
		if err := s.engine.Remember(rule); err != nil {
			return nil, err
		}
		for _, o := range s.batch.Pending() {
			perm := s.batch.Calls[o].Perm
			if o == i || !s.engine.Covers(rule, perm) || s.engine.Decide(perm).Action != permission.Allow {
				continue
			}
			s.tell(ctx, o, session.ReleaseEvent{}) // a rule decided, not a person's look at this call
			released = append(released, s.batch.Calls[o].Call.ID)
		}
	}
	return released, nil
}
