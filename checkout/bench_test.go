package checkout

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"
)

// benchFiles is the synthetic repository's size: LONGRUN_BENCH_FILES,
// default 100,000 files of about 200 bytes in 1,000 directories.
func benchFiles(b *testing.B) int {
	n := 100_000
	if v := os.Getenv("LONGRUN_BENCH_FILES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			b.Fatalf("LONGRUN_BENCH_FILES=%q: want a positive number", v)
		}
	}
	return n
}

// benchRepo makes the synthetic repository once per benchmark.
func benchRepo(b *testing.B, files int) string {
	b.Helper()
	dir := b.TempDir()
	run := func(args ...string) {
		b.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=b", "-c", "user.email=b@b"}, args...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	run("init", "-q", "-b", "main")
	body := make([]byte, 200)
	for i := range body {
		body[i] = 'a' + byte(i%26)
	}
	body[len(body)-1] = '\n'
	for i := 0; i < files; i++ {
		d := filepath.Join(dir, fmt.Sprintf("d%03d", i%1000))
		if i < 1000 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%06d.txt", i)), body, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run("add", "--all")
	run("commit", "-q", "-m", "synthetic")
	return dir
}

// BenchmarkCheckouts: making a session's checkout (Create: git worktree
// add on a new branch, with its checks) against plain git worktree add,
// on a synthetic repository of LONGRUN_BENCH_FILES files; and what a
// session pays per call that may change files (Stats, after a one-file
// change) and at its end (Close: commit and remove). Run with
// make bench-checkouts (docs/BENCHMARKS.md, "Checkouts").
func BenchmarkCheckouts(b *testing.B) {
	files := benchFiles(b)
	repo := benchRepo(b, files)
	ctx := context.Background()
	b.Logf("synthetic repository: %d files", files)

	// Paired, in alternating order, so a machine whose speed drifts
	// (a shared one) still gives a fair ratio: the median of the pairs'.
	b.Run("create-vs-git-worktree-add", func(b *testing.B) {
		state := b.TempDir()
		var ours, plain, ratios []float64
		for i := 0; i < b.N; i++ {
			var o, g time.Duration
			runOurs := func() {
				t0 := time.Now()
				in, err := Create(ctx, repo, state, fmt.Sprintf("bench-ours-%d", i), "")
				o = time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				if err := Discard(ctx, in); err != nil {
					b.Fatal(err)
				}
			}
			runGit := func() {
				dir, branch := filepath.Join(state, fmt.Sprintf("w%d", i)), fmt.Sprintf("bench-git-%d", i)
				t0 := time.Now()
				out, err := exec.Command("git", "-C", repo, "worktree", "add", "--quiet", "-b", branch, dir, "HEAD").CombinedOutput()
				g = time.Since(t0)
				if err != nil {
					b.Fatalf("%v: %s", err, out)
				}
				_ = exec.Command("git", "-C", repo, "worktree", "remove", "--force", dir).Run()
				_ = exec.Command("git", "-C", repo, "branch", "-D", branch).Run()
			}
			if i%2 == 0 {
				runOurs()
				runGit()
			} else {
				runGit()
				runOurs()
			}
			ours, plain = append(ours, o.Seconds()*1000), append(plain, g.Seconds()*1000)
			ratios = append(ratios, float64(o)/float64(g))
		}
		b.ReportMetric(median(ours), "ours-ms")
		b.ReportMetric(median(plain), "git-ms")
		b.ReportMetric(median(ratios), "ratio")
	})
	state := b.TempDir()
	in, err := Create(ctx, repo, state, "bench-stats", "")
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(in.Dir, "d000", "f000000.txt"), []byte("changed\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Run("stats-after-a-change", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			st, err := Stats(ctx, in.Dir, in.Base)
			if err != nil || st.Files != 1 {
				b.Fatalf("%+v %v", st, err)
			}
		}
	})
	b.Run("close", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			c, err := Create(ctx, repo, state, fmt.Sprintf("bench-close-%d", i), "")
			if err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(c.Dir, "d001", "f000001.txt"), []byte("changed\n"), 0o644); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if _, err := Close(ctx, c, "bench"); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
