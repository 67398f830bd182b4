package checkout

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// outside is a directory beside the person's checkout that apply must
// never write: it holds the same files the links in the checkout stand
// in for, so a write through a link would pass every content check.
func outside(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
	return dir
}

// requireUntouched checks that dir holds exactly files.
func requireUntouched(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, len(files), "nothing was added outside the checkout")
	for name, body := range files {
		b, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		require.Equal(t, body, string(b), "%s outside the checkout is unchanged", name)
	}
}

// TestApplyNeverWritesThroughALink (git mode): the person replaced a
// directory of their checkout with a link to a directory outside it, or
// a file with a link to a file outside it, after the session started.
// Apply refuses, naming the link, and nothing outside changes; an apply
// without links still writes and stages as git apply --3way did.
func TestApplyNeverWritesThroughALink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setup := func(t *testing.T) (repo string, in Info) {
		repo = newRepo(t)
		require.NoError(t, os.MkdirAll(filepath.Join(repo, "pkg"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(repo, "pkg", "a.txt"), []byte("a\n"), 0o644))
		_, err := Commit(ctx, repo, "pkg")
		require.NoError(t, err)
		in, err = Create(ctx, repo, t.TempDir(), "s", "")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "pkg", "a.txt"), []byte("changed\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "pkg", "new.txt"), []byte("new\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "f.txt"), []byte("two\n"), 0o644))
		return repo, in
	}

	t.Run("a directory replaced by a link", func(t *testing.T) {
		t.Parallel()
		repo, in := setup(t)
		files := map[string]string{"a.txt": "a\n"}
		out := outside(t, files)
		require.NoError(t, os.RemoveAll(filepath.Join(repo, "pkg")))
		require.NoError(t, os.Symlink(out, filepath.Join(repo, "pkg")))
		d, err := Diff(ctx, in)
		require.NoError(t, err)
		err = Apply(ctx, repo, d)
		require.ErrorIs(t, err, ErrLink)
		require.ErrorContains(t, err, "pkg in "+repo+" is a symbolic link (to "+out+")")
		require.ErrorContains(t, err, "nothing was changed")
		requireUntouched(t, out, files)
		b, _ := os.ReadFile(filepath.Join(repo, "f.txt"))
		require.Equal(t, "one\n", string(b), "nothing in the checkout changed either")
	})

	t.Run("a file replaced by a link", func(t *testing.T) {
		t.Parallel()
		repo, in := setup(t)
		files := map[string]string{"f.txt": "one\n"}
		out := outside(t, files)
		require.NoError(t, os.Remove(filepath.Join(repo, "f.txt")))
		require.NoError(t, os.Symlink(filepath.Join(out, "f.txt"), filepath.Join(repo, "f.txt")))
		d, err := Diff(ctx, in)
		require.NoError(t, err)
		require.Error(t, Apply(ctx, repo, d))
		requireUntouched(t, out, files)
	})

	t.Run("no link", func(t *testing.T) {
		t.Parallel()
		repo, in := setup(t)
		d, err := Diff(ctx, in)
		require.NoError(t, err)
		require.NoError(t, Apply(ctx, repo, d))
		for p, want := range map[string]string{"f.txt": "two\n", "pkg/a.txt": "changed\n", "pkg/new.txt": "new\n"} {
			b, err := os.ReadFile(filepath.Join(repo, p))
			require.NoError(t, err)
			require.Equal(t, want, string(b), p)
		}
		status, err := git(ctx, repo, nil, "status", "--porcelain")
		require.NoError(t, err)
		require.Equal(t, "M  f.txt\nM  pkg/a.txt\nA  pkg/new.txt", status, "staged, as git apply --3way stages")
	})
}

