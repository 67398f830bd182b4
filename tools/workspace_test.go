package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// hostileTree builds a workspace with an outside directory and symlinks that
// lead into it at several depths.
func hostileTree(t *testing.T) (*Workspace, string) {
	t.Helper()
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "a", "b"), 0o755))
	require.NoError(t, os.MkdirAll(outside, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "a", "b", "f.txt"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o644))
	links := map[string]string{
		"out":         outside,                          // dir symlink leaving the root
		"a/chain1":    "../chain2",                      // chain: chain1 -> chain2 -> out
		"chain2":      "out",                            //
		"a/secretln":  filepath.Join(outside, "secret"), // final component leaves
		"inside":      "a/b",                            // stays inside
		"a/relup":     "../../outside",                  // relative escape
		"devnull":     "/dev/null",                      // device via symlink
		"dangling":    filepath.Join(outside, "nofile"), // dangling, target outside
		"danglingin":  "a/b/new.txt",                    // dangling, target inside
		"a/b/loopone": "looptwo",
		"a/b/looptwo": "loopone",
	}
	for name, target := range links {
		require.NoError(t, os.Symlink(target, filepath.Join(root, name)))
	}
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644))
	ws, err := NewWorkspace(root)
	require.NoError(t, err)
	return ws, outside
}

// TestLocate checks where a path from the model leads: symlinks inside
// are followed to the real path, anything that leaves the root is refused
// with the path named.
func TestLocate(t *testing.T) {
	t.Parallel()
	ws, _ := hostileTree(t)
	root := ws.Root()
	tests := []struct {
		name string
		path string
		want string // the real path relative to root when ok
		err  string // substring of the error; "" means success
	}{
		{name: "empty is root", path: "", want: "."},
		{name: "dot", path: ".", want: "."},
		{name: "relative file", path: "a/b/f.txt", want: "a/b/f.txt"},
		{name: "absolute inside", path: filepath.Join(root, "a"), want: "a"},
		{name: "new file", path: "a/new/deep/x.go", want: "a/new/deep/x.go"},
		{name: "dotdot inside", path: "a/b/../b/f.txt", want: "a/b/f.txt"},
		{name: "symlink inside", path: "inside/f.txt", want: "a/b/f.txt"},
		{name: "dangling inside", path: "danglingin", want: "a/b/new.txt"},
		{name: "parent", path: "../x", err: `path "../x" is outside the workspace ` + root},
		{name: "climb out", path: "a/../../x", err: "outside the workspace"},
		{name: "etc passwd", path: "/etc/passwd", err: "outside the workspace"},
		{name: "dev null absolute", path: "/dev/null", err: "outside the workspace"},
		{name: "dev null via symlink", path: "devnull", err: "resolves through a symlink to /dev/null"},
		{name: "fifo", path: "fifo", err: "named pipe"},
		{name: "symlink dir out", path: "out/secret", err: "resolves through a symlink"},
		{name: "symlink dir itself", path: "out", err: "outside the workspace"},
		{name: "symlink chain", path: "a/chain1/secret", err: "outside the workspace"},
		{name: "final component", path: "a/secretln", err: "outside the workspace"},
		{name: "relative escape", path: "a/relup/secret", err: "outside the workspace"},
		{name: "new file under symlinked-out dir", path: "out/new/file.txt", err: "outside the workspace"},
		{name: "dangling outside", path: "dangling", err: "outside the workspace"},
		{name: "symlink loop", path: "a/b/loopone", err: "symlinks"},
		{name: "nul byte", path: "a\x00b", err: "NUL"},
		{name: "absolute symlink inside", path: "abslink/f.txt", want: "a/b/f.txt"},
		{name: "file in the way", path: "a/b/f.txt/x", want: "a/b/f.txt/x"},
	}
	require.NoError(t, os.Symlink(filepath.Join(root, "a", "b"), filepath.Join(root, "abslink")))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, err := ws.locate(tt.path)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			defer e.Close()
			require.Equal(t, tt.want, e.real)
		})
	}
}

func TestResolveIsLexical(t *testing.T) {
	t.Parallel()
	ws, _ := hostileTree(t)
	root := ws.Root()
	for p, want := range map[string]string{
		"": ".", ".": ".", "a//b/../b/f.txt": "a/b/f.txt", filepath.Join(root, "a"): "a",
		"out/secret": "out/secret", // symlinks are judged when opened
	} {
		got, err := ws.Resolve(p)
		require.NoError(t, err, p)
		require.Equal(t, want, got, p)
	}
	for _, p := range []string{"..", "../x", "a/../../x", "/etc/passwd", "a\x00b"} {
		_, err := ws.Resolve(p)
		require.Error(t, err, p)
	}
}

