package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Separator joins a server's name and its tool's name into the name the
// model sees: server "github", tool "create_issue" is
// "github__create_issue". Two underscores fit OpenAI's function names
// (^[a-zA-Z0-9_-]{1,64}$), cannot appear in a server name, and so split
// back unambiguously at their first occurrence; a built-in tool never
// holds them.
const Separator = "__"

// maxNameLen is the longest function name OpenAI accepts.
const maxNameLen = 64

// ExposedName is the name the model sees for a server's tool. Characters
// OpenAI refuses (MCP allows "." and "/") become "_"; a name too long, or
// one whose cleaned form another tool of the server already took, is cut
// and given a hash of the original, so every tool keeps a distinct,
// stable name. taken holds the names already given on this server.
func ExposedName(server, tool string, taken map[string]bool) string {
	var b strings.Builder
	for _, r := range tool {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name := server + Separator + b.String()
	if len(name) <= maxNameLen && !taken[name] {
		// Stable because the server's tools are named in sorted order.
		return name
	}
	sum := sha256.Sum256([]byte(tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(name)+len(suffix) > maxNameLen {
		name = name[:maxNameLen-len(suffix)]
	}
	return name + suffix
}

// SplitName returns the server part of an exposed name, and whether the
// name has one: the cheap test of whether a call is for an MCP tool at all.
func SplitName(name string) (server string, ok bool) {
	i := strings.Index(name, Separator)
	if i <= 0 {
		return "", false
	}
	return name[:i], true
}
