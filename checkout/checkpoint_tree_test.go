package checkout

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The paths mode's tree is the full look's, whatever happened to the
// files: two checkouts of one repository get the same random changes
// (edits, new files in new directories, deletions, chmod +x, links, a
// file become a directory and back, ignored files, .gitignore itself,
// CRLF under a text attribute, changes nobody reports); one is
// checkpointed with the paths the changes report (a full look when some
// were not), the other with a full look every time, and their trees
// must be the same after every step. LONGRUN_CKPT_SEEDS and
// LONGRUN_CKPT_STEPS make the run longer.
func TestCheckpointPathsTreeIsTheFullLooks(t *testing.T) {
	t.Parallel()
	seeds, steps := envInt("LONGRUN_CKPT_SEEDS", 3), envInt("LONGRUN_CKPT_STEPS", 40)
	for seed := 1; seed <= seeds; seed++ {
		for _, sub := range []string{"", "a"} {
			t.Run(fmt.Sprintf("seed%d-sub%q", seed, sub), func(t *testing.T) {
				t.Parallel()
				checkpointProperty(t, int64(seed), steps, sub)
			})
		}
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func checkpointProperty(t *testing.T, seed int64, steps int, sub string) {
	ctx := context.Background()
	rnd := rand.New(rand.NewSource(seed))
	repo, state := newRepo(t), t.TempDir()
	// The base: a tracked file the ignore rules would exclude (kept as
	// git add keeps it), one in an ignored directory, an executable, a
	// link, nested directories, a text attribute.
	base := map[string]string{
		".gitignore":     "*.log\nign/\n",
		".gitattributes": "*.crlf text\n",
		"keep.log":       "tracked, ignored by pattern\n",
		"ign/tracked":    "tracked in an ignored directory\n",
		"a/b/c.txt":      "deep\n",
		"a/run.sh":       "#!/bin/sh\n",
		"d/e.crlf":       "lf only\n",
	}
	for name, body := range base {
		writeFile(t, repo, name, body)
	}
	require.NoError(t, os.Chmod(filepath.Join(repo, "a/run.sh"), 0o755))
	require.NoError(t, os.Symlink("b/c.txt", filepath.Join(repo, "a/link")))
	_, err := git(ctx, repo, nil, "add", "--all", "--force")
	require.NoError(t, err)
	_, err = Commit(ctx, repo, "base")
	require.NoError(t, err)

	inA, err := Create(ctx, repo, state, fmt.Sprintf("pa%d%s", seed, sub), "")
	require.NoError(t, err)
	inB, err := Create(ctx, repo, state, fmt.Sprintf("pb%d%s", seed, sub), "")
	require.NoError(t, err)
	inA.Sub = sub
	dirsA, err := gitDirs(ctx, inA.Dir)
	require.NoError(t, err)
	prevA, err := Checkpoint(ctx, inA, "")
	require.NoError(t, err)
	prevB, err := Checkpoint(ctx, inB, "")
	require.NoError(t, err)
	require.Equal(t, treeOf(t, inB.Dir, prevB), treeOf(t, inA.Dir, prevA))

	treeMode := 0
	for step := 0; step < steps; step++ {
		var reported []string
		all := true
		for n := 1 + rnd.Intn(4); n > 0; n-- {
			ps, ok := randomChange(t, rnd, inA.Dir, inB.Dir)
			all = all && ok
			reported = append(reported, ps...)
		}
		var paths []string
		if all && rnd.Intn(8) != 0 { // now and then a full look anyway
			paths = []string{}
			for _, p := range reported {
				paths = append(paths, relTo(sub, p))
			}
		}
		if os.Getenv("LONGRUN_CKPT_WHY") != "" {
			t.Logf("step %d: reported %q, all %v", step, reported, all)
		}
		wantC, err := Checkpoint(ctx, inB, prevB)
		require.NoError(t, err)
		want := treeOf(t, inB.Dir, wantC)
		if paths != nil {
			res, err := pathsTree(ctx, inA, dirsA, prevA, paths)
			if err != nil && os.Getenv("LONGRUN_CKPT_WHY") != "" {
				t.Logf("step %d: paths %q: %v", step, paths, err)
			}
			if err == nil {
				treeMode++
				require.Equal(t, want, res.tree, "step %d: paths %q\n%s", step, paths, treeDiff(inA.Dir, want, res.tree))
			}
		}
		gotC, err := CheckpointPaths(ctx, inA, prevA, paths)
		require.NoError(t, err)
		require.Equal(t, want, treeOf(t, inA.Dir, gotC), "step %d: paths %q (nil: a full look)\n%s", step, paths, treeDiff(inA.Dir, want, gotC))
		require.Equal(t, wantC == prevB, gotC == prevA, "step %d: unchanged in both or in neither", step)
		prevA, prevB = gotC, wantC
	}
	// The objects the paths mode wrote itself are as git's own.
	_, err = git(ctx, repo, nil, "fsck", "--strict", "--no-progress", "--no-dangling")
	require.NoError(t, err)
	t.Logf("%d steps, %d through the paths mode's tree", steps, treeMode)
	require.Greater(t, treeMode, steps/3, "most steps should not need the full look")
}

// relTo makes p (relative to the checkout's top) relative to sub, as a
// tool working there reports it.
func relTo(sub, p string) string {
	if sub == "" {
		return p
	}
	if r, ok := strings.CutPrefix(p, sub+"/"); ok {
		return r
	}
	return "../" + p
}

// treeDiff shows how got differs from want, for a failure's message.
func treeDiff(dir, want, got string) string {
	out, err := git(context.Background(), dir, nil, "diff-tree", "-r", want, got)
	if err != nil {
		return err.Error()
	}
	return out
}

func treeOf(t *testing.T, dir, commit string) string {
	t.Helper()
	tree, err := git(context.Background(), dir, nil, "rev-parse", commit+"^{tree}")
	require.NoError(t, err)
	return tree
}

func writeFile(t *testing.T, dir, name, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(name))
	require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
	require.NoError(t, os.WriteFile(p, []byte(body), 0o644))
}

// listing gives the files (and links) and the directories under dir,
// .git aside, sorted.
func listing(t *testing.T, dir string) (files, dirs []string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case rel == ".git" && d.IsDir():
			return filepath.SkipDir
		case rel == ".git": // a worktree's: SkipDir would skip its siblings
		case rel == ".":
		case d.IsDir():
			dirs = append(dirs, rel)
		default:
			files = append(files, rel)
		}
		return nil
	}))
	sort.Strings(files)
	sort.Strings(dirs)
	return files, dirs
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

