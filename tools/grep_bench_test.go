package tools

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goSrc is the tree the grep benchmarks search: the Go distribution's own
// sources, present wherever the tests run and large enough (~150 MB, ~11k
// files) to show the walk and the search, not the start-up.
func goSrc(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skipf("go env GOROOT: %v", err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "src")
}

func benchmarkGrep(b *testing.B, opts GrepOptions) {
	root := goSrc(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := Search(ctx, root, opts)
		if err != nil {
			b.Fatal(err)
		}
		if res.TotalFiles == 0 {
			b.Fatal("no matches")
		}
	}
}

func BenchmarkGrepLiteral(b *testing.B) {
	benchmarkGrep(b, GrepOptions{Pattern: "func main"})
}

func BenchmarkGrepLiteralIgnoreCase(b *testing.B) {
	benchmarkGrep(b, GrepOptions{Pattern: "func main", IgnoreCase: true})
}

func BenchmarkGrepRegex(b *testing.B) {
	benchmarkGrep(b, GrepOptions{Pattern: `func \w+\(ctx context\.Context`})
}

func BenchmarkGrepRegexNoLiteral(b *testing.B) {
	benchmarkGrep(b, GrepOptions{Pattern: `[A-Z][a-z]+Handler\b`, Include: "*.go"})
}
