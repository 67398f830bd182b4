package toolspec

// Names of the built-ins the session refers to: the edit tools a model
// family is not offered (EditToolsFor), the tool that loads a skill, and
// the tool whose calls are prepared before they are decided. The tools
// themselves are in package tools.
const (
	EditName      = "edit"
	WriteName     = "write"
	PatchName     = "apply_patch"
	SkillName     = "skill"
	LSPRenameName = "lsp_rename"
)
