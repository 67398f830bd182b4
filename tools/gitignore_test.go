package tools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestGitignore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		rules   string
		path    string
		isDir   bool
		ignored bool
	}{
		{name: "comment only", rules: "# *.go\n\n", path: "a.go"},
		{name: "name anywhere", rules: "*.log", path: "x/y/debug.log", ignored: true},
		{name: "name at root", rules: "*.log", path: "debug.log", ignored: true},
		{name: "no match", rules: "*.log", path: "debug.txt"},
		{name: "question mark", rules: "file?.txt", path: "file1.txt", ignored: true},
		{name: "question mark needs one", rules: "file?.txt", path: "file.txt"},
		{name: "class", rules: "[ab].c", path: "b.c", ignored: true},
		{name: "negated class", rules: "[!ab].c", path: "b.c"},
		{name: "dir pattern matches dir", rules: "build/", path: "build", isDir: true, ignored: true},
		{name: "dir pattern skips file", rules: "build/", path: "build"},
		{name: "dir pattern covers contents", rules: "build/", path: "build/out/x.o", ignored: true},
		{name: "dir pattern nested", rules: "node_modules/", path: "web/node_modules", isDir: true, ignored: true},
		{name: "anchored", rules: "/TODO", path: "TODO", ignored: true},
		{name: "anchored not nested", rules: "/TODO", path: "docs/TODO"},
		{name: "middle slash anchors", rules: "doc/*.txt", path: "doc/a.txt", ignored: true},
		{name: "middle slash not nested", rules: "doc/*.txt", path: "x/doc/a.txt"},
		{name: "star stays in segment", rules: "doc/*.txt", path: "doc/sub/a.txt"},
		{name: "leading double star", rules: "**/logs", path: "a/b/logs", isDir: true, ignored: true},
		{name: "leading double star at root", rules: "**/logs", path: "logs", ignored: true},
		{name: "trailing double star", rules: "abc/**", path: "abc/x/y", ignored: true},
		{name: "trailing double star not dir itself", rules: "abc/**", path: "abc", isDir: true},
		{name: "middle double star", rules: "a/**/b", path: "a/x/y/b", ignored: true},
		{name: "middle double star zero dirs", rules: "a/**/b", path: "a/b", ignored: true},
		{name: "negation", rules: "*.log\n!keep.log", path: "keep.log"},
		{name: "negation then reignore", rules: "*.log\n!keep.log\nkeep.log", path: "keep.log", ignored: true},
		{name: "negation cannot reinclude under ignored dir", rules: "build/\n!build/keep", path: "build/keep", ignored: true},
		{name: "escaped bang", rules: `\!important`, path: "!important", ignored: true},
		{name: "dot escaped", rules: "a.b", path: "axb"},
		{name: "trailing spaces trimmed", rules: "tmp   ", path: "tmp", ignored: true},
		{name: "crlf", rules: "tmp\r\n", path: "tmp", ignored: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g := ParseGitignore(tt.rules)
			require.Equal(t, tt.ignored, g.Ignored(tt.path, tt.isDir))
		})
	}
}

func TestLoadGitignore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	g, err := LoadGitignore(dir)
	require.NoError(t, err)
	require.False(t, g.Ignored("x", false))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("x\n"), 0o644))
	g, err = LoadGitignore(dir)
	require.NoError(t, err)
	require.True(t, g.Ignored("x", false))
}

func FuzzGitignore(f *testing.F) {
	for _, s := range []string{"*.log", "!a", "/b/**/c", "[a-", `\`, "**", "a/**", "[!x]y?"} {
		f.Add(s, "a/b/c.log")
	}
	f.Fuzz(func(t *testing.T, rules, path string) {
		g := ParseGitignore(rules)
		_ = g.Ignored(path, false)
		_ = g.Ignored(path, true)
	})
}
