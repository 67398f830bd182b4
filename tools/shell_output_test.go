package tools

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// 5 MB of output: the model gets head and tail with a marker, and the saved
// file holds the whole output byte for byte.
func TestShellSavesFullOutputWhenCut(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	cmd := `head -c 5000000 /dev/urandom | base64 -w 100 > big.txt; cat big.txt`
	res, err := NewShell(DefaultShellConfig()).Run(context.Background(), Env{Workspace: ws}, []byte(`{"command": "`+cmd+`"}`))
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	require.Less(t, len(res.Content), 40000)
	require.Contains(t, res.Content, "characters dropped")
	m := regexp.MustCompile(`full output saved to (\S+);`).FindStringSubmatch(res.Content)
	require.NotNil(t, m, res.Content[len(res.Content)-300:])
	saved, err := os.ReadFile(filepath.Join(root, m[1]))
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(root, "big.txt"))
	require.NoError(t, err)
	require.Equal(t, sha256.Sum256(want), sha256.Sum256(saved))
	require.Greater(t, len(saved), 5000000)

	// Short output keeps no file.
	res, err = NewShell(DefaultShellConfig()).Run(context.Background(), Env{Workspace: ws}, []byte(`{"command": "echo short"}`))
	require.NoError(t, err)
	require.NotContains(t, res.Content, "saved to")
	files, _ := filepath.Glob(filepath.Join(root, ToolOutputDir, "*"))
	require.Len(t, files, 1)
}
