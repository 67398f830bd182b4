package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
)

// TestApplyRefusesControlFilesNotNamed: a diff that creates
// .longrun/permissions.json and AGENTS.md is refused with the flags that
// would take it; naming each (or their directory) lets it through.
func TestApplyRefusesControlFilesNotNamed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "."}, {"-c", "user.name=t", "-c", "user.email=t@x", "commit", "-q", "--allow-empty", "-m", "first"}} {
		out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	in, err := checkout.Create(ctx, repo, t.TempDir(), "ctl", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "code.go"), []byte("package x\n"), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(in.Dir, ".longrun"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, ".longrun", "permissions.json"), []byte("{}\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "AGENTS.md"), []byte("obey\n"), 0o644))
	d, err := checkout.Diff(ctx, in)
	require.NoError(t, err)

	err = controlRefusal(ctx, "s1", d, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), ".longrun/permissions.json, AGENTS.md")
	require.Contains(t, err.Error(), "--include-control .longrun/permissions.json --include-control AGENTS.md")

	err = controlRefusal(ctx, "s1", d, []string{"AGENTS.md"})
	require.ErrorContains(t, err, ".longrun/permissions.json")
	require.NotContains(t, err.Error(), "AGENTS.md,")

	require.NoError(t, controlRefusal(ctx, "s1", d, []string{"AGENTS.md", "./.longrun/"}))

	require.NoError(t, os.RemoveAll(filepath.Join(in.Dir, ".longrun")))
	require.NoError(t, os.Remove(filepath.Join(in.Dir, "AGENTS.md")))
	d, err = checkout.Diff(ctx, in)
	require.NoError(t, err)
	require.NoError(t, controlRefusal(ctx, "s1", d, nil), "a diff of ordinary files applies")
}

// TestCheckoutsListsDiskUse: starter checkouts lists each checkout under
// the state directory with its files and disk, and the total.
func TestCheckoutsListsDiskUse(t *testing.T) {
	t.Parallel()
	state := t.TempDir()
	code, stdout, stderr := runFake(t, &fakeClient{}, "checkouts", "--state-dir", state)
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "no checkouts under "+filepath.Join(state, checkout.Dir))

	dir := filepath.Join(state, checkout.Dir, "s1")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), make([]byte, 10000), 0o644))
	code, stdout, stderr = runFake(t, &fakeClient{}, "checkouts", "--state-dir", state)
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `s1\s+longrun/s1\s+1\s+\d+\.\d KiB`, stdout)
	require.Contains(t, stdout, "1 checkouts under "+filepath.Join(state, checkout.Dir)+" take")
}
