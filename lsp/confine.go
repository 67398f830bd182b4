package lsp

import (
	"path/filepath"
	"regexp"
	"strings"
)

// What a server says is confined to its workspace root: a publication
// about a file elsewhere is ignored, a diagnostic or hover whose text
// names a file elsewhere is dropped, and so are locations and workspace
// symbols elsewhere; a rename touching a file elsewhere is refused. A
// server reads what its sandbox shows (the checkout, read-only, and the
// host's system files, with the worker's own hidden), and where no
// sandbox runs it reads all the worker can: either way, nothing it found
// outside the session's files reaches the model through its answers.
// The cost is the standard library's and the module cache's places:
// lsp_definition of fmt.Println finds nothing to show.

// absPathRe finds absolute paths in text: a "/" at the start or after a
// space, quote, bracket or "=", then path characters. A URL's path
// (https://host/a) is not one: its "/" follows a letter or ":".
var absPathRe = regexp.MustCompile("(?:^|[\\s\"'`(<\\[{=,])(/[^\\s\"'`()<>\\[\\]{},;:]+)")

// inside reports whether file (absolute, clean) lies under root.
func inside(root, file string) bool {
	r, err := filepath.Rel(root, file)
	return err == nil && r != ".." && !strings.HasPrefix(r, "../") && !filepath.IsAbs(r)
}

// insideURI reports whether uri is a file: URI under root.
func insideURI(root, uri string) bool {
	f, ok := URIPath(uri)
	return ok && inside(root, filepath.Clean(f))
}

// namesOutside reports whether text names an absolute path outside root.
// Only paths of two components or more count ("/" alone, or "/x" as in
// "a/b /x", is prose more often than a file).
func namesOutside(root, text string) bool {
	for _, m := range absPathRe.FindAllStringSubmatch(text, -1) {
		p := filepath.Clean(m[1])
		if strings.Count(p, "/") < 2 {
			continue
		}
		if !inside(root, p) {
			return true
		}
	}
	return false
}

// confineDiagnostics keeps the diagnostics whose message names no file
// outside root.
func confineDiagnostics(root string, ds []Diagnostic) []Diagnostic {
	out := ds[:0:0]
	for _, d := range ds {
		if !namesOutside(root, d.Message) && !namesOutside(root, d.Source) {
			out = append(out, d)
		}
	}
	return out
}

// confineLocations keeps the locations under root.
func confineLocations(root string, locs []Location) []Location {
	out := locs[:0:0]
	for _, l := range locs {
		if insideURI(root, l.URI) {
			out = append(out, l)
		}
	}
	return out
}

// confineSymbols keeps the symbols without a location or with one under
// root, and whose detail names no file outside it.
func confineSymbols(root string, syms []DocumentSymbol) []DocumentSymbol {
	out := syms[:0:0]
	for _, s := range syms {
		if s.Location != nil && !insideURI(root, s.Location.URI) {
			continue
		}
		if namesOutside(root, s.Detail) || namesOutside(root, s.ContainerName) {
			continue
		}
		s.Children = confineSymbols(root, s.Children)
		out = append(out, s)
	}
	return out
}
