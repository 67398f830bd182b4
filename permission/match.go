package permission

import (
	"path"
	"strings"
)

// matchWildcard reports whether s matches pattern, where * matches any run of
// characters (slashes and spaces included) and ? exactly one character. A
// backslash before *, ? or another backslash makes that character literal
// (Literal writes patterns so); any other backslash is itself literal.
// It backtracks only to the last star, so it runs in O(len(pattern)*len(s)).
func matchWildcard(pattern, s string) bool {
	p, t := compileWildcard(pattern), []rune(s)
	pi, ti := 0, 0
	star, mark := -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi].kind == tokAny || (p[pi].kind == tokLit && p[pi].r == t[ti])):
			pi++
			ti++
		case pi < len(p) && p[pi].kind == tokStar:
			star, mark = pi, ti
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi].kind == tokStar {
		pi++
	}
	return pi == len(p)
}

// token kinds of a compiled wildcard.
const (
	tokLit  = iota // one literal rune
	tokAny         // ?
	tokStar        // *
)

type token struct {
	kind int
	r    rune
}

// compileWildcard splits a pattern into literal runes and wildcards,
// resolving the escapes \*, \? and \\.
func compileWildcard(pattern string) []token {
	p := []rune(pattern)
	out := make([]token, 0, len(p))
	for i := 0; i < len(p); i++ {
		switch c := p[i]; {
		case c == '\\' && i+1 < len(p) && isGlobMeta(p[i+1]):
			i++
			out = append(out, token{kind: tokLit, r: p[i]})
		case c == '*':
			out = append(out, token{kind: tokStar})
		case c == '?':
			out = append(out, token{kind: tokAny})
		default:
			out = append(out, token{kind: tokLit, r: c})
		}
	}
	return out
}

func isGlobMeta(r rune) bool { return r == '*' || r == '?' || r == '\\' }

// Literal returns a pattern that matches s and nothing else: every *, ? and
// backslash in s is escaped. It is how a remembered approval keeps the text
// the person saw without letting glob characters the model wrote widen it.
func Literal(s string) string {
	var b strings.Builder
	for _, r := range s {
		if isGlobMeta(r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// literalText reports the one text a pattern matches when it has no
// wildcard, with its escapes resolved.
func literalText(pattern string) (string, bool) {
	var b strings.Builder
	for _, tk := range compileWildcard(pattern) {
		if tk.kind != tokLit {
			return "", false
		}
		b.WriteRune(tk.r)
	}
	return b.String(), true
}

// matchCommand matches a shell pattern against one command. A pattern ending
// in " *" also matches the bare command: "git *" matches "git".
func matchCommand(pattern, cmd string) bool {
	if matchWildcard(pattern, cmd) {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, " *"); ok {
		return matchWildcard(prefix, cmd)
	}
	return false
}

// matchPath matches a path glob against a slash-separated path. * and ? stay
// within one path segment; a ** segment matches any number of segments,
// none included, so "docs/**" matches "docs", "docs/a.md" and "docs/a/b.md".
func matchPath(pattern, p string) bool {
	pat := strings.Split(pattern, "/")
	segs := strings.Split(p, "/")
	// ok[i][j]: pat[i:] matches segs[j:]; filled from the end.
	ok := make([][]bool, len(pat)+1)
	for i := range ok {
		ok[i] = make([]bool, len(segs)+1)
	}
	ok[len(pat)][len(segs)] = true
	for i := len(pat) - 1; i >= 0; i-- {
		for j := len(segs); j >= 0; j-- {
			if pat[i] == "**" {
				ok[i][j] = ok[i+1][j] || (j < len(segs) && ok[i][j+1])
				continue
			}
			ok[i][j] = j < len(segs) && matchWildcard(pat[i], segs[j]) && ok[i+1][j+1]
		}
	}
	return ok[0][0]
}

// cleanPath puts a file tool's subject in the form path patterns are written
// in: slash-separated and relative to the workspace, with "." and ".." resolved,
// so "./docs/../secrets/k" is "secrets/k".
func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	return path.Clean(p)
}

// insideWorkspace reports whether a cleaned path stays inside the workspace.
func insideWorkspace(p string) bool {
	return !strings.HasPrefix(p, "/") && p != ".." && !strings.HasPrefix(p, "../")
}

// matchesEverything reports whether a pattern matches any subject of a shell
// tool (shell) or a file tool.
func matchesEverything(pattern string, shell bool) bool {
	if shell {
		return strings.Trim(pattern, "*") == ""
	}
	return pattern == "" || pattern == "**"
}
