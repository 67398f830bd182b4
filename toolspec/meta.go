package toolspec

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/longrun/longrun/permission"
)

// MetaVersion is the Spec.Meta of every built-in: its call metadata
// (LocalOK, SubjectArg, NoDoomLoop, Paths, SummaryArg, SummaryLines,
// BackgroundArg, Job, Concurrency) is declared, zero values included.
const MetaVersion = 1

// Where a call's paths are (Spec.Paths).
const (
	// PathsArg: the "path" argument, required; a call without it names no
	// path the session can know.
	PathsArg = "path"
	// PathsArgOrRoot: the "path" argument, the workspace root when empty.
	PathsArgOrRoot = "path_or_root"
	// PathsPatch: every file a patch in the "patch" argument adds,
	// updates, deletes or moves to.
	PathsPatch = "patch"
)

// What a call's subject is (Spec.SubjectKind): the permission engine's
// kinds, named here for the tools that declare them.
const (
	SubjectCommand = permission.KindCommand
	SubjectPath    = permission.KindPath
	SubjectURL     = permission.KindURL
)

// How a tool acts on background jobs (Spec.Job).
const (
	JobOne = "one"
	JobAll = "all"
)

// Subject is the call's permission subject: the string value of
// SubjectArg in args (an object already decoded), or "".
func (s Spec) Subject(args map[string]any) string {
	if s.SubjectArg == "" {
		return ""
	}
	v, _ := args[s.SubjectArg].(string)
	if s.Kind() == permission.KindURL {
		return URLHost(v)
	}
	return v
}

// Kind is the kind of the call's subject: SubjectKind as declared, or for
// a spec that does not declare one (recorded before the field existed, or
// a tool that predates it) what its other fields imply: the host of a URL
// for a web tool with a subject, a command line for a subject argument
// named "command" (the shell tool's), a path for any other subject.
func (s Spec) Kind() permission.Kind {
	switch {
	case s.SubjectKind != "":
		return s.SubjectKind
	case s.SubjectArg == "":
		return permission.KindNone
	case s.Web:
		return permission.KindURL
	case s.SubjectArg == "command":
		return permission.KindCommand
	}
	return permission.KindPath
}

// BackgroundCommand returns the command of a call that asks for a
// background job, and whether it does.
func (s Spec) BackgroundCommand(args json.RawMessage) (string, bool) {
	if s.BackgroundArg == "" {
		return "", false
	}
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return "", false
	}
	if bg, _ := m[s.BackgroundArg].(bool); !bg {
		return "", false
	}
	return s.Subject(m), true
}

// CallSummary labels a call of the tool named name in the Web UI:
// "shell: go test ./...", "read: README.md [1-200]", or the name alone
// when the spec names no label argument or the call leaves it empty. It is
// pure, so the workflow may call it; spec may be zero (an unknown tool).
func CallSummary(name string, spec Spec, args string) string {
	var m map[string]any
	_ = json.Unmarshal([]byte(args), &m)
	v, ok := m[spec.SummaryArg].(string)
	if spec.SummaryArg == "" || !ok || v == "" {
		return name
	}
	label := name + ": " + strings.ReplaceAll(v, "\n", " ")
	if spec.SummaryLines {
		label += lineWindow(m)
	}
	return TruncateLabel(label, 100)
}

// lineWindow is the line range of a call that asks for one: " [1-200]".
func lineWindow(args map[string]any) string {
	offset, hasOffset := args["offset"].(float64)
	limit, hasLimit := args["limit"].(float64)
	if !hasOffset && !hasLimit {
		return ""
	}
	if !hasOffset || offset < 1 {
		offset = 1
	}
	if !hasLimit {
		return fmt.Sprintf(" [%d-]", int(offset))
	}
	return fmt.Sprintf(" [%d-%d]", int(offset), int(offset+limit)-1)
}

// TruncateLabel cuts s to at most n bytes on a rune boundary, marking the
// cut with "…". The workflow cuts its summaries and details with it too.
func TruncateLabel(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
