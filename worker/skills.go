package main

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/longrun/longrun/skills"
)

// configSkills is the directory of skills in the worker's configuration
// directory: a person's, for every session of the worker.
const configSkills = "skills"

// skillsDirsOff is the --skills-dirs value for no user skill directories.
const skillsDirsOff = "off"

// defaultSkillsDirs are the user's skill directories when --skills-dirs
// is not given: ~/.agents/skills, the place the Agent Skills tools
// (Codex, OpenCode and others) share, so skills installed for them serve
// Longrun too. Longrun's own place for a person's skills is the
// configuration directory's skills/, which comes first.
func defaultSkillsDirs(getenv func(string) string) string {
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".agents", "skills")
	}
	return ""
}

// skillLocations are the worker's own skill directories, in precedence
// order: the configuration directory's skills/, then dirs (--skills-dirs:
// paths separated as in PATH, "off" for none). The workspace's come
// before both, when it is trusted (skills.Locations).
func skillLocations(configDir, dirs string) ([]skills.Location, error) {
	var locs []skills.Location
	if configDir != "" {
		abs, err := filepath.Abs(filepath.Join(configDir, configSkills))
		if err != nil {
			return nil, fmt.Errorf("--config %s: %w", configDir, err)
		}
		locs = append(locs, skills.Location{Source: skills.SourceWorker, Dir: abs})
	}
	if dirs == skillsDirsOff {
		return locs, nil
	}
	for _, d := range filepath.SplitList(dirs) {
		if d == "" {
			continue
		}
		if !filepath.IsAbs(d) {
			return nil, fmt.Errorf("--skills-dirs: %q is not an absolute path", d)
		}
		locs = append(locs, skills.Location{Source: skills.SourceUser, Dir: filepath.Clean(d)})
	}
	return locs, nil
}

// logSkills says at start which skills every session of the worker
// gets (the workspace's are per session) and which were skipped, why.
func logSkills(logger *slog.Logger, locs []skills.Location, trusted bool) {
	list, notes := skills.List(locs)
	names := make([]string, len(list))
	for i, sk := range list {
		names[i] = sk.Name
	}
	dirs := make([]string, len(locs))
	for i, l := range locs {
		dirs[i] = l.Dir
	}
	ws := "not read: the workspace is not trusted"
	if trusted {
		ws = "read first, per session"
	}
	logger.Info("skills", "dirs", dirs, "skills", names, "workspace_skills", ws)
	for _, n := range notes {
		logger.Warn(n)
	}
}
