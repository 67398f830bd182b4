package tools

import (
	"encoding/json"

	"github.com/longrun/longrun/toolspec"
)

// The contract's constants and functions, by the names the tools and the
// activities write (package toolspec holds them, so the session workflow
// imports none of the implementations).
const (
	MetaVersion          = toolspec.MetaVersion
	PathsArg             = toolspec.PathsArg
	PathsArgOrRoot       = toolspec.PathsArgOrRoot
	PathsPatch           = toolspec.PathsPatch
	SubjectCommand       = toolspec.SubjectCommand
	SubjectPath          = toolspec.SubjectPath
	SubjectURL           = toolspec.SubjectURL
	JobOne               = toolspec.JobOne
	JobAll               = toolspec.JobAll
	ExposureDirect       = toolspec.ExposureDirect
	ExposureDeferred     = toolspec.ExposureDeferred
	ExposureHidden       = toolspec.ExposureHidden
	RequiresSkills       = toolspec.RequiresSkills
	ConcurrencyShared    = toolspec.ConcurrencyShared
	ConcurrencyExclusive = toolspec.ConcurrencyExclusive
	PatchAdd             = toolspec.PatchAdd
	PatchUpdate          = toolspec.PatchUpdate
	PatchDelete          = toolspec.PatchDelete
)

// ParsePatch parses an apply_patch patch (toolspec.ParsePatch).
func ParsePatch(text string) (*Patch, error) { return toolspec.ParsePatch(text) }

// ValidateArguments checks a call's arguments against the tool's schema
// (toolspec.ValidateArguments).
func ValidateArguments(spec Spec, args string) error { return toolspec.ValidateArguments(spec, args) }

// CallSummary labels a call in the Web UI (toolspec.CallSummary).
func CallSummary(name string, spec Spec, args string) string {
	return toolspec.CallSummary(name, spec, args)
}

// TruncateLabel cuts s to at most n bytes on a rune boundary
// (toolspec.TruncateLabel).
func TruncateLabel(s string, n int) string { return toolspec.TruncateLabel(s, n) }

// PathsOverlap reports whether two call paths may touch one file
// (toolspec.PathsOverlap).
func PathsOverlap(a, b string) bool { return toolspec.PathsOverlap(a, b) }

// EditToolsFor returns the edit tools to hide from a model
// (toolspec.EditToolsFor).
func EditToolsFor(model string) []string { return toolspec.EditToolsFor(model) }

// ParamsSchema generates an argument schema from a Params struct
// (toolspec.ParamsSchema).
func ParamsSchema[P any](bound func(ParamProps)) json.RawMessage {
	return toolspec.ParamsSchema[P](bound)
}