var (
	propDirs  = []string{"", "a", "a/b", "a/n1/n2", "d", "ign", "x/y/z", "keep"}
	propNames = []string{"f.txt", "g.go", "h.log", "k.crlf", "keep.log", "tracked", "new", "keep"}
)

// randomChange makes one random change in both checkouts and gives the
// paths a file tool would report (relative to the top); ok is false when
// the change is one no tool reports (a shell command's).
func randomChange(t *testing.T, rnd *rand.Rand, dirs ...string) (paths []string, ok bool) {
	t.Helper()
	files, subdirs := listing(t, dirs[0])
	// The rules files change only as rules files (case 9): made into a
	// directory or a link they would leave few ignored files to test.
	files = slices.DeleteFunc(files, func(f string) bool { return f == ".gitignore" || f == ".gitattributes" })
	pick := func(l []string) string {
		if len(l) == 0 {
			return ""
		}
		return l[rnd.Intn(len(l))]
	}
	body := func() string {
		if rnd.Intn(6) == 0 {
			return fmt.Sprintf("crlf %d\r\nline\r\n", rnd.Intn(100))
		}
		return fmt.Sprintf("body %d\n", rnd.Intn(1000))
	}
	each := func(f func(dir string)) {
		for _, d := range dirs {
			f(d)
		}
	}
	at := func(dir, p string) string { return filepath.Join(dir, filepath.FromSlash(p)) }
	isRegular := func(p string) bool {
		fi, err := os.Lstat(at(dirs[0], p))
		return err == nil && fi.Mode().IsRegular()
	}
	ok = true
	switch op := rnd.Intn(14); op {
	case 0, 1: // edit
		f := pick(files)
		if f == "" || !isRegular(f) {
			return nil, true
		}
		b := body()
		each(func(d string) { require.NoError(t, os.WriteFile(at(d, f), []byte(b), 0o644)) })
		paths = []string{f}
	case 2, 3: // a new file, maybe in new directories
		p := path.Join(pick(propDirs), pick(propNames))
		b := body()
		each(func(d string) {
			if os.MkdirAll(filepath.Dir(at(d, p)), 0o755) == nil {
				os.RemoveAll(at(d, p))
				require.NoError(t, os.WriteFile(at(d, p), []byte(b), 0o644))
			}
		})
		paths = []string{p}
	case 4: // delete
		f := pick(files)
		if f == "" {
			return nil, true
		}
		each(func(d string) { require.NoError(t, os.Remove(at(d, f))) })
		paths = []string{f}
	case 5: // chmod +x or -x
		f := pick(files)
		if f == "" || !isRegular(f) {
			return nil, true
		}
		mode := os.FileMode(0o755)
		if rnd.Intn(2) == 0 {
			mode = 0o644
		}
		each(func(d string) { require.NoError(t, os.Chmod(at(d, f), mode)) })
		paths = []string{f}
	case 6: // a link, new or in place of a file
		p := pick(files)
		if p == "" || rnd.Intn(2) == 0 {
			p = path.Join(pick(propDirs), "l"+strconv.Itoa(rnd.Intn(5)))
		}
		target := pick([]string{"f.txt", "../nowhere", "b", "/etc/hostname"})
		each(func(d string) {
			if os.MkdirAll(filepath.Dir(at(d, p)), 0o755) == nil {
				os.RemoveAll(at(d, p))
				require.NoError(t, os.Symlink(target, at(d, p)))
			}
		})
		paths = []string{p}
	case 7: // a file becomes a directory
		f := pick(files)
		if f == "" {
			return nil, true
		}
		each(func(d string) {
			require.NoError(t, os.Remove(at(d, f)))
			writeFile(t, d, f+"/inner.txt", "inside\n")
		})
		paths = []string{f + "/inner.txt"}
		if rnd.Intn(3) != 0 {
			paths = append(paths, f)
		}
	case 8: // a directory becomes a file
		dir := pick(subdirs)
		if dir == "" {
			return nil, true
		}
		for _, f := range files {
			if strings.HasPrefix(f, dir+"/") {
				paths = append(paths, f)
			}
		}
		each(func(d string) {
			require.NoError(t, os.RemoveAll(at(d, dir)))
			require.NoError(t, os.WriteFile(at(d, dir), []byte("was a directory\n"), 0o644))
		})
		paths = append(paths, dir)
	case 9: // .gitignore rewritten
		var pats []string
		for i, p := range []string{"*.log", "ign/", "*.go", "!keep.log", "d/", "x/", "new", "l[0-9]"} {
			if rnd.Intn(4) < 1+2*btoi(i < 2) { // *.log and ign/ mostly kept
				pats = append(pats, p)
			}
		}
		b := strings.Join(pats, "\n") + "\n"
		each(func(d string) {
			require.NoError(t, os.RemoveAll(at(d, ".gitignore"))) // it may have become a directory
			require.NoError(t, os.WriteFile(at(d, ".gitignore"), []byte(b), 0o644))
		})
		paths = []string{".gitignore"}
	case 10: // a rename
		f := pick(files)
		if f == "" {
			return nil, true
		}
		to := path.Join(pick(propDirs), "moved"+strconv.Itoa(rnd.Intn(3)))
		moved := true
		each(func(d string) {
			if os.MkdirAll(filepath.Dir(at(d, to)), 0o755) != nil || os.Rename(at(d, f), at(d, to)) != nil {
				moved = false
			}
		})
		if !moved {
			return nil, false // the checkouts may differ now: only a full look is sure
		}
		paths = []string{f, to}
	case 11: // a file made and removed in the batch, or an empty directory
		p := path.Join(pick(propDirs), "tmp"+strconv.Itoa(rnd.Intn(3)))
		if rnd.Intn(2) == 0 {
			each(func(d string) { _ = os.MkdirAll(at(d, p), 0o755) })
		}
		paths = []string{p}
	case 12: // a new directory with files, reported as the directory
		p := path.Join(pick(propDirs), "nd"+strconv.Itoa(rnd.Intn(3)))
		each(func(d string) {
			if os.MkdirAll(at(d, p+"/deeper"), 0o755) == nil {
				_ = os.WriteFile(at(d, p+"/one.txt"), []byte("1\n"), 0o644) // not where it is a directory
				_ = os.WriteFile(at(d, p+"/deeper/two.log"), []byte("2\n"), 0o644)
			}
		})
		paths = []string{p}
	default: // a shell command: nobody says what changed
		f := pick(files)
		if f == "" || !isRegular(f) {
			return nil, false
		}
		each(func(d string) { require.NoError(t, os.WriteFile(at(d, f), []byte("by a command\n"), 0o644)) })
		return nil, false
	}
	return paths, ok
}

