package tools

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/skills"
)

// TestSkillTool loads a skill's instructions and a file of its folder,
// and refuses a workspace skill when the workspace is not trusted (while
// the worker's own skills still load), with a message saying why.
func TestSkillTool(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t, map[string]string{
		".longrun/skills/ws-only/SKILL.md":   "---\nname: ws-only\ndescription: From the workspace.\n---\nWorkspace instructions.\n",
		"src/main.go":                        "package main\n",
		".longrun/skills/ws-only/extra/a.md": "extra a\n",
	})
	worker := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(worker, "release", "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(worker, "release", "SKILL.md"),
		[]byte("---\nname: release\ndescription: Cut a release.\n---\n# Release\nRun scripts/tag.sh.\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(worker, "release", "scripts", "tag.sh"), []byte("git tag v1\n"), 0o644))
	locs := []skills.Location{{Source: skills.SourceWorker, Dir: worker}}
	env := Env{Workspace: ws}
	ctx := context.Background()

	trusted := NewSkill(SkillConfig{Locations: locs, TrustWorkspace: true})
	res := runTool(t, ctx, trusted, env, SkillParams{Name: "ws-only"})
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "Skill ws-only (workspace, .longrun/skills/ws-only/SKILL.md):\n\nWorkspace instructions.\n\n"+
		"Files of the skill's folder (read one with file): extra/a.md", res.Content)
	res = runTool(t, ctx, trusted, env, SkillParams{Name: "ws-only", File: "extra/a.md"})
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "extra a\n", res.Content)

	untrusted := NewSkill(SkillConfig{Locations: locs})
	res = runTool(t, ctx, untrusted, env, SkillParams{Name: "ws-only"})
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "skill ws-only is in the workspace's .longrun/skills, which is not used: the workspace is not trusted")
	require.NotContains(t, res.Content, "Workspace instructions")
	res = runTool(t, ctx, untrusted, env, SkillParams{Name: "ws-only", File: "extra/a.md"})
	require.True(t, res.IsError)
	require.NotContains(t, res.Content, "extra a")

	res = runTool(t, ctx, untrusted, env, SkillParams{Name: "release"})
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "Skill release (worker, "+filepath.Join(worker, "release", "SKILL.md")+"):\n\n# Release\nRun scripts/tag.sh.")
	require.Contains(t, res.Content, "read one with file): scripts/tag.sh")
	res = runTool(t, ctx, untrusted, env, SkillParams{Name: "release", File: "scripts/tag.sh"})
	require.Equal(t, "git tag v1\n", res.Content)
	res = runTool(t, ctx, untrusted, env, SkillParams{Name: "release", File: "../../etc/passwd"})
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "skill release: file \"../../etc/passwd\" is outside the skill's folder")

	res = runTool(t, ctx, untrusted, env, SkillParams{Name: "nope"})
	require.True(t, res.IsError)
	require.Equal(t, `no skill named "nope"; the skills are: release`, res.Content)
	res = runTool(t, ctx, trusted, env, SkillParams{Name: "nope"})
	require.True(t, res.IsError)
	require.Equal(t, `no skill named "nope"; the skills are: ws-only, release (workspace skills are read from .longrun/skills `+
		`of the working directory)`, res.Content)
	res = runTool(t, ctx, untrusted, env, SkillParams{Name: "Bad/Name"})
	require.True(t, res.IsError)
	require.Contains(t, res.Content, "is not lowercase letters")
}

// A session with a checkout of its own lists the skills of the person's
// working directory (Origin), where its configuration was read, and the
// tool loads them from there too: a skill the person has not committed is
// not in the checkout. One only the checkout has (committed, on a worker
// whose workspace lacks it) still loads; an untrusted workspace's loads
// from neither.
func TestSkillToolReadsTheOrigin(t *testing.T) {
	t.Parallel()
	origin := testWorkspace(t, map[string]string{
		".longrun/skills/fresh/SKILL.md": "---\nname: fresh\ndescription: Not committed yet.\n---\nFresh instructions.\n",
	})
	checkout := testWorkspace(t, map[string]string{
		".longrun/skills/committed/SKILL.md": "---\nname: committed\ndescription: In the branch.\n---\nCommitted instructions.\n",
	})
	env := Env{Workspace: checkout, Origin: origin}
	ctx := context.Background()
	trusted := NewSkill(SkillConfig{TrustWorkspace: true})
	res := runTool(t, ctx, trusted, env, SkillParams{Name: "fresh"})
	require.False(t, res.IsError, res.Content)
	require.Equal(t, "Skill fresh (workspace, .longrun/skills/fresh/SKILL.md):\n\nFresh instructions.", res.Content)
	res = runTool(t, ctx, trusted, env, SkillParams{Name: "committed"})
	require.False(t, res.IsError, res.Content)
	require.Contains(t, res.Content, "Committed instructions.")
	res = runTool(t, ctx, trusted, Env{Workspace: checkout}, SkillParams{Name: "fresh"})
	require.True(t, res.IsError, "without the origin the checkout alone does not have it")
	require.Equal(t, `no skill named "fresh"; the skills are: committed (workspace skills are read from .longrun/skills of the working directory)`, res.Content)

	untrusted := NewSkill(SkillConfig{})
	for _, name := range []string{"fresh", "committed"} {
		res = runTool(t, ctx, untrusted, env, SkillParams{Name: name})
		require.True(t, res.IsError, name)
		require.Contains(t, res.Content, "the workspace is not trusted", name)
		require.NotContains(t, res.Content, "Fresh instructions", name)
		require.NotContains(t, res.Content, "Committed instructions", name)
	}
}

// A long body is cut, saying so, as a long file is.
func TestSkillToolCutsALongBody(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "big"), 0o755))
	body := strings.Repeat("line of the skill\n", 2*skills.MaxFileBytes/18)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big", "SKILL.md"), []byte("---\nname: big\ndescription: d\n---\n"+body), 0o644))
	tool := NewSkill(SkillConfig{Locations: []skills.Location{{Source: skills.SourceUser, Dir: dir}}})
	res := runTool(t, context.Background(), tool, Env{Workspace: testWorkspace(t, nil)}, SkillParams{Name: "big"})
	require.False(t, res.IsError, res.Content)
	require.Less(t, len(res.Content), skills.MaxFileBytes+200)
	require.True(t, strings.HasSuffix(res.Content, "[cut at 64 KiB of "+strconv.Itoa(len(body)-1)+" bytes]"), res.Content[len(res.Content)-80:])
}
