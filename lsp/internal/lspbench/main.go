// Command lspbench measures the time from an edit to the first
// diagnostics from gopls (through package lsp, warm and cold) against
// `go vet` of the edited package, on a generated 100-file Go module, and
// prints a Markdown table (docs/BENCHMARKS.md, "Language servers"). With
// -pyright it does the same for pyright-langserver on a generated
// 100-module Python project, against the pyright CLI on the edited file.
//
//	go run ./lsp/internal/lspbench -gopls .longrun-bin/gopls -runs 15
//	go run ./lsp/internal/lspbench -pyright .longrun-bin/node/node_modules/.bin -runs 15
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/longrun/longrun/lsp"
	"github.com/longrun/longrun/tools"
)

// launch runs the servers as a worker does: in the sandbox where one
// works here, else as with --sandbox off, so the numbers are a worker's.
func launch() lsp.Launch {
	mode := tools.SandboxAuto
	if ok, _, _ := tools.CheckSandbox(tools.ShellConfig{Sandbox: mode}); !ok {
		mode = tools.SandboxOff
	}
	return tools.LanguageServerLaunch(tools.Config{Shell: tools.ShellConfig{Sandbox: mode}})
}

func main() {
	gopls := flag.String("gopls", "gopls", "the gopls binary")
	files := flag.Int("files", 100, "files in the package")
	runs := flag.Int("runs", 15, "edits measured per row")
	pyright := flag.String("pyright", "", "the directory holding pyright-langserver and pyright: measure pyright instead")
	flag.Parse()
	if *pyright != "" {
		dir, err := filepath.Abs(*pyright)
		if err == nil {
			err = runPyright(dir, *files, *runs)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "lspbench:", err)
			os.Exit(1)
		}
		return
	}
	if strings.Contains(*gopls, "/") {
		// The server runs in the generated module, not here.
		abs, err := filepath.Abs(*gopls)
		if err == nil {
			*gopls = abs
		}
	}
	if err := run(*gopls, *files, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "lspbench:", err)
		os.Exit(1)
	}
}

