package permission

import "encoding/json"

// Kind is what a call's subject is, as the tool's spec declares it
// (tools.Spec.SubjectKind). The engine decides on the kind, never on a
// tool's name, so a second command tool gets the hard block and the
// read-only classifier without a line of policy code.
type Kind string

// The kinds, and what the engine does with each.
const (
	// KindNone: the call has no subject; rules match it by tool name
	// alone (an MCP tool, todo). Paths it reports (Call.Paths) are still
	// checked for control files.
	KindNone Kind = ""
	// KindCommand: the subject is a shell command line. It is hard
	// blocked (shellcmd's block list, in every profile), split into its
	// commands, each decided on its own and matched by command patterns
	// ("git *") or an exact rule for the whole line, and allowed unasked
	// when the read-only classifier says every command only reads (then
	// it runs in the read-only sandbox). A command names no control
	// file: the sandbox mounts them read-only. On a worker without a
	// sandbox it asks unless a person's rule allows it.
	KindCommand Kind = "command"
	// KindPath: the subject is a path in the workspace, matched by path
	// globs after cleaning; a write to a control file (.longrun/**,
	// .git/**, AGENTS.md) asks a person in every profile, and profile
	// auto allows only paths inside the workspace.
	KindPath Kind = "path"
	// KindURL: the subject is the host of a URL, matched by address rules:
	// host wildcards ("*.go.dev"), remembered as the literal host.
	KindURL Kind = "url"
)

// UnmarshalJSON reads a call. A call recorded before calls carried their
// kind (a batch carried across continue-as-new by an older run) has no
// "kind" key: its kind is inferred as the tools of that time declared it
// (legacyKind), so it is decided as it was when it was recorded.
func (c *Call) UnmarshalJSON(b []byte) error {
	type plain Call // no methods: no recursion
	var v struct {
		plain
		Kind *Kind `json:"kind"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*c = Call(v.plain)
	if v.Kind != nil {
		c.Kind = *v.Kind
	} else {
		c.Kind = legacyKind(*c)
	}
	return nil
}

// legacyCommandTool is the one command tool there was before tools
// declared the kind of their subject.
const legacyCommandTool = "shell"

// legacyKind is the kind of a call recorded without one: a command for the
// one command tool of that time, the host of a URL for a web call with a
// subject, a path otherwise (how the engine then treated every other
// subject). It reads old records only: every call recorded since carries
// its kind, so no new tool is ever decided by its name.
func legacyKind(c Call) Kind {
	switch {
	case c.Tool == legacyCommandTool:
		return KindCommand
	case c.Web && c.Subject != "":
		return KindURL
	case c.Subject != "":
		return KindPath
	}
	return KindNone
}
