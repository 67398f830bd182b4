package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Point is a place a person or a model names: 1-based line and column,
// the column counted in characters (runes), as an editor shows it.
type Point struct {
	Line, Column int
}

// ToPosition converts p in text to the protocol's position (0-based,
// UTF-16 units).
func ToPosition(text string, p Point) Position {
	lines := strings.Split(text, "\n")
	if p.Line < 1 || p.Line > len(lines) {
		return Position{Line: max(p.Line-1, 0), Character: max(p.Column-1, 0)}
	}
	l := lines[p.Line-1]
	units, col := 0, 1
	for _, r := range l {
		if col >= p.Column {
			break
		}
		units += utf16.RuneLen(r)
		col++
	}
	return Position{Line: p.Line - 1, Character: units}
}

// ToPoint converts a protocol position in text back to line and column.
func ToPoint(text string, pos Position) Point {
	lines := strings.Split(text, "\n")
	if pos.Line < 0 || pos.Line >= len(lines) {
		return Point{Line: pos.Line + 1, Column: pos.Character + 1}
	}
	units, col := 0, 1
	for _, r := range lines[pos.Line] {
		if units >= pos.Character {
			break
		}
		units += utf16.RuneLen(r)
		col++
	}
	return Point{Line: pos.Line + 1, Column: col}
}

// offset is the byte offset of pos in text.
func offset(text string, pos Position) int {
	off := 0
	for i := 0; i < pos.Line; i++ {
		nl := strings.IndexByte(text[off:], '\n')
		if nl < 0 {
			return len(text)
		}
		off += nl + 1
	}
	units := 0
	for off < len(text) && units < pos.Character && text[off] != '\n' {
		r, size := utf8.DecodeRuneInString(text[off:])
		units += utf16.RuneLen(r)
		off += size
	}
	return off
}

// FindSymbol is the point of the first whole-word occurrence of name in
// text, on line when line > 0; ok is false when there is none.
func FindSymbol(text, name string, line int) (Point, bool) {
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if line > 0 && i != line-1 {
			continue
		}
		from := 0
		for {
			j := strings.Index(l[from:], name)
			if j < 0 {
				break
			}
			j += from
			before, _ := utf8.DecodeLastRuneInString(l[:j])
			after, _ := utf8.DecodeRuneInString(l[j+len(name):])
			if !isIdent(before) && !isIdent(after) {
				return Point{Line: i + 1, Column: utf8.RuneCountInString(l[:j]) + 1}, true
			}
			from = j + len(name)
		}
	}
	return Point{}, false
}

func isIdent(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func posParams(file string, pos Position) textDocumentPositionParams {
	return textDocumentPositionParams{TextDocument: textDocumentIdentifier{URI: FileURI(file)}, Position: pos}
}

// Definition is where the symbol at pos in file is defined.
func (c *Client) Definition(ctx context.Context, file string, pos Position) ([]Location, error) {
	var raw json.RawMessage
	if err := c.Request(ctx, "textDocument/definition", posParams(file, pos), &raw); err != nil {
		return nil, err
	}
	locs, err := decodeLocations(raw)
	return confineLocations(c.root, locs), err
}

// References are every use of the symbol at pos in file, its
// declaration included.
func (c *Client) References(ctx context.Context, file string, pos Position) ([]Location, error) {
	params := map[string]any{
		"textDocument": textDocumentIdentifier{URI: FileURI(file)}, "position": pos,
		"context": map[string]bool{"includeDeclaration": true},
	}
	var raw json.RawMessage
	if err := c.Request(ctx, "textDocument/references", params, &raw); err != nil {
		return nil, err
	}
	locs, err := decodeLocations(raw)
	return confineLocations(c.root, locs), err
}

// decodeLocations reads a Location, a Location[] or a LocationLink[].
func decodeLocations(raw json.RawMessage) ([]Location, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	if strings.HasPrefix(s, "{") {
		var l Location
		if err := json.Unmarshal(raw, &l); err != nil {
			return nil, fmt.Errorf("decode location: %w", err)
		}
		return []Location{l}, nil
	}
	var items []struct {
		Location
		TargetURI            string `json:"targetUri"`
		TargetSelectionRange Range  `json:"targetSelectionRange"`
	}
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("decode locations: %w", err)
	}
	out := make([]Location, 0, len(items))
	for _, it := range items {
		if it.TargetURI != "" {
			out = append(out, Location{URI: it.TargetURI, Range: it.TargetSelectionRange})
		} else {
			out = append(out, it.Location)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].URI != out[j].URI {
			return out[i].URI < out[j].URI
		}
		return out[i].Range.Start.Line < out[j].Range.Start.Line
	})
	return out, nil
}

