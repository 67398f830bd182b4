package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/skills"
)

func TestSkillLocations(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	m, err := ParseFlags(nil, env("HOME", "/home/u"))
	require.NoError(t, err)
	require.Equal(t, "/home/u/.agents/skills", m.SkillsDirs, "the shared user location by default")
	locs, err := skillLocations("/etc/longrun", m.SkillsDirs)
	require.NoError(t, err)
	require.Equal(t, []skills.Location{
		{Source: skills.SourceWorker, Dir: "/etc/longrun/skills"},
		{Source: skills.SourceUser, Dir: "/home/u/.agents/skills"},
	}, locs, "the configuration directory's first")

	m, err = ParseFlags([]string{"--skills-dirs", "/a" + string(filepath.ListSeparator) + "/b/"}, env("HOME", "/home/u", "LONGRUN_SKILLS_DIRS", "/ignored"))
	require.NoError(t, err)
	locs, err = skillLocations("/etc/longrun", m.SkillsDirs)
	require.NoError(t, err)
	require.Equal(t, []skills.Location{
		{Source: skills.SourceWorker, Dir: "/etc/longrun/skills"},
		{Source: skills.SourceUser, Dir: "/a"},
		{Source: skills.SourceUser, Dir: "/b"},
	}, locs)

	m, err = ParseFlags(nil, env("HOME", "/home/u", "LONGRUN_SKILLS_DIRS", "off"))
	require.NoError(t, err)
	locs, err = skillLocations("/etc/longrun", m.SkillsDirs)
	require.NoError(t, err)
	require.Equal(t, []skills.Location{{Source: skills.SourceWorker, Dir: "/etc/longrun/skills"}}, locs)

	_, err = skillLocations("/etc/longrun", "relative/skills")
	require.ErrorContains(t, err, `--skills-dirs: "relative/skills" is not an absolute path`)
}
