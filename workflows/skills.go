package workflows

import (
	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/skills"
	"github.com/longrun/longrun/toolspec"
)

// Skills: the workspace-config activity lists them (recorded in history);
// the session puts their names and descriptions in a system message and
// offers the tool that loads one (a tool whose spec Requires skills).
// Without skills there is neither, so the request is what it was before.

// offered reports whether the session can offer a tool of spec: one that
// requires skills only when wc lists some.
func offered(spec toolspec.Spec, wc activities.WorkspaceConfig) bool {
	return spec.Requires != toolspec.RequiresSkills || len(wc.Skills) > 0
}

// addSkills puts the list of skills in the system prompt, after the
// system messages already there (the default prompt's place is taken
// care of by addSystemPrompt). It names the tool that loads them; with no
// such tool offered the list would be of no use, so it is left out.
func (s *driver) addSkills(list []skills.Skill) {
	tool := ""
	for _, d := range s.cat.toolDefs { // in catalog order: the same on replay
		if s.cat.specs[d.Name].Requires == toolspec.RequiresSkills {
			tool = d.Name
			break
		}
	}
	text := skills.Section(list, tool)
	if tool == "" || text == "" {
		return
	}
	i := 0
	for i < len(s.Messages) && s.Messages[i].Role == conversation.RoleSystem {
		i++
	}
	msg := conversation.Message{Role: conversation.RoleSystem, Content: text}
	s.Messages = append(s.Messages[:i], append([]conversation.Message{msg}, s.Messages[i:]...)...)
}
