package activities

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/skills"
	"github.com/longrun/longrun/tools"
)

// LoadWorkspaceConfig lists the working directory's skills only for a
// trusted workspace, the worker's always, and notes what it skipped and
// why: an untrusted workspace's skills directory, a broken skill.
func TestWorkspaceConfigListsSkills(t *testing.T) {
	t.Parallel()
	root, worker := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	write(filepath.Join(root, "app", ".longrun", "skills", "ws-skill", "SKILL.md"), "---\nname: ws-skill\ndescription: The workspace's.\n---\nbody\n")
	write(filepath.Join(worker, "release", "SKILL.md"), "---\nname: release\ndescription: Cut a release.\n---\nbody\n")
	write(filepath.Join(worker, "broken", "SKILL.md"), "no front-matter\n")
	ws, err := tools.NewWorkspace(root)
	require.NoError(t, err)
	locs := []skills.Location{{Source: skills.SourceWorker, Dir: worker}}
	release := skills.Skill{Name: "release", Description: "Cut a release.", Source: skills.SourceWorker, Path: filepath.Join(worker, "release", "SKILL.md")}
	brokenNote := "skill " + filepath.Join(worker, "broken", "SKILL.md") + " skipped: SKILL.md does not start with front-matter"

	a := New(Config{Workspace: ws})
	a = a.with(func(c *Config) { c.Worker = WorkerConfig{TrustWorkspace: true, Skills: locs} })
	wc, err := a.LoadWorkspaceConfig(context.Background(), "app")
	require.NoError(t, err)
	require.Equal(t, []skills.Skill{
		{Name: "ws-skill", Description: "The workspace's.", Source: skills.SourceWorkspace, Path: ".longrun/skills/ws-skill/SKILL.md"},
		release,
	}, wc.Skills)
	require.Len(t, wc.Notes, 1)
	require.Contains(t, wc.Notes[0], brokenNote)

	a = New(Config{Workspace: ws})
	a = a.with(func(c *Config) { c.Worker = WorkerConfig{Skills: locs} })
	wc, err = a.LoadWorkspaceConfig(context.Background(), "app")
	require.NoError(t, err)
	require.Equal(t, []skills.Skill{release}, wc.Skills, "an untrusted workspace's skills are not listed")
	require.Len(t, wc.Notes, 2)
	require.Equal(t, UntrustedNote(".longrun/skills"), wc.Notes[0])
	require.Contains(t, wc.Notes[1], brokenNote)

	a = New(Config{Workspace: ws})
	wc, err = a.LoadWorkspaceConfig(context.Background(), "")
	require.NoError(t, err)
	require.Empty(t, wc.Skills, "no skill directories, no skills")
}
