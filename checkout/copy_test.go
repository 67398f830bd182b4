package checkout

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCopyOfADirectoryOutsideGit: a directory that is not a repository
// gets a copy (hidden and ignored files too, its broken .git not), the
// session's changes are the copy's diff against it, close commits them
// and keeps the copy, ApplyCopy brings them back and refuses when the
// directory changed since, and Discard removes the copy.
func TestCopyOfADirectoryOutsideGit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	src, state := t.TempDir(), t.TempDir()
	write := func(dir, p, s string) {
		t.Helper()
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), []byte(s), 0o644))
	}
	write(src, "a.txt", "one\n")
	write(src, "sub/b.txt", "bee\n")
	write(src, ".env", "hidden\n")
	write(src, ".gitignore", "build/\n")
	write(src, "build/out.bin", "built\n")
	write(src, "gone.txt", "delete me\n")
	require.NoError(t, os.Symlink("a.txt", filepath.Join(src, "link")))
	write(src, ".git/HEAD", "ref: refs/heads/broken\n") // git finds no repository here

	_, err := Create(ctx, src, state, "s", "")
	require.ErrorIs(t, err, ErrNotGit)
	in, err := CreateCopy(ctx, src, state, "s", DefaultCopyLimit)
	require.NoError(t, err)
	require.True(t, in.Copy)
	require.Equal(t, filepath.Join(state, Dir, "s"), in.Dir)
	for _, p := range []string{"a.txt", "sub/b.txt", ".env", "build/out.bin", "gone.txt"} {
		require.FileExists(t, filepath.Join(in.Dir, p), "copied: %s", p)
	}
	l, err := os.Readlink(filepath.Join(in.Dir, "link"))
	require.NoError(t, err)
	require.Equal(t, "a.txt", l, "a symlink stays a symlink")
	head, _ := os.ReadFile(filepath.Join(in.Dir, ".git", "HEAD"))
	require.Equal(t, "ref: refs/heads/longrun/s\n", string(head), "the directory's broken .git is not copied over the copy's own")
	again, err := CreateCopy(ctx, src, state, "s", DefaultCopyLimit)
	require.NoError(t, err)
	require.Equal(t, in, again, "a retried create finds its copy")

	write(in.Dir, "a.txt", "two\n")
	write(in.Dir, "new.txt", "new\n")
	require.NoError(t, os.Remove(filepath.Join(in.Dir, "gone.txt")))
	write(in.Dir, "build/out.bin", "rebuilt\n") // ignored: not a change
	st, err := Stats(ctx, in.Dir, in.Base)
	require.NoError(t, err)
	require.Equal(t, 3, st.Files)
	d, err := Diff(ctx, in)
	require.NoError(t, err)
	require.Contains(t, d, "+two")
	require.NotContains(t, d, "rebuilt")

	c, err := Close(ctx, in, "change a")
	require.NoError(t, err)
	require.NotEmpty(t, c.Commit)
	require.DirExists(t, in.Dir, "the copy holds the branch: kept until discard")
	d2, err := Diff(ctx, in)
	require.NoError(t, err)
	require.Equal(t, d, d2)

	// The directory changed since the copy: refused, nothing written.
	write(src, "a.txt", "person's\n")
	_, err = ApplyCopy(ctx, in, "")
	require.True(t, errors.Is(err, ErrConflict), "%v", err)
	require.ErrorContains(t, err, "a.txt")
	require.NoFileExists(t, filepath.Join(src, "new.txt"), "a refused apply changes nothing")
	write(src, "a.txt", "one\n")

	applied, err := ApplyCopy(ctx, in, "")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"a.txt", "new.txt", "gone.txt"}, applied)
	b, _ := os.ReadFile(filepath.Join(src, "a.txt"))
	require.Equal(t, "two\n", string(b))
	require.FileExists(t, filepath.Join(src, "new.txt"))
	require.NoFileExists(t, filepath.Join(src, "gone.txt"))
	b, _ = os.ReadFile(filepath.Join(src, "build", "out.bin"))
	require.Equal(t, "built\n", string(b), "ignored files are not brought back")

	require.NoError(t, Discard(ctx, in))
	require.NoDirExists(t, in.Dir)
	require.FileExists(t, filepath.Join(src, "a.txt"), "discard leaves the directory copied alone")
}

func TestCopyRefusesALargeDirectory(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		require.NoError(t, os.WriteFile(filepath.Join(src, n), []byte("x"), 0o644))
	}
	_, err := CreateCopy(context.Background(), src, t.TempDir(), "s", CopyLimit{Files: 2, Bytes: 1 << 20})
	require.ErrorIs(t, err, ErrTooLarge)
	require.ErrorContains(t, err, "more than 2 files")
}

// copyTree says when it copied an entry that is .git but for its case:
// where the file system folds case, git takes it for a repository, so
// the copy's first commit then takes the nested-repository care of every
// other add (addAll) rather than a plain git add.
func TestCopyTreeTellsAGitOfAnotherCase(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		files   []string
		gitLike bool
	}{
		"plain":                  {files: []string{"a.txt", ".gitignore", "sub/.gitattributes"}},
		"a nested .git left out": {files: []string{"a.txt", "lib/.git/config"}},
		"a nested .GIT":          {files: []string{"a.txt", "lib/.GIT/config"}, gitLike: true},
		"a .Git file":            {files: []string{"lib/.Git"}, gitLike: true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			src, dst := t.TempDir(), t.TempDir()
			for _, f := range tc.files {
				writeFile(t, src, f, "x\n")
			}
			_, gitLike, err := copyTree(context.Background(), src, dst)
			require.NoError(t, err)
			require.Equal(t, tc.gitLike, gitLike)
		})
	}
}
