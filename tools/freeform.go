package tools

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// Freeform is how a tool is offered as a custom (freeform) tool to models
// that take them: the model writes the input as plain text that Grammar
// describes, instead of escaping it inside a JSON string. The text becomes
// the string argument Arg of the tool's ordinary JSON arguments, so the
// same validation and parser apply and the result is the same.
type Freeform struct {
	Name        string
	Description string
	Syntax      string // "lark" or "regex"
	Grammar     string
	Arg         string
}

// Arguments is the JSON arguments of a call whose freeform input is input.
func (f Freeform) Arguments(input string) string {
	b, err := json.Marshal(map[string]string{f.Arg: input})
	if err != nil { // a string always encodes; invalid UTF-8 is replaced
		panic(fmt.Sprintf("encode %s input: %v", f.Name, err))
	}
	return string(b)
}

// patchGrammar is Codex's Lark grammar of the apply_patch format
// (codex-rs tool_apply_patch.lark), which OpenAI's models were trained
// to write against. The parser (ParsePatch) is more lenient than it.
//
//go:embed patch.lark
var patchGrammar string

// FreeformFor returns the freeform form of the tool name, if it has one:
// apply_patch, as Codex offers it.
func FreeformFor(name string) (Freeform, bool) {
	if name != PatchName {
		return Freeform{}, false
	}
	return Freeform{
		Name: PatchName,
		Description: "This is a FREEFORM tool: send the patch itself as the input, from '*** Begin Patch' to '*** End Patch'; do not wrap it in JSON.\n\n" +
			patchDescription,
		Syntax:  "lark",
		Grammar: patchGrammar,
		Arg:     "patch",
	}, true
}