// edgeStep changes a checkout and gives the paths a tool would report;
// tree says whether the paths mode should answer it without the full
// look, command that it is a command's change (a full look, through the
// index the paths mode left lagging).
type edgeStep struct {
	change  func(t *testing.T, dir string) []string
	tree    bool
	command bool
}

// Cases the random changes reach seldom or never, each against the full
// look of a twin checkout, and whether the paths mode answers them
// itself.
func TestCheckpointPathsEdges(t *testing.T) {
	t.Parallel()
	write := func(name, body string) func(t *testing.T, dir string) []string {
		return func(t *testing.T, dir string) []string {
			writeFile(t, dir, name, body)
			return []string{name}
		}
	}
	for _, tc := range []struct {
		name   string
		base   map[string]string
		config []string
		steps  []edgeStep
	}{
		{"an ignored file where a tracked directory was", map[string]string{".gitignore": "out\n", "keep.txt": "k\n", "out/a.txt": "a\n"}, nil, []edgeStep{
			{func(t *testing.T, dir string) []string {
				require.NoError(t, os.RemoveAll(filepath.Join(dir, "out")))
				writeFile(t, dir, "out", "now a file\n")
				return []string{"out"}
			}, true, false},
		}},
		{"a tracked ignored file deleted, made again, then a full look", map[string]string{".gitignore": "*.log\n", "keep.log": "tracked\n"}, nil, []edgeStep{
			{func(t *testing.T, dir string) []string {
				require.NoError(t, os.Remove(filepath.Join(dir, "keep.log")))
				return []string{"keep.log"}
			}, true, false},
			{write("keep.log", "again\n"), true, false},
			{write("other.txt", "by a command\n"), false, true},
		}},
		{"an ignored tracked file edited, then a full look", map[string]string{".gitignore": "*.log\n", "keep.log": "tracked\n"}, nil, []edgeStep{
			{write("keep.log", "edited\n"), true, false},
			{write("new.log", "ignored\n"), true, false},
			{write("other.txt", "by a command\n"), false, true},
		}},
		{"only the paths under a file become a directory, or under a directory become a file", map[string]string{"f": "file\n", "d/x": "x\n", "d/y": "y\n"}, nil, []edgeStep{
			{func(t *testing.T, dir string) []string {
				require.NoError(t, os.Remove(filepath.Join(dir, "f")))
				writeFile(t, dir, "f/inner", "in\n")
				require.NoError(t, os.Remove(filepath.Join(dir, "f/inner")))
				return []string{"f/inner"} // f is an empty directory now
			}, true, false},
			{func(t *testing.T, dir string) []string {
				require.NoError(t, os.RemoveAll(filepath.Join(dir, "d")))
				writeFile(t, dir, "d", "now a file\n")
				return []string{"d/x"}
			}, true, false},
		}},
		{"a path through a symbolic link", map[string]string{"real/f.txt": "f\n"}, nil, []edgeStep{
			{func(t *testing.T, dir string) []string {
				require.NoError(t, os.Symlink("real", filepath.Join(dir, "lnk")))
				return []string{"lnk"}
			}, true, false},
			{func(t *testing.T, dir string) []string {
				writeFile(t, dir, "real/g.txt", "g\n")
				return []string{"lnk/g.txt", "real/g.txt"}
			}, false, false},
		}},
		{"a file too large for the paths mode to hold", map[string]string{"f.txt": "f\n"}, nil, []edgeStep{
			{write("big.bin", strings.Repeat("0123456789abcdef", maxPathsBlob/16+1)), false, false},
			{write("f.txt", "small again\n"), true, false},
		}},
		{"a nested repository", map[string]string{"f.txt": "f\n"}, nil, []edgeStep{
			{func(t *testing.T, dir string) []string {
				_, err := git(context.Background(), dir, nil, "init", "-q", filepath.Join(dir, "nested"))
				require.NoError(t, err)
				writeFile(t, dir, "nested/x.txt", "x\n")
				_, err = Commit(context.Background(), filepath.Join(dir, "nested"), "nested")
				require.NoError(t, err)
				return []string{"nested/x.txt"}
			}, false, false},
		}},
		{"core.fileMode false keeps the recorded bit", map[string]string{"run.sh": "#!/bin/sh\n"}, []string{"core.fileMode", "false"}, []edgeStep{
			{func(t *testing.T, dir string) []string {
				require.NoError(t, os.Chmod(filepath.Join(dir, "run.sh"), 0o644))
				writeFile(t, dir, "new.sh", "#!/bin/sh\n")
				require.NoError(t, os.Chmod(filepath.Join(dir, "new.sh"), 0o755))
				return []string{"run.sh", "new.sh"}
			}, true, false},
			{write("other.txt", "by a command\n"), false, true},
		}},
		{"a text attribute: CRLF is a full look, LF is not", map[string]string{".gitattributes": "*.txt text\n"}, nil, []edgeStep{
			{write("a.txt", "lf\n"), true, false},
			{write("b.txt", "crlf\r\n"), false, false},
		}},
		{"a filter is a full look", map[string]string{".gitattributes": "*.f filter=upper\n"}, []string{"filter.upper.clean", "tr a-z A-Z"}, []edgeStep{
			{write("a.f", "lower\n"), false, false},
		}},
		{"git's order of names", map[string]string{"a/x": "1\n", "a.b": "2\n", "a-b": "3\n", "a0": "4\n"}, nil, []edgeStep{
			{write("a/y", "5\n"), true, false},
			{write("a.c/z", "6\n"), true, false},
		}},
		{"paths outside the checkout", map[string]string{"f.txt": "f\n"}, nil, []edgeStep{
			{func(t *testing.T, dir string) []string { return []string{"../outside"} }, false, false},
			{func(t *testing.T, dir string) []string { return []string{"/etc/passwd"} }, false, false},
			{func(t *testing.T, dir string) []string { return []string{".git/config"} }, false, false},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			repo, state := newRepo(t), t.TempDir()
			for name, body := range tc.base {
				writeFile(t, repo, name, body)
			}
			if strings.Contains(tc.name, "fileMode") {
				require.NoError(t, os.Chmod(filepath.Join(repo, "run.sh"), 0o755))
			}
			_, err := git(ctx, repo, nil, "add", "--all", "--force")
			require.NoError(t, err)
			_, err = Commit(ctx, repo, "base")
			require.NoError(t, err)
			if tc.config != nil {
				_, err = git(ctx, repo, nil, append([]string{"config"}, tc.config...)...)
				require.NoError(t, err)
			}
			inA, err := Create(ctx, repo, state, "ea", "")
			require.NoError(t, err)
			inB, err := Create(ctx, repo, state, "eb", "")
			require.NoError(t, err)
			dirsA, err := gitDirs(ctx, inA.Dir)
			require.NoError(t, err)
			prevA, err := Checkpoint(ctx, inA, "")
			require.NoError(t, err)
			prevB, err := Checkpoint(ctx, inB, "")
			require.NoError(t, err)
			for i, s := range tc.steps {
				paths := s.change(t, inA.Dir)
				s.change(t, inB.Dir)
				if s.command {
					paths = nil
				}
				wantC, err := Checkpoint(ctx, inB, prevB)
				require.NoError(t, err)
				want := treeOf(t, inB.Dir, wantC)
				if paths != nil {
					_, err := pathsTree(ctx, inA, dirsA, prevA, paths)
					require.Equal(t, s.tree, err == nil, "step %d: the paths mode answers it itself (%v)", i, err)
				}
				gotC, err := CheckpointPaths(ctx, inA, prevA, paths)
				require.NoError(t, err)
				require.Equal(t, want, treeOf(t, inA.Dir, gotC), "step %d\n%s", i, treeDiff(inA.Dir, want, gotC))
				prevA, prevB = gotC, wantC
			}
		})
	}
}

// readChanged reads beneath the checkout only: a directory on the way
// that became a symbolic link out of it (after look checked it) is an
// error, not the file it points at.
func TestReadChangedStaysInTheCheckout(t *testing.T) {
	t.Parallel()
	dir, outside := t.TempDir(), t.TempDir()
	writeFile(t, outside, "secret", "not the checkout's\n")
	writeFile(t, dir, "d/f.txt", "in\n")
	b, err := readChanged(dir, "d/f.txt")
	require.NoError(t, err)
	require.Equal(t, "in\n", string(b))
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, "lnk")))
	_, err = readChanged(dir, "lnk/secret")
	require.Error(t, err)
}
