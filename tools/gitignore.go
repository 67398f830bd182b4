package tools

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Gitignore is a small matcher for one .gitignore file, enough for listing
// tools to skip what the project itself ignores (build output, vendored
// dependencies) instead of flooding the model with it. It supports comments,
// blank lines, "dir/" patterns, "*", "?", "[...]" and "**" globs, leading
// "/" anchors and "!" negation; the last matching rule wins.
type Gitignore struct {
	rules []ignoreRule
}

type ignoreRule struct {
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
}

// LoadGitignore reads root/.gitignore, beneath root (a symlink leading out
// of it is not followed). A missing file is an empty matcher, not an
// error, because most directories have none.
func LoadGitignore(root string) (*Gitignore, error) {
	p := filepath.Join(root, ".gitignore")
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("read file %s: %w", p, err)
	}
	defer r.Close()
	data, err := r.ReadFile(".gitignore")
	if errors.Is(err, fs.ErrNotExist) {
		return &Gitignore{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read file %s: %w", p, err)
	}
	return ParseGitignore(string(data)), nil
}

// ParseGitignore parses the text of a .gitignore file. Lines it cannot
// understand are skipped rather than reported: a listing should not fail
// over a pattern.
func ParseGitignore(text string) *Gitignore {
	g := &Gitignore{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if r, ok := parseIgnoreLine(sc.Text()); ok {
			g.rules = append(g.rules, r)
		}
	}
	return g
}

func parseIgnoreLine(line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	// Trailing spaces are ignored unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
		line = line[:len(line)-1]
	}
	if line == "" || strings.HasPrefix(line, "#") {
		return ignoreRule{}, false
	}
	var r ignoreRule
	if strings.HasPrefix(line, "!") {
		r.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	// A slash anywhere but the end anchors the pattern to the root;
	// otherwise it matches a name at any depth.
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	var b strings.Builder
	b.WriteString("^")
	if !anchored {
		b.WriteString("(?:.*/)?")
	}
	b.WriteString(globToRegexp(line))
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return ignoreRule{}, false
	}
	r.re = re
	return r, true
}

// globToRegexp translates one gitignore glob into a regular expression over
// slash-separated paths.
func globToRegexp(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch {
		case c == '*' && strings.HasPrefix(p[i:], "**"):
			start := i == 0 || p[i-1] == '/'
			j := i + 2
			switch {
			case start && j == len(p): // "**" at the end: everything below
				b.WriteString(".*")
			case start && p[j] == '/': // "**/": zero or more directories
				b.WriteString("(?:.*/)?")
				j++
			default: // "**" inside a name acts like "*"
				b.WriteString("[^/]*")
			}
			i = j - 1
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(p[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := p[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			class = strings.ReplaceAll(class, `\`, `\\`)
			b.WriteString("[" + class + "]")
			i += end + 1
		case c == '\\' && i+1 < len(p):
			i++
			b.WriteString(regexp.QuoteMeta(string(p[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// Ignored reports whether rel (slash-separated, relative to the directory of
// the .gitignore) is ignored. As in git, a file inside an ignored directory
// is ignored whatever later rules say about the file.
func (g *Gitignore) Ignored(rel string, isDir bool) bool {
	if g == nil || len(g.rules) == 0 {
		return false
	}
	rel = strings.Trim(filepath.ToSlash(rel), "/")
	if rel == "" || rel == "." {
		return false
	}
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if g.match(strings.Join(parts[:i], "/"), true) {
			return true
		}
	}
	return g.match(rel, isDir)
}

func (g *Gitignore) match(rel string, isDir bool) bool {
	ignored := false
	for _, r := range g.rules {
		if r.dirOnly && !isDir {
			continue
		}
		if r.re.MatchString(rel) {
			ignored = !r.negate
		}
	}
	return ignored
}
