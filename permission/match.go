package permission

import (
	"path"
	"strings"
)

// matchWildcard reports whether s matches pattern, where * matches any run of
// characters (slashes and spaces included) and ? exactly one character.
// It backtracks only to the last star, so it runs in O(len(pattern)*len(s)).
func matchWildcard(pattern, s string) bool {
	p, t := []rune(pattern), []rune(s)
	pi, ti := 0, 0
	star, mark := -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || (p[pi] != '*' && p[pi] == t[ti])):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
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
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
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
