package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func numbered(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	t.Parallel()
	png := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + strings.Repeat("\x00", 20)
	files := map[string]string{
		"small.txt":      "alpha\nbeta\r\ngamma",
		"big.txt":        numbered(1, 2500),
		"long.txt":       "short\n" + strings.Repeat("x", 5000) + "\nend\n",
		"image.png":      png,
		"latin1.txt":     strings.Repeat("\xe9\xe8\xff", 100),
		"empty.txt":      "",
		"utf8.txt":       strings.Repeat("é", 1500) + "\n",
		"dir/a.go":       "package a\n",
		"dir/sub/b.go":   "package b\n",
		"huge_lines.txt": strings.Repeat(strings.Repeat("y", 1900)+"\n", 40),
		"config.yaml":    "a: 1\n",
	}
	ws := testWorkspace(t, files)
	tests := []struct {
		name     string
		args     ReadParams
		isError  bool
		contains []string
		excludes []string
	}{
		{name: "whole small file", args: ReadParams{Path: "small.txt"},
			contains: []string{"     1: alpha\n", "     2: beta\n", "     3: gamma\n"}, excludes: []string{"\r", "more lines"}},
		{name: "default limit", args: ReadParams{Path: "big.txt"},
			contains: []string{"  2000: line 2000\n", "(file has more lines; continue with offset=2001)"}, excludes: []string{"line 2001\n"}},
		{name: "offset and limit", args: ReadParams{Path: "big.txt", Offset: 10, Limit: 3},
			contains: []string{"    10: line 10\n", "    12: line 12\n", "continue with offset=13"}, excludes: []string{"line 9\n", "line 13\n"}},
		{name: "last window has no next offset", args: ReadParams{Path: "big.txt", Offset: 2498, Limit: 3},
			contains: []string{"  2500: line 2500\n"}, excludes: []string{"more lines"}},
		{name: "exactly to the end", args: ReadParams{Path: "big.txt", Offset: 2001, Limit: 500},
			contains: []string{"  2500: line 2500\n"}, excludes: []string{"more lines"}},
		{name: "offset past end", args: ReadParams{Path: "small.txt", Offset: 10}, isError: true,
			contains: []string{"offset 10 is past the end of small.txt, which has 3 lines"}},
		{name: "long line truncated", args: ReadParams{Path: "long.txt"},
			contains: []string{"... (line truncated, 3000 more bytes)", "     3: end"}},
		{name: "utf8 cut on rune boundary", args: ReadParams{Path: "utf8.txt"},
			contains: []string{"(line truncated, 1000 more bytes)"}},
		{name: "output cap", args: ReadParams{Path: "huge_lines.txt"},
			contains: []string{"(output capped at 50 KB; continue with offset=27)"}, excludes: []string{"    27: y"}},
		{name: "binary image", args: ReadParams{Path: "image.png"}, isError: true,
			contains: []string{"binary file (image/png, " + fmt.Sprint(len(png)) + " bytes)"}},
		{name: "invalid utf8", args: ReadParams{Path: "latin1.txt"}, isError: true,
			contains: []string{"binary file", "300 bytes"}},
		{name: "empty file", args: ReadParams{Path: "empty.txt"}, contains: []string{"(empty file)"}},
		{name: "directory", args: ReadParams{Path: "dir"},
			contains: []string{"dir is a directory", "  a.go\n", "  sub/\n"}, excludes: []string{"b.go"}},
		{name: "missing with suggestions", args: ReadParams{Path: "smal.txt"}, isError: true,
			contains: []string{"file not found: smal.txt", "did you mean: small.txt"}},
		{name: "missing in subdir", args: ReadParams{Path: "dir/a.g"}, isError: true,
			contains: []string{"file not found: dir/a.g", "dir/a.go"}},
		{name: "missing extension guess", args: ReadParams{Path: "config.yml"}, isError: true,
			contains: []string{"config.yaml"}},
		{name: "missing no suggestions", args: ReadParams{Path: "zzzzzzzzzz"}, isError: true,
			contains: []string{"file not found: zzzzzzzzzz"}, excludes: []string{"did you mean"}},
		{name: "file as directory", args: ReadParams{Path: "small.txt/x"}, isError: true,
			contains: []string{"file not found: small.txt/x"}},
		{name: "outside", args: ReadParams{Path: "../x"}, isError: true,
			contains: []string{`path "../x" is outside the workspace`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runTool(t, context.Background(), NewRead(), Env{Workspace: ws}, tt.args)
			require.Equal(t, tt.isError, res.IsError, res.Content)
			for _, s := range tt.contains {
				require.Contains(t, res.Content, s)
			}
			for _, s := range tt.excludes {
				require.NotContains(t, res.Content, s)
			}
			require.LessOrEqual(t, len(res.Content), readMaxOutput+200)
		})
	}
}

func TestReadLineTruncationKeepsCap(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t, nil)
	// A 3 MB single line must be cut without loading it whole into the output.
	f, err := os.Create(filepath.Join(ws.Root(), "one.txt"))
	require.NoError(t, err)
	_, err = f.WriteString(strings.Repeat("z", 3<<20))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	res := runTool(t, context.Background(), NewRead(), Env{Workspace: ws}, ReadParams{Path: "one.txt"})
	require.False(t, res.IsError)
	require.Contains(t, res.Content, fmt.Sprintf("(line truncated, %d more bytes)", 3<<20-2000))
	require.Less(t, len(res.Content), 2100)
}
