package tools

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// spilledPath is the file a cut result says the full output is in.
var spilledPath = regexp.MustCompile(`saved to (/\S+), outside the workspace`)

// 5 MB of output: the model gets head and tail with a marker, and the saved
// file, in the session's directory of the state directory and not in the
// workspace, holds the whole output byte for byte.
func TestShellSavesFullOutputWhenCut(t *testing.T) {
	t.Parallel()
	root, state := t.TempDir(), t.TempDir()
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	sh := NewShell(DefaultShellConfig())
	sh.state = newStateDir(state)
	env := Env{Workspace: ws, Session: "session/1"}
	cmd := `head -c 5000000 /dev/urandom | base64 -w 100 > big.txt; cat big.txt`
	res, err := sh.Run(context.Background(), env, []byte(`{"command": "`+cmd+`"}`))
	require.NoError(t, err)
	require.False(t, res.IsError, res.Content)
	require.Less(t, len(res.Content), 40000)
	require.Contains(t, res.Content, "characters dropped")
	m := spilledPath.FindStringSubmatch(res.Content)
	require.NotNil(t, m, res.Content[len(res.Content)-400:])
	require.Equal(t, filepath.Join(state, "sessions", fileSafe("session/1"), "tool-output"), filepath.Dir(m[1]))
	saved, err := os.ReadFile(m[1])
	require.NoError(t, err)
	want, err := os.ReadFile(filepath.Join(root, "big.txt"))
	require.NoError(t, err)
	require.Equal(t, sha256.Sum256(want), sha256.Sum256(saved))
	require.Greater(t, len(saved), 5000000)
	require.Contains(t, res.Content, "[full output ("+strconv.Itoa(len(saved))+" bytes) saved to "+m[1]+", outside the workspace where tools cannot read it; to see the dropped part, rerun the command filtered")
	fi, err := os.Stat(m[1])
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.NoDirExists(t, filepath.Join(root, ".longrun"), "nothing is spilled into the workspace")

	// Short output keeps no file.
	res, err = sh.Run(context.Background(), env, []byte(`{"command": "echo short"}`))
	require.NoError(t, err)
	require.NotContains(t, res.Content, "saved to")
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(m[1]), "*"))
	require.Len(t, files, 1)
}

// A command printing far more than the spill cap: the file stops at the
// cap, the command is not blocked (it ends with code 0 as soon as it has
// printed everything), and the result says where the output was cut.
func TestShellSpillCapped(t *testing.T) {
	t.Parallel()
	ws := testWorkspace(t, nil)
	state := t.TempDir()
	sh := NewShell(ShellConfig{OutputLimit: 1000, MaxSpillBytes: 5000})
	sh.state = newStateDir(state)
	res := runTool(t, context.Background(), sh, Env{Workspace: ws, Session: "s"}, ShellParams{Command: "head -c 20000000 /dev/zero | tr '\\0' x; echo; echo END"})
	require.False(t, res.IsError, res.Content)
	require.Regexp(t, `\nEND\n\[full output cut at 5000 bytes: the command printed 20000005, the rest was discarded; the first 5000 bytes are saved to /\S+, outside the workspace where tools cannot read it; `, res.Content)
	require.Contains(t, res.Content, "[exit code 0, ")
	m := spilledPath.FindStringSubmatch(res.Content)
	require.NotNil(t, m, res.Content)
	fi, err := os.Stat(m[1])
	require.NoError(t, err)
	require.Equal(t, int64(5000), fi.Size())
	require.True(t, filepath.IsAbs(m[1]) && filepath.Dir(filepath.Dir(filepath.Dir(m[1]))) == filepath.Join(state, "sessions"), m[1])
}

// The default cap is 100 MB a call.
func TestShellSpillDefaultCap(t *testing.T) {
	t.Parallel()
	require.Equal(t, int64(100<<20), NewShell(ShellConfig{}).cfg.MaxSpillBytes)
	require.Equal(t, int64(7), NewShell(ShellConfig{MaxSpillBytes: 7}).cfg.MaxSpillBytes)
}
