package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestGlob(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t, map[string]string{
		".gitignore":       "build/\n*.log\n",
		"main.go":          "package main\n",
		"a/b/deep.go":      "package b\n",
		"a/b/deep_test.go": "package b\n",
		"web/x.ts":         "",
		"web/y.tsx":        "",
		"build/out.go":     "package out\n",
		"debug.log":        "",
		".git/config.go":   "",
	})
	// Give the files distinct times: deep.go newest, main.go oldest.
	base := time.Now().Add(-time.Hour)
	for i, name := range []string{"main.go", "a/b/deep_test.go", "web/x.ts", "web/y.tsx", "a/b/deep.go"} {
		ts := base.Add(time.Duration(i) * time.Minute)
		require.NoError(t, os.Chtimes(filepath.Join(ws.Root(), name), ts, ts))
	}
	tests := []struct {
		name    string
		args    GlobParams
		want    string
		isError bool
	}{
		{name: "doublestar newest first", args: GlobParams{Pattern: "**/*.go"}, want: "a/b/deep.go\na/b/deep_test.go\nmain.go\n"},
		{name: "single star stays in one segment", args: GlobParams{Pattern: "*.go"}, want: "main.go\n"},
		{name: "braces", args: GlobParams{Pattern: "**/*.{ts,tsx}"}, want: "web/y.tsx\nweb/x.ts\n"},
		{name: "under a path", args: GlobParams{Pattern: "*_test.go", Path: "a/b"}, want: "a/b/deep_test.go\n"},
		{name: "ignored files are skipped", args: GlobParams{Pattern: "**/*.log"}, want: "No files found matching **/*.log"},
		{name: "bad pattern", args: GlobParams{Pattern: "[a-"}, isError: true},
		{name: "outside workspace", args: GlobParams{Pattern: "*", Path: "../"}, isError: true},
		{name: "missing dir", args: GlobParams{Pattern: "*", Path: "nope"}, isError: true},
		{name: "path is a file", args: GlobParams{Pattern: "*", Path: "main.go"}, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runTool(t, context.Background(), NewGlob(), Env{Workspace: ws}, tt.args)
			require.Equal(t, tt.isError, res.IsError, res.Content)
			if !tt.isError {
				require.Equal(t, tt.want, res.Content)
			}
		})
	}
}

func TestGlobCap(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 130 {
		files[fmt.Sprintf("f%03d.txt", i)] = ""
	}
	ws := testWorkspace(t, files)
	ts := time.Now()
	for i := range 130 {
		require.NoError(t, os.Chtimes(filepath.Join(ws.Root(), fmt.Sprintf("f%03d.txt", i)), ts, ts))
	}
	res := runTool(t, context.Background(), NewGlob(), Env{Workspace: ws}, GlobParams{Pattern: "*.txt"})
	require.False(t, res.IsError)
	lines := strings.Split(strings.TrimSpace(res.Content), "\n")
	require.Len(t, lines, 101)
	require.Equal(t, "f000.txt", lines[0], "equal times sort by path")
	require.Equal(t, "(30 more not shown; use a more specific pattern or path)", lines[100])
}
