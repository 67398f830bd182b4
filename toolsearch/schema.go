package toolsearch

import (
	"encoding/json"
	"sort"
)

// schemaText returns the property names and descriptions of a JSON Schema,
// nested objects and array items included, in a fixed order. A model
// looking for "a tool that takes a repository and a title" finds it by its
// parameters as much as by its description.
func schemaText(raw json.RawMessage) []string {
	var s schema
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return nil
	}
	var out []string
	s.walk(&out, 0)
	return out
}

type schema struct {
	Description string             `json:"description"`
	Properties  map[string]*schema `json:"properties"`
	Items       *schema            `json:"items"`
}

// maxDepth bounds the walk: a schema is data from an MCP server, and a
// deep one should not cost more than its first levels are worth.
const maxDepth = 8

func (s *schema) walk(out *[]string, depth int) {
	if s == nil || depth > maxDepth {
		return
	}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	sort.Strings(names) // map order is random; the document must not be
	for _, n := range names {
		p := s.Properties[n]
		*out = append(*out, n)
		if p != nil && p.Description != "" {
			*out = append(*out, p.Description)
		}
		p.walk(out, depth+1)
	}
	if s.Items != nil {
		if s.Items.Description != "" {
			*out = append(*out, s.Items.Description)
		}
		s.Items.walk(out, depth+1)
	}
}
