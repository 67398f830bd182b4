package checkout

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// The cost of one checkpoint after a typical change (three files edited,
// one added) in a synthetic repository of LONGRUN_BENCH_FILES files
// (default 20,000, in 200 directories), against what a person would run
// by hand: git add -A && git commit. Both see the same change each
// iteration. Figures: docs/BENCHMARKS.md, "Checkpoints".
//
//	go test ./checkout -run '^$' -bench Checkpoint -benchtime 30x

func checkpointBenchRepo(b *testing.B) string {
	b.Helper()
	n := 20000
	if v, err := strconv.Atoi(os.Getenv("LONGRUN_BENCH_FILES")); err == nil && v > 0 {
		n = v
	}
	dir := b.TempDir()
	for i := 0; i < n; i++ {
		sub := filepath.Join(dir, fmt.Sprintf("d%03d", i%200))
		if i < 200 {
			if err := os.MkdirAll(sub, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		body := fmt.Sprintf("package p%d\n\n// file %d of the synthetic repository.\nfunc F%d() int { return %d }\n", i%200, i, i, i)
		if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%05d.go", i)), []byte(body), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, args := range [][]string{{"init", "-q", "-b", "main"}, {"add", "--all"}, {"commit", "-q", "-m", "synthetic"}} {
		if _, err := git(ctx, dir, nil, args...); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// typicalChange edits three files and adds one, different each i.
func typicalChange(b *testing.B, dir string, i int) {
	b.Helper()
	for _, f := range []string{"d001/f00001.go", "d050/f00050.go", "d199/f00199.go"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(fmt.Sprintf("package p\n\n// edit %d\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("new%d.go", i)), []byte("package p\n"), 0o644); err != nil {
		b.Fatal(err)
	}
}

// typicalPaths are the files typicalChange(i) writes, as the file tools
// report them.
func typicalPaths(i int) []string {
	return []string{"d001/f00001.go", "d050/f00050.go", "d199/f00199.go", fmt.Sprintf("new%d.go", i)}
}

// BenchmarkCheckpoint makes the repository once and measures, each in a
// worktree of its own: a checkpoint, one given the changed paths (a batch
// of file tools only, CheckpointPaths), a full one right after one given
// the paths, a checkpoint pushed to a bare
// repository on the same disk (what a worker with --checkpoint-remote
// does; the first push, of the whole base, is before the timer), and the
// baseline, git add -A && git commit as a person runs it.
func BenchmarkCheckpoint(b *testing.B) {
	ctx := context.Background()
	repo, state := checkpointBenchRepo(b), b.TempDir()
	open := func(b *testing.B, name string) Info {
		in, err := Create(ctx, repo, state, name, "")
		if err != nil {
			b.Fatal(err)
		}
		return in
	}
	b.Run("checkpoint", func(b *testing.B) {
		in := open(b, "cp-"+strconv.Itoa(b.N))
		prev := ""
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			typicalChange(b, in.Dir, i)
			var err error
			if prev, err = Checkpoint(ctx, in, prev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("checkpoint-paths", func(b *testing.B) {
		in := open(b, "paths-"+strconv.Itoa(b.N))
		prev, err := Checkpoint(ctx, in, "")
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			typicalChange(b, in.Dir, i)
			if prev, err = CheckpointPaths(ctx, in, prev, typicalPaths(i)); err != nil {
				b.Fatal(err)
			}
		}
	})
	// A full look right after a paths-mode checkpoint (a command after
	// a batch of file tools): the checkpoints' index lags by the paths,
	// which are checked against the ignore rules first. Only the full
	// look is timed.
	b.Run("checkpoint-after-paths", func(b *testing.B) {
		in := open(b, "after-"+strconv.Itoa(b.N))
		prev, err := Checkpoint(ctx, in, "")
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			typicalChange(b, in.Dir, 2*i)
			if prev, err = CheckpointPaths(ctx, in, prev, typicalPaths(2*i)); err != nil {
				b.Fatal(err)
			}
			typicalChange(b, in.Dir, 2*i+1)
			b.StartTimer()
			if prev, err = Checkpoint(ctx, in, prev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("checkpoint+push", func(b *testing.B) {
		in := open(b, "push-"+strconv.Itoa(b.N))
		remote := b.TempDir()
		if _, err := git(ctx, remote, nil, "init", "-q", "--bare"); err != nil {
			b.Fatal(err)
		}
		prev, err := Checkpoint(ctx, in, "")
		if err == nil {
			err = PushCheckpoint(ctx, in.Dir, remote, in.Name, prev)
		}
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			typicalChange(b, in.Dir, i)
			if prev, err = Checkpoint(ctx, in, prev); err != nil {
				b.Fatal(err)
			}
			if err := PushCheckpoint(ctx, in.Dir, remote, in.Name, prev); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("git-add-commit", func(b *testing.B) {
		in := open(b, "plain-"+strconv.Itoa(b.N))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			typicalChange(b, in.Dir, i)
			cmd := exec.Command("sh", "-c", "git add -A && git commit -q -m change")
			cmd.Dir = in.Dir
			cmd.Env = append(os.Environ(), gitIdentity...)
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%v: %s", err, out)
			}
		}
	})
}
