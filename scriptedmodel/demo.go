package scriptedmodel

import (
	"fmt"
	"strings"
)

// Demo is the responder of the offline demo: it lists the workspace,
// reads NOTES.md first when the listing shows one (a demo run before
// wrote it, and the write tool refuses to replace a file this session has
// not read), then asks for a write and a shell command (both of which need
// approval); once their results are in, it summarises them. It plays the
// same loop a real model would, so the demo shows a real approval round
// trip with no API key, on a fresh workspace and on one a run before left.
func Demo() Responder {
	return func(req Request) (Reply, bool) {
		results := map[string]string{}
		for _, m := range req.Messages {
			if m.Role == "tool" {
				results[m.ToolCallID] = m.Content
			}
		}
		list, listed := results["demo_list"]
		_, read := results["demo_read"]
		_, wrote := results["demo_write"]
		switch {
		case !listed:
			return Reply{
				Text:      "I'll look around first.",
				ToolCalls: []Call{{ID: "demo_list", Name: "list", Arguments: `{"path": "."}`}},
			}, true
		case strings.Contains(list, "NOTES.md") && !read:
			return Reply{
				Text:      "NOTES.md is already there; I'll read it before I replace it.",
				ToolCalls: []Call{{ID: "demo_read", Name: "read", Arguments: `{"path": "NOTES.md"}`}},
			}, true
		case !wrote:
			return Reply{
				Text: "I'll write a note and check it with the shell.",
				ToolCalls: []Call{
					{ID: "demo_write", Name: "write", Arguments: `{"path": "NOTES.md", "content": "# Written by the Longrun demo\n\nThis file exists because a person approved the write.\n"}`},
					{ID: "demo_shell", Name: "shell", Arguments: `{"command": "wc -l NOTES.md > NOTES.count && cat NOTES.count && ls"}`},
				},
			}, true
		}
		var b strings.Builder
		b.WriteString("Done. Here is what happened:\n")
		for _, id := range []string{"demo_list", "demo_read", "demo_write", "demo_shell"} {
			out, ok := results[id]
			if !ok {
				continue
			}
			out = strings.TrimSpace(out)
			if len(out) > 300 {
				out = out[:300] + "…"
			}
			fmt.Fprintf(&b, "- %s: %s\n", strings.TrimPrefix(id, "demo_"), out)
		}
		return Text(b.String()), true
	}
}
