package mcp

import (
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/longrun/longrun/tools"
)

// maxResultBytes caps what one call returns to the model: the result is
// recorded in the session's history, and a server may answer with
// megabytes.
const maxResultBytes = 64 << 10

// toResult normalises an MCP call result into ours. Text is kept; what the
// model cannot read as text (images, audio, binary resources) is described
// by type and size so the model knows it was there; a result with no
// content but structured content gives that as JSON.
func toResult(server string, r *sdk.CallToolResult) tools.Result {
	var parts []string
	for _, c := range r.Content {
		parts = append(parts, describeContent(c))
	}
	if len(parts) == 0 && r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	text := strings.Join(parts, "\n")
	if text == "" {
		text = "(no output)"
	}
	if len(text) > maxResultBytes {
		text = text[:maxResultBytes] + fmt.Sprintf("\n[output cut: %d more bytes from MCP server %s]", len(text)-maxResultBytes, server)
	}
	return tools.Result{Content: text, IsError: r.IsError}
}

func describeContent(c sdk.Content) string {
	switch c := c.(type) {
	case *sdk.TextContent:
		return c.Text
	case *sdk.ImageContent:
		return fmt.Sprintf("[image %s, %d bytes]", or(c.MIMEType, "of unknown type"), len(c.Data))
	case *sdk.AudioContent:
		return fmt.Sprintf("[audio %s, %d bytes]", or(c.MIMEType, "of unknown type"), len(c.Data))
	case *sdk.ResourceLink:
		s := fmt.Sprintf("[resource link %s", c.URI)
		if c.Name != "" {
			s += " (" + c.Name + ")"
		}
		if c.MIMEType != "" {
			s += ", " + c.MIMEType
		}
		if c.Size != nil {
			s += fmt.Sprintf(", %d bytes", *c.Size)
		}
		return s + "]"
	case *sdk.EmbeddedResource:
		if c.Resource == nil {
			return "[resource]"
		}
		if c.Resource.Text != "" {
			return fmt.Sprintf("[resource %s]\n%s", c.Resource.URI, c.Resource.Text)
		}
		return fmt.Sprintf("[resource %s, %s, %d bytes]", c.Resource.URI, or(c.Resource.MIMEType, "of unknown type"), len(c.Resource.Blob))
	default:
		return fmt.Sprintf("[%T content]", c)
	}
}

func or(v, def string) string {
	if v != "" {
		return v
	}
	return def
}
