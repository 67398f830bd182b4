package checkout

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The close decides what is staged, and which control files changed,
// from the add's own diff-index records (ignoringSubmodules) where it
// asked git diff --cached --ignore-submodules=all before: on every index
// a session can leave (gitlinks added, moved, removed, put where a file
// was and the other way, unmerged entries, plain files), both name the
// same paths.
func TestIndexChangesAsGitDiffSeesThem(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const (
		linkA = "1111111111111111111111111111111111111111"
		linkB = "2222222222222222222222222222222222222222"
	)
	// HEAD has plain files, a gitlink "sub" and a file "was-file".
	base := func(t *testing.T) (string, string) {
		dir := t.TempDir()
		plainGit(t, dir, "init", "-q", "-b", "main")
		writeFile(t, dir, "a.txt", "a\n")
		writeFile(t, dir, "was-file", "f\n")
		writeFile(t, dir, "gone.txt", "g\n")
		plainGit(t, dir, "add", "a.txt", "was-file", "gone.txt")
		plainGit(t, dir, "update-index", "--add", "--cacheinfo", gitlinkMode+","+linkA+",sub")
		plainGit(t, dir, "update-index", "--add", "--cacheinfo", gitlinkMode+","+linkA+",was-link")
		plainGit(t, dir, "commit", "-q", "-m", "base")
		return dir, plainGit(t, dir, "rev-parse", "HEAD")
	}
	blob := func(t *testing.T, dir, body string) string {
		out, err := run(ctx, dir, nil, body, "hash-object", "-w", "--stdin")
		require.NoError(t, err)
		return strings.TrimSpace(out)
	}
	for name, change := range map[string]func(t *testing.T, dir string){
		"nothing": func(t *testing.T, dir string) {},
		"plain files": func(t *testing.T, dir string) {
			writeFile(t, dir, "a.txt", "changed\n")
			writeFile(t, dir, "new.txt", "new\n")
			plainGit(t, dir, "add", "a.txt", "new.txt")
			plainGit(t, dir, "rm", "-q", "--cached", "gone.txt")
		},
		"a gitlink added": func(t *testing.T, dir string) {
			plainGit(t, dir, "update-index", "--add", "--cacheinfo", gitlinkMode+","+linkB+",other")
		},
		"a gitlink moved": func(t *testing.T, dir string) {
			plainGit(t, dir, "update-index", "--cacheinfo", gitlinkMode+","+linkB+",sub")
		},
		"a gitlink removed": func(t *testing.T, dir string) {
			plainGit(t, dir, "update-index", "--force-remove", "sub")
		},
		"a file become a gitlink": func(t *testing.T, dir string) {
			plainGit(t, dir, "update-index", "--cacheinfo", gitlinkMode+","+linkB+",was-file")
		},
		"a gitlink become a file": func(t *testing.T, dir string) {
			plainGit(t, dir, "update-index", "--cacheinfo", "100644,"+blob(t, dir, "x\n")+",was-link")
		},
		"a file unmerged": func(t *testing.T, dir string) {
			one, two, three := blob(t, dir, "1\n"), blob(t, dir, "2\n"), blob(t, dir, "3\n")
			_, err := run(ctx, dir, nil, fmt.Sprintf("0 %s\ta.txt\n100644 %s 1\ta.txt\n100644 %s 2\ta.txt\n100644 %s 3\ta.txt\n",
				strings.Repeat("0", 40), one, two, three), "update-index", "--index-info")
			require.NoError(t, err)
		},
		"a gitlink unmerged": func(t *testing.T, dir string) {
			_, err := run(ctx, dir, nil, fmt.Sprintf("0 %s\tsub\n160000 %s 1\tsub\n160000 %s 2\tsub\n",
				strings.Repeat("0", 40), linkA, linkB), "update-index", "--index-info")
			require.NoError(t, err)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir, head := base(t)
			change(t, dir)
			want, err := gitRaw(ctx, dir, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--cached", "--name-only", "-z", "--no-renames", "HEAD", "--")
			require.NoError(t, err)
			_, quietErr := git(ctx, dir, nil, "diff", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all", "--cached", "--quiet")
			changes, err := indexChanges(ctx, dir, nil, head)
			require.NoError(t, err)
			got := []string{}
			for _, c := range changes {
				if !c.ignoringSubmodules() {
					got = append(got, c.path)
				}
			}
			wantPaths := slices.DeleteFunc(strings.Split(want, "\x00"), func(p string) bool { return p == "" })
			slices.Sort(wantPaths)
			slices.Sort(got)
			got = slices.Compact(got)
			require.Equal(t, wantPaths, got, "the paths git diff --cached names")
			require.Equal(t, quietErr != nil, len(got) > 0, "staged, as git diff --cached --quiet says")
		})
	}
}
