package tools

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func grepFiles() map[string]string {
	return map[string]string{
		".gitignore":    "vendor/\n",
		"a.go":          "package a\n\nfunc Main() {}\nfunc main() {}\n",
		"b/b.go":        "package b\r\n// TODO: fix\r\nfunc helper(ctx context.Context) {}\r\n",
		"b/b_test.go":   "package b\nfunc TestX(t *testing.T) {}\n",
		"web/app.tsx":   "const x = 1; // TODO\n",
		"web/app.ts":    "let y = 2\n",
		"vendor/v.go":   "func main() {}\n",
		".git/HEAD":     "func main() {}\n",
		"bin.dat":       "func main\x00() {}\n",
		"long.txt":      strings.Repeat("é", 400) + " needle\n",
		"kelvin.txt":    "\u212A is the Kelvin sign\n",
		"noeol.txt":     "last line needle",
		"multiline.txt": "alpha\nbeta\n",
	}
}

func TestGrep(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t, grepFiles())
	tests := []struct {
		name     string
		args     GrepParams
		want     string
		contains []string
		isError  bool
	}{
		{name: "literal, sorted by path, ignores vendor .git and binary", args: GrepParams{Pattern: "func main"},
			want: "a.go:4: func main() {}\n"},
		{name: "ignore case literal", args: GrepParams{Pattern: "FUNC MAIN", IgnoreCase: true},
			want: "a.go:3: func Main() {}\na.go:4: func main() {}\n"},
		{name: "ignore case follows unicode folding", args: GrepParams{Pattern: "k is", IgnoreCase: true},
			want: "kelvin.txt:1: \u212A is the Kelvin sign\n"},
		{name: "regex with literal", args: GrepParams{Pattern: `func \w+\(ctx context\.Context`},
			want: "b/b.go:3: func helper(ctx context.Context) {}\n"},
		{name: "regex without literal", args: GrepParams{Pattern: `^[a-z]+ [a-z] = \d`},
			want: "web/app.ts:1: let y = 2\nweb/app.tsx:1: const x = 1; // TODO\n"},
		{name: "alternation", args: GrepParams{Pattern: `TODO|TestX`},
			want: "b/b.go:2: // TODO: fix\nb/b_test.go:2: func TestX(t *testing.T) {}\nweb/app.tsx:1: const x = 1; // TODO\n"},
		{name: "anchors per line", args: GrepParams{Pattern: `^beta$`}, want: "multiline.txt:2: beta\n"},
		{name: "no match across lines", args: GrepParams{Pattern: `alpha\sbeta`}, want: "No matches found"},
		{name: "include name glob", args: GrepParams{Pattern: "TODO", Include: "*.{ts,tsx}"}, want: "web/app.tsx:1: const x = 1; // TODO\n"},
		{name: "include path glob", args: GrepParams{Pattern: "package", Include: "b/*_test.go"}, want: "b/b_test.go:1: package b\n"},
		{name: "sub path", args: GrepParams{Pattern: "package", Path: "b"}, want: "b/b.go:1: package b\nb/b_test.go:1: package b\n"},
		{name: "single file", args: GrepParams{Pattern: "needle", Path: "noeol.txt"}, want: "noeol.txt:1: last line needle\n"},
		{name: "files with matches", args: GrepParams{Pattern: "package", Output: GrepOutputFiles}, want: "a.go\nb/b.go\nb/b_test.go\n"},
		{name: "limit", args: GrepParams{Pattern: "package", Limit: 1},
			want: "a.go:1: package a\n(2 more matches not shown; narrow pattern, path or include, or raise limit)\n"},
		{name: "long line cut", args: GrepParams{Pattern: "needle", Path: "long.txt"},
			contains: []string{"long.txt:1: " + strings.Repeat("é", 250) + " ... (line cut)\n"}},
		{name: "bad regex", args: GrepParams{Pattern: "a("}, isError: true},
		{name: "bad include", args: GrepParams{Pattern: "a", Include: "[a-"}, isError: true},
		{name: "missing path", args: GrepParams{Pattern: "a", Path: "nope"}, isError: true},
		{name: "outside workspace", args: GrepParams{Pattern: "a", Path: "/etc"}, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runTool(t, context.Background(), NewGrep(), Env{Workspace: ws}, tt.args)
			require.Equal(t, tt.isError, res.IsError, res.Content)
			if tt.want != "" {
				require.Equal(t, tt.want, res.Content)
			}
			for _, c := range tt.contains {
				require.Contains(t, res.Content, c)
			}
		})
	}
}

// TestGrepMatchesLineByLine checks the fast paths (literal, folded literal,
// required literal, whole-buffer scan) against a plain per-line regexp.
func TestGrepMatchesLineByLine(t *testing.T) {
	t.Parallel()
	text := "Hello World\nhello world\nHELLO\n\nfoo(bar) x\nfoobar\n  indented foo\nlast"
	ws := testWorkspace(t, map[string]string{"f.txt": text})
	for _, tc := range []struct {
		pattern string
		fold    bool
	}{
		{"hello", false}, {"hello", true}, {"o W", true}, {`foo\(`, false}, {`o+b`, false},
		{`^$`, false}, {`x*`, false}, {`\bfoo\b`, false}, {`(?i)WORLD$`, false}, {`[a-z]{5}`, false},
		{`last`, false}, {`^  \w+ foo$`, false},
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.pattern, tc.fold), func(t *testing.T) {
			t.Parallel()
			res, err := Search(context.Background(), ws.Root(), GrepOptions{Pattern: tc.pattern, IgnoreCase: tc.fold, Limit: 1000})
			require.NoError(t, err)
			m, err := newGrepMatcher(tc.pattern, tc.fold)
			require.NoError(t, err)
			var want []int
			for i, line := range strings.Split(text, "\n") {
				if m.line.MatchString(line) {
					want = append(want, i+1)
				}
			}
			var got []int
			for _, g := range res.Matches {
				got = append(got, g.Line)
			}
			require.Equal(t, want, got)
			require.Equal(t, len(want), res.TotalMatches)
		})
	}
}

func TestGrepFoldSafe(t *testing.T) {
	t.Parallel()
	lit, whole := foldSafe("Func Main", true)
	require.Equal(t, "func main", lit)
	require.True(t, whole)
	lit, whole = foldSafe("Kelvin scale", true)
	require.Equal(t, "elvin ", lit)
	require.False(t, whole)
}

func TestGrepASCIILower(t *testing.T) {
	t.Parallel()
	var in []byte
	for c := range 256 {
		in = append(in, byte(c))
	}
	in = append(in, "Hello, WORLD! @[`{ ÀÉ"...)
	got := asciiLower(nil, in)
	for i, c := range in {
		want := c
		if 'A' <= c && c <= 'Z' {
			want = c + 32
		}
		require.Equal(t, want, got[i], "byte %d (%q)", i, c)
	}
}

func TestGrepLiteralFinder(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ hay, needle string }{
		{"func main", "func main"}, {"xx(ctx context.Context)", "(ctx context.Context"}, {"abc", "abcd"},
		{"aaaab", "ab"}, {"", "a"}, {"zzz", "z"}, {"ab(ctx", "(ctx context"},
	} {
		f := newLiteralFinder([]byte(tc.needle))
		require.Equal(t, strings.Index(tc.hay, tc.needle), f.index([]byte(tc.hay)), "%q in %q", tc.needle, tc.hay)
	}
}