// Hover is the server's description of the symbol at pos, as text.
func (c *Client) Hover(ctx context.Context, file string, pos Position) (string, error) {
	var res struct {
		Contents json.RawMessage `json:"contents"`
	}
	var raw json.RawMessage
	if err := c.Request(ctx, "textDocument/hover", posParams(file, pos), &raw); err != nil {
		return "", err
	}
	if s := strings.TrimSpace(string(raw)); s == "" || s == "null" {
		return "", nil
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return "", fmt.Errorf("decode hover: %w", err)
	}
	text := markupText(res.Contents)
	if namesOutside(c.root, text) {
		return "", nil // names a file that is not the session's (confine.go)
	}
	return text, nil
}

// markupText reads MarkupContent, a MarkedString or an array of them.
func markupText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var mc struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(raw, &mc) == nil && mc.Value != "" {
		return mc.Value
	}
	var arr []json.RawMessage
	if json.Unmarshal(raw, &arr) == nil {
		var parts []string
		for _, a := range arr {
			parts = append(parts, markupText(a))
		}
		return strings.Join(parts, "\n\n")
	}
	return string(raw)
}

// DocumentSymbols are the symbols of file, nested when the server says.
func (c *Client) DocumentSymbols(ctx context.Context, file string) ([]DocumentSymbol, error) {
	var out []DocumentSymbol
	err := c.Request(ctx, "textDocument/documentSymbol", map[string]any{"textDocument": textDocumentIdentifier{URI: FileURI(file)}}, &out)
	return confineSymbols(c.root, out), err
}

// WorkspaceSymbols are the symbols of the workspace matching query.
func (c *Client) WorkspaceSymbols(ctx context.Context, query string) ([]DocumentSymbol, error) {
	var out []DocumentSymbol
	err := c.Request(ctx, "workspace/symbol", map[string]string{"query": query}, &out)
	return confineSymbols(c.root, out), err
}

// Rename asks the server to rename the symbol at pos in file to newName
// and returns each changed file's new content (absolute path -> text),
// computed from the files as they are on disk. Renames that create,
// rename or delete files are refused: a patch of file contents cannot
// hold them here.
func (c *Client) Rename(ctx context.Context, file string, pos Position, newName string) (map[string]string, error) {
	params := map[string]any{"textDocument": textDocumentIdentifier{URI: FileURI(file)}, "position": pos, "newName": newName}
	var we WorkspaceEdit
	if err := c.Request(ctx, "textDocument/rename", params, &we); err != nil {
		return nil, err
	}
	edits := map[string][]TextEdit{}
	for uri, es := range we.Changes {
		edits[uri] = append(edits[uri], es...)
	}
	for _, raw := range we.DocumentChanges {
		var dc textDocumentEdit
		if err := json.Unmarshal(raw, &dc); err != nil {
			return nil, fmt.Errorf("decode rename: %w", err)
		}
		if dc.Kind != "" {
			return nil, fmt.Errorf("the rename would %s a file, which is not supported; rename the file with the shell and the symbol after", dc.Kind)
		}
		edits[dc.TextDocument.URI] = append(edits[dc.TextDocument.URI], dc.Edits...)
	}
	out := map[string]string{}
	for uri, es := range edits {
		path, ok := URIPath(uri)
		if !ok {
			return nil, fmt.Errorf("the rename touches %s, which is not a file", uri)
		}
		if !insideURI(c.root, uri) {
			return nil, fmt.Errorf("the rename touches %s, outside the workspace; rename only what the workspace declares", path)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read file %s: %w", path, err)
		}
		text, err := applyEdits(string(raw), es)
		if err != nil {
			return nil, fmt.Errorf("rename in %s: %w", path, err)
		}
		out[path] = text
	}
	return out, nil
}

// applyEdits applies non-overlapping edits to text, last first.
func applyEdits(text string, es []TextEdit) (string, error) {
	type span struct {
		from, to int
		text     string
	}
	spans := make([]span, 0, len(es))
	for _, e := range es {
		spans = append(spans, span{offset(text, e.Range.Start), offset(text, e.Range.End), e.NewText})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].from > spans[j].from })
	prev := len(text) + 1
	for _, s := range spans {
		if s.to > prev || s.from > s.to {
			return "", fmt.Errorf("the server's edits overlap")
		}
		text = text[:s.from] + s.text + text[s.to:]
		prev = s.from
	}
	return text, nil
}
