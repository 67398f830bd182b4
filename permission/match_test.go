package permission

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMatchWildcard(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", true},
		{"*", "anything at/all", true},
		{"shell", "shell", true},
		{"shell", "shells", false},
		{"mcp_*", "mcp_github_search", true},
		{"mcp_*", "xmcp_a", false},
		{"?ead", "read", true},
		{"?ead", "ead", false},
		{"a*b*c", "aXXbYYc", true},
		{"a*b*c", "aXXbYY", false},
		{"*.go", "x/y.go", true},
		{"é?", "éa", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"~"+tt.s, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, matchWildcard(tt.pattern, tt.s))
		})
	}
}

func TestMatchCommand(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, cmd string
		want         bool
	}{
		{"git *", "git status", true},
		{"git *", "git", true},
		{"git *", "gitk", false},
		{"go test *", "go test ./...", true},
		{"go test *", "go build ./...", false},
		{"rm *", "rm -rf build", true},
		{"npm run *", "npm run build -- --watch", true},
		{"ls", "ls -la", false},
		{"*", "anything", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"~"+tt.cmd, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, matchCommand(tt.pattern, tt.cmd))
		})
	}
}

func TestMatchPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"docs/**", "docs/a/b.md", true},
		{"docs/**", "docs/a.md", true},
		{"docs/**", "docs", true},
		{"docs/**", "doc/a.md", false},
		{"docs/*", "docs/a.md", true},
		{"docs/*", "docs/a/b.md", false},
		{"**/*.go", "main.go", true},
		{"**/*.go", "a/b/c.go", true},
		{"**/*.go", "a/b/c.md", false},
		{"src/**/test/*.go", "src/x/y/test/a.go", true},
		{"src/**/test/*.go", "src/test/a.go", true},
		{"*.md", "README.md", true},
		{"*.md", "docs/README.md", false},
		{"**", "a/b/c", true},
		{"a/**/b/**/c", "a/x/b/y/z/c", true},
		{"a/?.txt", "a/1.txt", true},
		{"a/?.txt", "a/12.txt", false},
		{".env*", ".env.local", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+"~"+tt.path, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, matchPath(tt.pattern, tt.path))
		})
	}
}

func TestCleanPath(t *testing.T) {
	t.Parallel()
	require.Equal(t, "secrets/k", cleanPath("./docs/../secrets/k"))
	require.Equal(t, "docs/a.md", cleanPath("docs//a.md"))
	require.Equal(t, "", cleanPath(""))
	require.True(t, insideWorkspace(cleanPath("a/../b")))
	require.False(t, insideWorkspace(cleanPath("a/../../b")))
	require.False(t, insideWorkspace(cleanPath("/etc/passwd")))
}