// TestApplyCopyNeverWritesThroughALink (copy mode, a directory outside
// git): the same links, the same refusals.
func TestApplyCopyNeverWritesThroughALink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	setup := func(t *testing.T) (src string, in Info) {
		src = t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(src, "pkg"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(src, "pkg", "a.txt"), []byte("a\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(src, "f.txt"), []byte("one\n"), 0o644))
		in, err := CreateCopy(ctx, src, t.TempDir(), "s", DefaultCopyLimit)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "pkg", "a.txt"), []byte("changed\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "pkg", "new.txt"), []byte("new\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "f.txt"), []byte("two\n"), 0o644))
		return src, in
	}

	t.Run("a directory replaced by a link", func(t *testing.T) {
		t.Parallel()
		src, in := setup(t)
		files := map[string]string{"a.txt": "a\n"}
		out := outside(t, files)
		require.NoError(t, os.RemoveAll(filepath.Join(src, "pkg")))
		require.NoError(t, os.Symlink(out, filepath.Join(src, "pkg")))
		applied, err := ApplyCopy(ctx, in, "")
		require.ErrorIs(t, err, ErrLink)
		require.ErrorContains(t, err, "pkg in "+src+" is a symbolic link (to "+out+")")
		require.Empty(t, applied)
		requireUntouched(t, out, files)
		b, _ := os.ReadFile(filepath.Join(src, "f.txt"))
		require.Equal(t, "one\n", string(b), "nothing in the directory changed either")
	})

	t.Run("a file replaced by a link", func(t *testing.T) {
		t.Parallel()
		src, in := setup(t)
		files := map[string]string{"f.txt": "one\n"}
		out := outside(t, files)
		require.NoError(t, os.Remove(filepath.Join(src, "f.txt")))
		require.NoError(t, os.Symlink(filepath.Join(out, "f.txt"), filepath.Join(src, "f.txt")))
		_, err := ApplyCopy(ctx, in, "")
		require.Error(t, err)
		requireUntouched(t, out, files)
	})

	t.Run("no link", func(t *testing.T) {
		t.Parallel()
		src, in := setup(t)
		applied, err := ApplyCopy(ctx, in, "")
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"f.txt", "pkg/a.txt", "pkg/new.txt"}, applied)
		for p, want := range map[string]string{"f.txt": "two\n", "pkg/a.txt": "changed\n", "pkg/new.txt": "new\n"} {
			b, err := os.ReadFile(filepath.Join(src, p))
			require.NoError(t, err)
			require.Equal(t, want, string(b), p)
		}
	})
}

// TestApplyRefusesUnstagedChanges: as git apply --3way did, a file the
// patch changes must match the person's index, even when the merge would
// be clean; the checkout is left as it was.
func TestApplyRefusesUnstagedChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	lines := "1\n2\n3\n4\n5\n6\n7\n8\n"
	require.NoError(t, os.WriteFile(filepath.Join(repo, "n.txt"), []byte(lines), 0o644))
	_, err := Commit(ctx, repo, "n")
	require.NoError(t, err)
	in, err := Create(ctx, repo, t.TempDir(), "s", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "n.txt"), []byte("one\n2\n3\n4\n5\n6\n7\n8\n"), 0o644))
	d, err := Diff(ctx, in)
	require.NoError(t, err)
	person := "1\n2\n3\n4\n5\n6\n7\neight\n"
	require.NoError(t, os.WriteFile(filepath.Join(repo, "n.txt"), []byte(person), 0o644))
	err = Apply(ctx, repo, d)
	require.ErrorIs(t, err, ErrConflict)
	require.ErrorContains(t, err, "not staged in "+repo+": n.txt")
	b, _ := os.ReadFile(filepath.Join(repo, "n.txt"))
	require.Equal(t, person, string(b))

	_, err = git(ctx, repo, nil, "add", "n.txt")
	require.NoError(t, err)
	require.NoError(t, Apply(ctx, repo, d), "staged, the same change merges")
	b, _ = os.ReadFile(filepath.Join(repo, "n.txt"))
	require.Equal(t, "one\n2\n3\n4\n5\n6\n7\neight\n", string(b))
}