func TestNewWorkspace(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	file := filepath.Join(base, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	require.NoError(t, os.Symlink(base, filepath.Join(base, "..", filepath.Base(base)+"-link")))
	tests := []struct {
		name string
		root string
		err  string
	}{
		{name: "dir", root: base},
		{name: "symlinked root", root: base + "-link"},
		{name: "file", root: file, err: "not a directory"},
		{name: "missing", root: filepath.Join(base, "nope"), err: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ws, err := NewWorkspace(tt.root)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			real, err := filepath.EvalSymlinks(base)
			require.NoError(t, err)
			require.Equal(t, real, ws.Root())
			// An absolute path spelled through the unevaluated root is inside.
			got, err := ws.Resolve(filepath.Join(tt.root, "f"))
			require.NoError(t, err)
			require.Equal(t, "f", got)
		})
	}
}

func TestSub(t *testing.T) {
	t.Parallel()
	ws, _ := hostileTree(t)
	sub, err := ws.Sub("a")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(ws.Root(), "a"), sub.Root())
	_, err = sub.Resolve("../inside")
	require.ErrorContains(t, err, "outside the workspace")
	// A symlink in the subdirectory to elsewhere in the project leaves it.
	require.NoError(t, os.Symlink("../inside", filepath.Join(ws.Root(), "a", "up")))
	_, err = sub.locate("up/f.txt")
	require.ErrorContains(t, err, "outside the workspace")
	e, err := sub.locate("b/f.txt")
	require.NoError(t, err)
	e.Close()
	require.Equal(t, "a/b/f.txt", e.real)
	require.Equal(t, "b/f.txt", sub.display(e.real))
	_, err = ws.Sub("out")
	require.ErrorContains(t, err, "outside the workspace")
	_, err = ws.Sub("a/b/f.txt")
	require.ErrorContains(t, err, "not a directory")
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{"", ".", "a/b/f.txt", "../x", "a/../../x", "/etc/passwd", "out/secret",
		"a/chain1/x", "inside/../../x", "devnull", "a/relup", "dangling/x", "//a//b", "a/./b/../../.."} {
		f.Add(s)
	}
	base := f.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	if err := os.MkdirAll(filepath.Join(root, "a", "b"), 0o755); err != nil {
		f.Fatal(err)
	}
	if err := os.MkdirAll(outside, 0o755); err != nil {
		f.Fatal(err)
	}
	for name, target := range map[string]string{"out": outside, "a/chain1": "../out", "a/relup": "../../outside",
		"inside": "a/b", "dangling": filepath.Join(outside, "none"), "devnull": "/dev/null"} {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			f.Fatal(err)
		}
	}
	ws, err := NewWorkspace(root)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, p string) {
		e, err := ws.locate(p)
		if err != nil {
			return
		}
		e.Close()
		got := ws.abs(e.real)
		require.True(t, within(ws.Root(), got), "result %s of %q is outside %s", got, p, ws.Root())
		// The existing part, with symlinks evaluated, must be inside too.
		existing := got
		for {
			if _, err := os.Lstat(existing); err == nil {
				break
			}
			existing = filepath.Dir(existing)
		}
		real, err := filepath.EvalSymlinks(existing)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(real, ws.Root()), "existing part %s of %q is outside %s", real, p, ws.Root())
	})
}

// TestWorkspaceOpenAndDirPath covers the API other packages use: Open and
// ReadFile read beneath the root and say where a missing path leads;
// DirPath hands out a real directory path and creates one on request.
func TestWorkspaceOpenAndDirPath(t *testing.T) {
	t.Parallel()
	ws, _ := hostileTree(t)
	data, err := ws.ReadFile("inside/f.txt")
	require.NoError(t, err)
	require.Equal(t, "x", string(data))
	_, err = ws.ReadFile("out/secret")
	require.ErrorIs(t, err, ErrOutsideWorkspace)
	_, err = ws.Open("fifo")
	require.ErrorIs(t, err, ErrSpecialFile)
	var pe *fs.PathError
	_, err = ws.Open("danglingin")
	require.ErrorIs(t, err, fs.ErrNotExist)
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "a/b/new.txt", pe.Path, "a dangling link names its target")
	_, err = ws.Open("nope.txt")
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "nope.txt", pe.Path)

	dir, err := ws.DirPath("inside", false)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(ws.Root(), "a", "b"), dir)
	_, err = ws.DirPath("a/b/f.txt", false)
	require.ErrorIs(t, err, ErrNoDirectory)
	_, err = ws.DirPath("new/deep", false)
	require.ErrorIs(t, err, ErrNoDirectory)
	dir, err = ws.DirPath("inside/new/deep", true)
	require.NoError(t, err)
	require.DirExists(t, filepath.Join(ws.Root(), "a", "b", "new", "deep"))
	require.Equal(t, filepath.Join(ws.Root(), "a", "b", "new", "deep"), dir)
	_, err = ws.DirPath("out/new", true)
	require.ErrorIs(t, err, ErrOutsideWorkspace)
	_, err = ws.DirPath("a/b/f.txt/x", true)
	require.ErrorIs(t, err, ErrNoDirectory)
}
