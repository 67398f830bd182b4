package checkout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkOpenClose is the fixed cost a session's own checkout adds to
// it (issue 31): opening it (Create, or CreateCopy outside git) before
// the first model call, and at the end closing it (Close: the commit of
// what the session changed, one file here, and for a repository of its
// own the fetch into the person's repository and the removal). The
// repository is the product bench's workspace: one small file, one
// commit. It reports the medians of the open and of the close. Compare
// two builds side by side, alternated:
//
//	go test -c -o old.test ./checkout/   (at the old commit; new.test at the new)
//	for i in 1 2 3; do for v in old new; do ./$v.test -test.run '^$' -test.bench OpenClose -test.count 1; done; done
func BenchmarkOpenClose(b *testing.B) {
	ctx := context.Background()
	for _, mode := range []string{"git", "copy"} {
		b.Run(mode, func(b *testing.B) {
			// The workspace: a repository of one small file and one
			// commit (newRepo), or the same file outside git.
			var dir string
			if mode == "git" {
				dir = newRepo(b)
			} else {
				dir = b.TempDir()
				if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("one\n"), 0o644); err != nil {
					b.Fatal(err)
				}
			}
			state := b.TempDir()
			var opens, closes []float64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				session := fmt.Sprintf("bench-%d", i)
				t0 := time.Now()
				var in Info
				var err error
				if mode == "git" {
					in, err = Create(ctx, dir, state, session, "")
				} else {
					in, err = CreateCopy(ctx, dir, state, session, DefaultCopyLimit)
				}
				open := time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(in.Dir, "notes.md"), []byte("one line of notes\nand one more\n"), 0o644); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				c, err := Close(ctx, in, "bench session")
				closing := time.Since(t1)
				if err != nil || c.Commit == "" || c.Changes == nil || c.Changes.Files != 1 {
					b.Fatalf("close: %+v %v", c, err)
				}
				opens, closes = append(opens, open.Seconds()*1000), append(closes, closing.Seconds()*1000)
			}
			b.ReportMetric(median(opens), "open-ms")
			b.ReportMetric(median(closes), "close-ms")
		})
	}
}
