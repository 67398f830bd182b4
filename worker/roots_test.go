package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/workflows"
)

// --workspace given twice serves two roots, the first the default; the
// environment's root stands only until a flag replaces it.
func TestWorkspaceRoots(t *testing.T) {
	t.Parallel()
	env := func(k string) string {
		if k == "LONGRUN_WORKSPACE" {
			return "/from/env"
		}
		return ""
	}
	m, err := ParseFlags(nil, env)
	require.NoError(t, err)
	require.Equal(t, []string{"/from/env"}, m.Workspaces.dirs)

	a, b := t.TempDir(), t.TempDir()
	m, err = ParseFlags([]string{"--workspace", a, "--workspace", b, "--workspace", a}, env)
	require.NoError(t, err)
	require.Equal(t, []string{a, b, a}, m.Workspaces.dirs)
	roots, err := openRoots(m.Workspaces.dirs)
	require.NoError(t, err)
	require.Len(t, roots, 2, "a root named twice is served once")
	real, err := filepath.EvalSymlinks(a)
	require.NoError(t, err)
	require.Equal(t, real, roots[0].ws.Root(), "the first stays the default")
	require.Equal(t, "q-checkouts", rootCheckoutQueue("q-checkouts", 0, roots[0]), "the default root's checkouts keep their queue")
	require.Equal(t, workflows.RootQueue("q-checkouts", roots[1].ws.Root()), rootCheckoutQueue("q-checkouts", 1, roots[1]))

	_, err = ParseFlags([]string{"--workspace", ""}, env)
	require.ErrorContains(t, err, "an empty workspace root")
	_, err = openRoots([]string{filepath.Join(a, "missing")})
	require.ErrorContains(t, err, "missing")
}

// A root named through a symlink is polled under both spellings, so
// start finds it whichever way the person's shell names the directory.
func TestRootQueuesOfASymlinkedRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	require.NoError(t, os.Mkdir(real, 0o755))
	link := filepath.Join(dir, "link")
	require.NoError(t, os.Symlink(real, link))
	roots, err := openRoots([]string{link})
	require.NoError(t, err)
	realReal, err := filepath.EvalSymlinks(real)
	require.NoError(t, err)
	require.Equal(t, []string{workflows.RootQueue("longrun", realReal), workflows.RootQueue("longrun", link)}, roots[0].queues("longrun"))
}
