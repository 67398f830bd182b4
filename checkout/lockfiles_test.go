package checkout

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// LockfileKey changes with a lockfile (at any depth) or the command, and
// not with any other file.
func TestLockfileKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	commit := func(name, body string) string {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
		for _, args := range [][]string{{"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-qm", name}} {
			out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
			require.NoError(t, err, "%s", out)
		}
		out, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
		require.NoError(t, err)
		return string(out[:len(out)-1])
	}
	out, err := exec.Command("git", "init", "-q", dir).CombinedOutput()
	require.NoError(t, err, "%s", out)
	c1 := commit("go.sum", "a\n")
	c2 := commit("main.go", "package main\n")
	c3 := commit("web/package-lock.json", "{}\n")
	key := func(c, cmd string) string {
		k, err := LockfileKey(ctx, dir, c, cmd)
		require.NoError(t, err)
		return k
	}
	require.Equal(t, key(c1, "go mod download"), key(c2, "go mod download"), "another file changes nothing")
	require.NotEqual(t, key(c2, "go mod download"), key(c3, "go mod download"), "a nested lockfile counts")
	require.NotEqual(t, key(c1, "go mod download"), key(c1, "npm ci"), "the command counts")
	_, err = LockfileKey(ctx, dir, "nope", "x")
	require.Error(t, err)
}
