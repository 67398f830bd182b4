package activities

import (
	"os"
	"path/filepath"

	"github.com/longrun/longrun/skills"
	"github.com/longrun/longrun/tools"
)

// listSkills reads the skills a session in ws lists, where its AGENTS.md
// is read: the working directory's .longrun/skills when the workspace is
// trusted, then the worker's own directories (WorkerConfig.Skills). A
// broken skill is skipped with a note; so is an untrusted workspace's
// skills directory, which is not even read.
func (a *Activities) listSkills(ws *tools.Workspace) ([]skills.Skill, []string) {
	var notes []string
	if !a.cfg.Worker.TrustWorkspace {
		if _, err := os.Lstat(filepath.Join(ws.Root(), filepath.FromSlash(skills.WorkspaceDir))); err == nil {
			notes = append(notes, UntrustedNote(skills.WorkspaceDir))
		}
	}
	list, more := skills.List(skills.Locations(ws.Root(), a.cfg.Worker.TrustWorkspace, a.cfg.Worker.Skills))
	return list, append(notes, more...)
}
