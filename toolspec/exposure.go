package toolspec

import "strings"

// EditToolsFor returns the edit tools to hide from model, following
// OpenCode's rule: GPT models from gpt-5 on were trained on apply_patch and
// do better with it than with string-replacement edits, so a model id
// containing "gpt-" but neither "gpt-4" nor "oss" gets apply_patch and not
// edit or write; every other model (gpt-4.x, gpt-oss, and the open models,
// which were tuned on edit/write-style tools) gets edit and write and not
// apply_patch. Offering only one family keeps the model from mixing the two
// in one session. The id is matched case-insensitively after any provider
// prefix ("openai/gpt-5"), so a routed id picks the same tools as the bare
// one.
func EditToolsFor(model string) (hide []string) {
	id := strings.ToLower(model)
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		id = id[i+1:]
	}
	if strings.Contains(id, "gpt-") && !strings.Contains(id, "gpt-4") && !strings.Contains(id, "oss") {
		return []string{EditName, WriteName}
	}
	return []string{PatchName}
}
