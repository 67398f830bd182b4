package skills

import (
	"fmt"
	"strings"
)

// MaxListBytes bounds the skills' list in the system prompt: it is sent
// with every request. Skills past it are counted, not listed; the skill
// tool still loads them by name.
const MaxListBytes = 16 << 10

// Section is the system message that lists list for the model, "" when
// it is empty. It is pure (the workflow renders it from the recorded
// list, the same on every replay) and in list's order.
func Section(list []Skill, tool string) string {
	if len(list) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Skills: instructions for particular tasks, loaded when needed. When a task matches a skill's description, "+
		"call `%s` with its name to read the skill before you start, and follow it; the files it mentions are read with the same tool "+
		"(its `file` argument).\n\n", tool)
	head := b.Len()
	for i, sk := range list {
		line := fmt.Sprintf("- %s: %s\n", sk.Name, sk.Description)
		if b.Len()-head+len(line) > MaxListBytes {
			fmt.Fprintf(&b, "(%d more skills are not listed: the list is capped at %d KiB)\n", len(list)-i, MaxListBytes>>10)
			break
		}
		b.WriteString(line)
	}
	return strings.TrimRight(b.String(), "\n")
}