// module writes a module whose package pkg has n files, each with a few
// types and functions calling into the next file, so the package
// type-checks as a whole.
func module(n int) (string, error) {
	dir, err := os.MkdirTemp("", "lspbench-")
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/bench\n\ngo 1.22\n"), 0o644); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Join(dir, "pkg"), 0o755); err != nil {
		return "", err
	}
	for i := 0; i < n; i++ {
		if err := os.WriteFile(fileName(dir, i), []byte(source(i, n, "1")), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func fileName(dir string, i int) string { return filepath.Join(dir, "pkg", fmt.Sprintf("f%03d.go", i)) }

// source is file i; value is the constant the edits change ("1", "2",
// or a string, which breaks the type check).
func source(i, n int, value string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package pkg\n\nimport \"fmt\"\n\nconst k%d = %s\n\n", i, value)
	fmt.Fprintf(&b, "// T%d is a record.\ntype T%d struct {\n\tName string\n\tN    int\n\tNext *T%d\n}\n\n", i, i, (i+1)%n)
	for j := 0; j < 8; j++ {
		fmt.Fprintf(&b, "// F%d_%d formats.\nfunc F%d_%d(t *T%d, xs []int) string {\n\tsum := k%d\n\tfor _, x := range xs {\n\t\tsum += x * %d\n\t}\n\tif t.Next != nil {\n\t\t_ = F%d_%d(t.Next, xs[:len(xs)/2])\n\t}\n\treturn fmt.Sprintf(\"%%s=%%d\", t.Name, sum+t.N)\n}\n\n",
			i, j, i, j, i, i, j+1, (i+1)%n, j)
	}
	return b.String()
}

func median(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func run(gopls string, n, runs int) error {
	dir, err := module(n)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	target := fileName(dir, n/2)

	// Cold: a new server, from start to the first diagnostics of the
	// edited file (the first edit of a session pays this).
	m := lsp.NewManager(lsp.Config{Launch: launch(), Servers: map[string]lsp.ServerConfig{lsp.GoplsName: lsp.Gopls(gopls)}})
	defer m.Close()
	if err := os.WriteFile(target, []byte(source(n/2, n, "2")), 0o644); err != nil {
		return err
	}
	c, cold, err := coldStart(ctx, m, dir, target)
	if err != nil {
		return err
	}

	// Warm: the same server, one edit after another.
	edit := func(value string) (time.Duration, int, error) {
		if err := os.WriteFile(target, []byte(source(n/2, n, value)), 0o644); err != nil {
			return 0, 0, err
		}
		return firstDiagnostics(ctx, c, target, time.Minute)
	}
	vet := func(value string) (time.Duration, error) {
		if err := os.WriteFile(target, []byte(source(n/2, n, value)), 0o644); err != nil {
			return 0, err
		}
		cmd := exec.Command("go", "vet", "./pkg")
		cmd.Dir = dir
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took := time.Since(start)
		if err != nil && value != `"x"` {
			return 0, fmt.Errorf("go vet: %v: %s", err, out)
		}
		return took, nil
	}
	// One vet first, so the standard library's vet facts are cached as
	// they are for anyone who ran it once.
	if _, err := vet("3"); err != nil {
		return err
	}
	if err := measure(runs, edit, vet, table{
		intro:  fmt.Sprintf("%d files in one package", n),
		server: "gopls, warm (lsp package)", base: "go vet ./pkg", ratio: "ratio gopls/vet",
	}); err != nil {
		return err
	}
	fmt.Printf("\ncold start (gopls started, workspace loaded, first diagnostics): %s ms\n", ms(cold))
	return nil
}

// coldStart starts target's server (m.ForFile) and waits for its first
// diagnostics of target: what the first edit of a session pays.
func coldStart(ctx context.Context, m *lsp.Manager, dir, target string) (*lsp.Client, time.Duration, error) {
	start := time.Now()
	c, _, err := m.ForFile(ctx, dir, target)
	if err != nil {
		return nil, 0, err
	}
	if _, _, err := firstDiagnostics(ctx, c, target, 2*time.Minute); err != nil {
		return nil, 0, fmt.Errorf("cold: %w", err)
	}
	return c, time.Since(start), nil
}

// firstDiagnostics tells the server target changed and waits at most
// wait for its diagnostics of that version: the time they took, and how
// many there are.
func firstDiagnostics(ctx context.Context, c *lsp.Client, target string, wait time.Duration) (time.Duration, int, error) {
	start := time.Now()
	since := c.SeqNow()
	v, _, err := c.Sync(ctx, target)
	if err != nil {
		return 0, 0, err
	}
	d, missing := c.FirstDiagnostics(ctx, map[string]int{target: v}, since, time.Now().Add(wait))
	if len(missing) > 0 {
		return 0, 0, fmt.Errorf("no diagnostics of %s within %s", filepath.Base(target), wait)
	}
	return time.Since(start), len(d[target]), nil
}

// table names measure's columns.
type table struct{ intro, server, base, ratio string }

// measure alternates runs edits through the server (a new value, then a
// type error) with the baseline command on the same two edits, and
// prints the medians as a Markdown table.
func measure(runs int, edit func(value string) (time.Duration, int, error), base func(value string) (time.Duration, error), tb table) error {
	var warmOK, warmBad, baseOK, baseBad []time.Duration
	for i := 0; i < runs; i++ {
		d, _, err := edit(fmt.Sprint(10 + i)) // a new value every time: nothing is cached
		if err != nil {
			return err
		}
		warmOK = append(warmOK, d)
		d, errs, err := edit(`"x"`)
		if err != nil {
			return err
		}
		if errs == 0 {
			return fmt.Errorf("the breaking edit got no diagnostic")
		}
		warmBad = append(warmBad, d)
		bd, err := base(fmt.Sprint(100 + i))
		if err != nil {
			return err
		}
		baseOK = append(baseOK, bd)
		if bd, err = base(`"x"`); err != nil {
			return err
		}
		baseBad = append(baseBad, bd)
	}
	fmt.Printf("%s, %d edits per row, median ms\n\n", tb.intro, runs)
	fmt.Printf("| edit | %s | %s | %s |\n", tb.server, tb.base, tb.ratio)
	fmt.Println("|---|---:|---:|---:|")
	fmt.Printf("| a constant's value (no error) | %s | %s | %.2f |\n", ms(median(warmOK)), ms(median(baseOK)), float64(median(warmOK))/float64(median(baseOK)))
	fmt.Printf("| a type error | %s | %s | %.2f |\n", ms(median(warmBad)), ms(median(baseBad)), float64(median(warmBad))/float64(median(baseBad)))
	return nil
}

// ms is d in whole milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond)) }
