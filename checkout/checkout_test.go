package checkout

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSanitizeMakesValidRefs(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"plain":          "e2e-TestX-ab12",
		"slash":          "team/feature",
		"dots":           "..a..b.lock",
		"spaces":         "fix the bug please",
		"control":        "a\x00b\nc",
		"at brace":       "x@{1}",
		"leading dash":   "-rf",
		"empty":          "",
		"only bad chars": "~^:?*[\\",
		"long":           strings.Repeat("x", 300),
	}
	seen := map[string]string{}
	for name, id := range cases {
		t.Run(name, func(t *testing.T) {
			s := Sanitize(id)
			require.NotEmpty(t, s)
			out, err := exec.Command("git", "check-ref-format", "refs/heads/"+BranchPrefix+s).CombinedOutput()
			require.NoError(t, err, "%q -> %q is not a valid ref: %s", id, s, out)
			require.NotContains(t, s, "/")
			require.Equal(t, s, Sanitize(id), "stable")
		})
		seen[Sanitize(id)] = id
	}
	require.Len(t, seen, len(cases), "two ids share a branch")
	require.Equal(t, "e2e-TestX-ab12", Sanitize("e2e-TestX-ab12"), "a valid id is kept as it is")
	require.NotEqual(t, Sanitize("a/b"), Sanitize("a-b"), "ids differing only in replaced characters stay apart")
}

// newRepo is a repository with one commit of f.txt = "one\n".
func newRepo(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}} {
		_, err := git(context.Background(), dir, nil, args...)
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "f.txt"), []byte("one\n"), 0o644))
	_, err := Commit(context.Background(), dir, "first")
	require.NoError(t, err)
	return dir
}

func TestCreateFinishDiffApplyDiscard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state := newRepo(t), t.TempDir()

	in, err := Create(ctx, repo, state, "sess/1", "")
	require.NoError(t, err)
	require.Equal(t, filepath.Join(state, Dir, Sanitize("sess/1")), in.Dir)
	require.Equal(t, Branch("sess/1"), in.Branch)
	again, err := Create(ctx, repo, state, "sess/1", "")
	require.NoError(t, err, "a retried create finds its checkout")
	require.Equal(t, in, again)

	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "f.txt"), []byte("two\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "new.txt"), []byte("new\n"), 0o644))
	d, err := Diff(ctx, in)
	require.NoError(t, err)
	require.Contains(t, d, "+two")
	require.Contains(t, d, "new.txt", "untracked files are part of the diff")
	b, _ := os.ReadFile(filepath.Join(repo, "f.txt"))
	require.Equal(t, "one\n", string(b), "the person's checkout is untouched")

	commit, err := Finish(ctx, in, "change f")
	require.NoError(t, err)
	require.NotEmpty(t, commit)
	require.NoDirExists(t, in.Dir, "the checkout is removed at the end")
	msg, err := git(ctx, repo, nil, "log", "-1", "--format=%s", in.Branch)
	require.NoError(t, err)
	require.Equal(t, "change f", msg)
	d2, err := Diff(ctx, in)
	require.NoError(t, err)
	require.Equal(t, d, d2, "the branch holds what the checkout held")

	require.NoError(t, Apply(ctx, repo, d2))
	b, _ = os.ReadFile(filepath.Join(repo, "f.txt"))
	require.Equal(t, "two\n", string(b))

	require.NoError(t, Discard(ctx, in))
	_, err = git(ctx, repo, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+in.Branch)
	require.Error(t, err, "the branch is gone")
	require.NoError(t, Discard(ctx, in), "discarding twice is fine")
}

func TestApplyRefusesAConflict(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state := newRepo(t), t.TempDir()
	in, err := Create(ctx, repo, state, "s", "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "f.txt"), []byte("session\n"), 0o644))
	d, err := Diff(ctx, in)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "f.txt"), []byte("person\n"), 0o644))
	require.ErrorIs(t, Apply(ctx, repo, d), ErrConflict)
	b, _ := os.ReadFile(filepath.Join(repo, "f.txt"))
	require.Equal(t, "person\n", string(b), "a refused apply leaves the checkout as it was")
}

func TestCreateOutsideGitAndBadBase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := Create(ctx, t.TempDir(), t.TempDir(), "s", "")
	require.ErrorIs(t, err, ErrNotGit)
	_, err = Create(ctx, newRepo(t), t.TempDir(), "s", "no-such-ref")
	require.ErrorContains(t, err, `base "no-such-ref" is not a commit`)
}

func TestCreateFromABaseAndASubdirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := newRepo(t)
	first, err := git(ctx, repo, nil, "rev-parse", "HEAD")
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "pkg"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "pkg", "g.txt"), []byte("g\n"), 0o644))
	second, err := Commit(ctx, repo, "second")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "pkg", "h.txt"), []byte("h\n"), 0o644))
	_, err = Commit(ctx, repo, "third")
	require.NoError(t, err)

	in, err := Create(ctx, filepath.Join(repo, "pkg"), t.TempDir(), "s", second)
	require.NoError(t, err)
	require.Equal(t, second, in.Base)
	require.Equal(t, "pkg", in.Sub)
	require.FileExists(t, filepath.Join(in.Dir, "pkg", "g.txt"))
	require.NoFileExists(t, filepath.Join(in.Dir, "pkg", "h.txt"), "the checkout is at the base, not HEAD")

	// A base older than the working directory: the checkout would not
	// hold it, and the session would find no files.
	_, err = Create(ctx, filepath.Join(repo, "pkg"), t.TempDir(), "s2", first)
	require.ErrorIs(t, err, ErrNotInBase)
	require.ErrorContains(t, err, "is committed only after the base")
}

// Two sessions change the same line: the first applies, the second then
// conflicts and is refused with the person's checkout as the first left
// it (git apply --3way --check alone would let it through and leave
// conflict markers).
func TestApplyRefusesASecondSessionOnTheSameLine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo, state := newRepo(t), t.TempDir()
	var diffs []string
	for _, w := range []string{"a", "b"} {
		in, err := Create(ctx, repo, state, w, "")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(in.Dir, "f.txt"), []byte(w+"\n"), 0o644))
		d, err := Diff(ctx, in)
		require.NoError(t, err)
		diffs = append(diffs, d)
	}
	require.NoError(t, Apply(ctx, repo, diffs[0]))
	require.ErrorIs(t, Apply(ctx, repo, diffs[1]), ErrConflict)
	b, _ := os.ReadFile(filepath.Join(repo, "f.txt"))
	require.Equal(t, "a\n", string(b))
	status, err := git(ctx, repo, nil, "status", "--porcelain")
	require.NoError(t, err)
	require.Equal(t, "M  f.txt", status, "staged by the first apply (--3way), no conflict entries")
}
