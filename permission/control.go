package permission

import (
	"fmt"
	"path"
	"strings"
)

// controlDirs and controlFile name the control files: what configures the
// agent and the repository (permission rules, MCP servers, git hooks and
// config, the next session's instructions). They belong to a person, so a
// write to one asks in every profile, whatever the rules say.
var controlDirs = []string{".longrun", ".git"}

const controlFile = "AGENTS.md"

// IsControlPath reports whether p, a path as a tool call names it (relative
// to the session's working directory, or absolute), is or lies in a control
// file: .longrun/** or .git/** at any depth (a working directory below the
// workspace root has its own .longrun), or an AGENTS.md at any depth.
// Names are compared without case, so a case-insensitive file system gains
// no way around it. The tools use it too (tools.IsControlPath), on the path
// with every symlink followed.
func IsControlPath(p string) bool {
	p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	segs := strings.Split(p, "/")
	for _, s := range segs {
		for _, d := range controlDirs {
			if strings.EqualFold(s, d) {
				return true
			}
		}
	}
	return strings.EqualFold(segs[len(segs)-1], controlFile)
}

// controlPath returns the first control file a call that may change things
// names, or "" when it names none. A read-only tool may read them; a
// command (KindCommand) is confined by the sandbox, which mounts them
// read-only.
func controlPath(c Call) string {
	if c.ReadOnly || c.Kind == KindCommand {
		return ""
	}
	paths := c.Paths
	if c.Subject != "" {
		paths = append([]string{c.Subject}, paths...)
	}
	for _, p := range paths {
		if p != "" && IsControlPath(p) {
			return p
		}
	}
	return ""
}

// controlDecision is the ask for a write to the control file p.
func controlDecision(c Call, p string) Decision {
	return Decision{Action: Ask, Layer: LayerControl,
		Reason: fmt.Sprintf("%s is a control file: it configures the agent or the repository (permission rules, MCP servers, "+
			"git config and hooks, the next session's instructions), so a person must approve every write to it; "+
			"no rule, remembered approval or profile allows %s to change it", p, c.Tool)}
}
