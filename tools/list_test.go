package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestList(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		".gitignore":            "# build output\n*.log\nbuild/\n/secret.txt\n!keep.log\nnode_modules/\n",
		".git/config":           "[core]\n",
		"README.md":             "hi\n",
		"secret.txt":            "s\n",
		"debug.log":             "x\n",
		"keep.log":              "k\n",
		"build/out.bin":         "b\n",
		"src/main.go":           "package main\n",
		"src/secret.txt":        "not anchored here\n",
		"src/trace.log":         "x\n",
		"src/deep/a/b/c.go":     "package c\n",
		"web/node_modules/x.js": "x\n",
		"web/app.js":            "x\n",
	}
	many := map[string]string{}
	for i := range 30 {
		many[fmt.Sprintf("f%02d.txt", i)] = "x"
	}
	ws := testWorkspace(t, files)
	wsMany := testWorkspace(t, many)
	require.NoError(t, os.Symlink("src", filepath.Join(ws.Root(), "srclink")))
	tests := []struct {
		name     string
		ws       *Workspace
		args     ListParams
		isError  bool
		want     string
		contains []string
	}{
		{name: "root with gitignore", ws: ws, args: ListParams{}, want: `./
  .gitignore
  README.md
  keep.log
  src/
    deep/
      a/
    main.go
    secret.txt
  srclink -> src
  web/
    app.js
`},
		{name: "depth 1 subdir", ws: ws, args: ListParams{Path: "src", Depth: 1}, want: `src/
  deep/
  main.go
  secret.txt
`},
		{name: "deep", ws: ws, args: ListParams{Path: "src/deep", Depth: 5}, want: `src/deep/
  a/
    b/
      c.go
`},
		{name: "limit", ws: wsMany, args: ListParams{Limit: 10},
			contains: []string{"  f09.txt\n", "(20 more entries not shown; list a subdirectory or raise limit)"}},
		{name: "file", ws: ws, args: ListParams{Path: "README.md"}, isError: true, contains: []string{"is a file"}},
		{name: "missing", ws: ws, args: ListParams{Path: "nope"}, isError: true, contains: []string{"directory not found: nope"}},
		{name: "outside", ws: ws, args: ListParams{Path: "/etc"}, isError: true, contains: []string{"outside the workspace"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			res := runTool(t, context.Background(), NewList(), Env{Workspace: tt.ws}, tt.args)
			require.Equal(t, tt.isError, res.IsError, res.Content)
			if tt.want != "" {
				require.Equal(t, tt.want, res.Content)
			}
			for _, s := range tt.contains {
				require.Contains(t, res.Content, s)
			}
		})
	}
}

func TestListEmpty(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t, nil)
	res := runTool(t, context.Background(), NewList(), Env{Workspace: ws}, ListParams{})
	require.Equal(t, "./\n(empty directory)\n", res.Content)
}
