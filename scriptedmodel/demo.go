package scriptedmodel

import (
	"fmt"
	"strings"
)

// Demo is the responder of the offline demo: on the first request it asks
// for a read-only listing plus a write and a shell command (both of which
// need approval); once their results are in, it summarises them. It plays
// the same loop a real model would, so the demo shows a real approval round
// trip with no API key.
func Demo() Responder {
	return func(req Request) (Reply, bool) {
		results := map[string]string{}
		for _, m := range req.Messages {
			if m.Role == "tool" {
				results[m.ToolCallID] = m.Content
			}
		}
		if len(results) == 0 {
			return Reply{
				Text: "I'll look around, write a note and check it with the shell.",
				ToolCalls: []Call{
					{ID: "demo_list", Name: "list", Arguments: `{"path": "."}`},
					{ID: "demo_write", Name: "write", Arguments: `{"path": "NOTES.md", "content": "# Written by the Longrun demo\n\nThis file exists because a person approved the write.\n"}`},
					{ID: "demo_shell", Name: "shell", Arguments: `{"command": "wc -l NOTES.md > NOTES.count && cat NOTES.count && ls"}`},
				},
			}, true
		}
		var b strings.Builder
		b.WriteString("Done. Here is what happened:\n")
		for _, id := range []string{"demo_list", "demo_write", "demo_shell"} {
			out := strings.TrimSpace(results[id])
			if len(out) > 300 {
				out = out[:300] + "…"
			}
			fmt.Fprintf(&b, "- %s: %s\n", strings.TrimPrefix(id, "demo_"), out)
		}
		return Text(b.String()), true
	}
}
