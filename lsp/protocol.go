package lsp

import "encoding/json"

// The few Language Server Protocol 3.17 structures the client speaks.
// They are written out here rather than taken from a generated protocol
// module: the one on the module proxy (go.lsp.dev/protocol) is a large,
// unmaintained pre-1.0 tree with its own logging dependency, and the
// client needs about fifteen of its hundreds of types.

// Position is zero-based; Character counts UTF-16 code units, the
// protocol's default encoding.
type Position struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}

// Range is a half-open span of a document.
type Range struct {
	Start Position `json:"start"`
	End   Position `json:"end"`
}

// Location is a range in a document named by URI.
type Location struct {
	URI   string `json:"uri"`
	Range Range  `json:"range"`
}

// Diagnostic severities.
const (
	SeverityError       = 1
	SeverityWarning     = 2
	SeverityInformation = 3
	SeverityHint        = 4
)

// Diagnostic is one problem a server reports in a document.
type Diagnostic struct {
	Range    Range           `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"`
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

type publishDiagnosticsParams struct {
	URI         string       `json:"uri"`
	Version     *int         `json:"version,omitempty"`
	Diagnostics []Diagnostic `json:"diagnostics"`
}

type textDocumentItem struct {
	URI        string `json:"uri"`
	LanguageID string `json:"languageId"`
	Version    int    `json:"version"`
	Text       string `json:"text"`
}

type textDocumentIdentifier struct {
	URI string `json:"uri"`
}

type versionedTextDocumentIdentifier struct {
	URI     string `json:"uri"`
	Version int    `json:"version"`
}

type textDocumentPositionParams struct {
	TextDocument textDocumentIdentifier `json:"textDocument"`
	Position     Position               `json:"position"`
}

// TextEdit replaces Range with NewText.
type TextEdit struct {
	Range   Range  `json:"range"`
	NewText string `json:"newText"`
}

// WorkspaceEdit is a rename's answer: edits per document, as changes or
// as documentChanges (which may also hold file operations, refused here).
type WorkspaceEdit struct {
	Changes         map[string][]TextEdit `json:"changes,omitempty"`
	DocumentChanges []json.RawMessage     `json:"documentChanges,omitempty"`
}

type textDocumentEdit struct {
	TextDocument versionedTextDocumentIdentifier `json:"textDocument"`
	Edits        []TextEdit                      `json:"edits"`
	Kind         string                          `json:"kind,omitempty"` // set on create/rename/delete operations
}

// DocumentSymbol is a symbol of a document, with its children
// (hierarchical answer); SymbolInformation is the flat one, also used for
// workspace symbols.
type DocumentSymbol struct {
	Name           string           `json:"name"`
	Detail         string           `json:"detail,omitempty"`
	Kind           int              `json:"kind"`
	Range          Range            `json:"range"`
	SelectionRange Range            `json:"selectionRange"`
	Children       []DocumentSymbol `json:"children,omitempty"`
	// Location is set instead of the ranges in a SymbolInformation.
	Location      *Location `json:"location,omitempty"`
	ContainerName string    `json:"containerName,omitempty"`
}

// symbolKinds names LSP SymbolKind values (1-based).
var symbolKinds = []string{"", "file", "module", "namespace", "package", "class", "method", "property", "field",
	"constructor", "enum", "interface", "function", "variable", "constant", "string", "number", "boolean",
	"array", "object", "key", "null", "enum member", "struct", "event", "operator", "type parameter"}

// SymbolKindName is the readable name of an LSP SymbolKind.
func SymbolKindName(k int) string {
	if k > 0 && k < len(symbolKinds) {
		return symbolKinds[k]
	}
	return "symbol"
}
