// Package skills reads Agent Skills: folders <name>/SKILL.md holding YAML
// front-matter (at least a name and a description) and then Markdown
// instructions, the format Codex, OpenCode, Claude Code and the Agent
// Skills specification (agentskills.io) share. Other files of the folder
// (scripts/, references/, assets/) are what the body refers to.
//
// A session lists the skills it finds (name and description) in its
// system prompt and loads one on demand with the skill tool, so a skill
// costs the context its description until it is needed. The package is
// plain Go over os.Root: a skill's files are opened beneath its folder, a
// workspace's skills beneath the workspace, never through a symlink out.
package skills

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// Bounds. A skill's description is sent with every request, its body only
// when loaded; both come from files anyone could make huge.
const (
	// MaxNameLen and MaxDescriptionLen are the Agent Skills
	// specification's limits (characters).
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
	// MaxSkillBytes bounds a SKILL.md: a larger one is refused, not cut,
	// since its front-matter and body would be read half.
	MaxSkillBytes = 256 << 10
	// MaxSkills bounds how many skills one session lists: past it the
	// rest are skipped with a note.
	MaxSkills = 100
)

// Where a skill comes from, in precedence order: a skill of a name found
// in an earlier source hides those of the same name in later ones.
const (
	SourceWorkspace = "workspace" // .longrun/skills of a trusted workspace
	SourceWorker    = "worker"    // skills/ of the worker's configuration directory
	SourceUser      = "user"      // ~/.agents/skills, or --skills-dirs
)

// Skill is one skill as a session lists it, recorded in history with the
// rest of the workspace configuration.
type Skill struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source"`
	// Path is its SKILL.md, for the person reading the history: relative
	// to the working directory for a workspace skill, absolute otherwise.
	Path string `json:"path"`
}

// Meta is a SKILL.md's front-matter, the fields Longrun uses. Others
// (license, compatibility, metadata, allowed-tools, and whatever a peer
// adds) are accepted and ignored.
type Meta struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// namePattern is the specification's name: lowercase letters, digits and
// single hyphens, not at either end.
var namePattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// ValidName reports why name cannot be a skill's name, or nil. A valid
// name is also one path component, so it is safe to open by.
func ValidName(name string) error {
	switch {
	case name == "":
		return errors.New("the name is empty")
	case len(name) > MaxNameLen:
		return fmt.Errorf("the name %q is longer than %d characters", name, MaxNameLen)
	case !namePattern.MatchString(name):
		return fmt.Errorf("the name %q is not lowercase letters, digits and single hyphens (e.g. pdf-forms)", name)
	}
	return nil
}

// Parse reads a SKILL.md: the front-matter between a first line "---" and
// the next line "---", then the body. folder is the name of the folder
// holding it, which the name must equal. The errors say what to fix.
func Parse(raw []byte, folder string) (Meta, string, error) {
	var m Meta
	if len(raw) > MaxSkillBytes {
		return m, "", fmt.Errorf("%s is larger than %d KiB", FileName, MaxSkillBytes>>10)
	}
	if !utf8.Valid(raw) {
		return m, "", fmt.Errorf("%s is not UTF-8 text", FileName)
	}
	text := strings.ReplaceAll(strings.TrimPrefix(string(raw), "\uFEFF"), "\r\n", "\n")
	front, body, ok := splitFrontMatter(text)
	if !ok {
		return m, "", fmt.Errorf("%s does not start with front-matter: want a first line ---, then name: and description:, then a line ---", FileName)
	}
	// Empty front-matter is no fields, which the checks below report.
	// A line for the opening "---", so the lines YAML's errors name are
	// the file's.
	if err := yaml.Unmarshal([]byte("\n"+front), &m); err != nil {
		hint := ""
		if strings.Contains(err.Error(), "mapping values are not allowed") {
			hint = `; a value holding ": " must be quoted, e.g. description: "Use when: ..."`
		}
		// One line: the message goes in notes and logs.
		msg := strings.Join(strings.Fields(err.Error()), " ")
		return Meta{}, "", fmt.Errorf("%s front-matter is not YAML with name: and description: (%s)%s", FileName, msg, hint)
	}
	m.Name = strings.TrimSpace(m.Name)
	m.Description = strings.Join(strings.Fields(m.Description), " ")
	if err := ValidName(m.Name); err != nil {
		return Meta{}, "", fmt.Errorf("%s front-matter: %v", FileName, err)
	}
	if m.Name != folder {
		return Meta{}, "", fmt.Errorf("%s front-matter: the name %q differs from its folder's name %q: they must be the same", FileName, m.Name, folder)
	}
	switch n := utf8.RuneCountInString(m.Description); {
	case n == 0:
		return Meta{}, "", fmt.Errorf("%s front-matter: the description is empty: say what the skill does and when to use it", FileName)
	case n > MaxDescriptionLen:
		return Meta{}, "", fmt.Errorf("%s front-matter: the description is %d characters, more than %d", FileName, n, MaxDescriptionLen)
	}
	return m, strings.TrimLeft(body, "\n"), nil
}

// splitFrontMatter splits text at its front-matter: a first line "---"
// and the next line that is "---" (or "...", YAML's end of document).
func splitFrontMatter(text string) (front, body string, ok bool) {
	rest, found := strings.CutPrefix(text, "---\n")
	if !found {
		return "", "", false
	}
	if strings.HasPrefix(rest, "---\n") || rest == "---" {
		return "", strings.TrimPrefix(rest, "---"), true
	}
	for _, end := range []string{"\n---\n", "\n...\n"} {
		if i := strings.Index(rest, end); i >= 0 {
			return rest[:i+1], rest[i+len(end):], true
		}
	}
	for _, end := range []string{"\n---", "\n..."} {
		if strings.HasSuffix(rest, end) {
			return rest[:len(rest)-len(end)+1], "", true
		}
	}
	return "", "", false
}

// hasNUL reports whether b looks binary.
func hasNUL(b []byte) bool { return bytes.IndexByte(b, 0) >= 0 }
