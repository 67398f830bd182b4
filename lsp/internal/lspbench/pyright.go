package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/longrun/longrun/lsp"
)

// pyProject writes n modules, each with a class and functions calling
// into the next module, so every module imports another.
func pyProject(n int) (string, error) {
	dir, err := os.MkdirTemp("", "lspbench-py-")
	if err != nil {
		return "", err
	}
	for i := 0; i < n; i++ {
		if err := os.WriteFile(pyName(dir, i), []byte(pySource(i, n, "1")), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

func pyName(dir string, i int) string { return filepath.Join(dir, fmt.Sprintf("m%03d.py", i)) }

// pySource is module i; value is its constant K's value ("1", "2", or a
// string, which breaks the type check: K is declared int).
func pySource(i, n int, value string) string {
	var b strings.Builder
	next := (i + 1) % n
	fmt.Fprintf(&b, "from __future__ import annotations\n\nimport m%03d\n\nK: int = %s\n\n\n", next, value)
	fmt.Fprintf(&b, "class T%d:\n    \"\"\"A record.\"\"\"\n\n    def __init__(self, name: str, n: int) -> None:\n        self.name = name\n        self.n = n\n        self.next: m%03d.T%d | None = None\n\n\n", i, next, next)
	for j := 0; j < 8; j++ {
		fmt.Fprintf(&b, "def f%d_%d(t: T%d, xs: list[int]) -> str:\n    total = K\n    for x in xs:\n        total += x * %d\n    if t.next is not None:\n        m%03d.f%d_%d(t.next, xs[: len(xs) // 2])\n    return f\"{t.name}={total + t.n}\"\n\n\n",
			i, j, i, j+1, next, next, j)
	}
	return b.String()
}

func runPyright(bin string, n, runs int) error {
	dir, err := pyProject(n)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	target := pyName(dir, n/2)
	cfg := lsp.ServerConfig{Command: filepath.Join(bin, "pyright-langserver"), Args: []string{"--stdio"}, Patterns: []string{"*.py"}}
	m := lsp.NewManager(lsp.Config{Launch: launch(), Servers: map[string]lsp.ServerConfig{"pyright": cfg}})
	defer m.Close()
	c, cold, err := coldStart(ctx, m, dir, target)
	if err != nil {
		return err
	}

	edit := func(value string) (time.Duration, int, error) {
		if err := os.WriteFile(target, []byte(pySource(n/2, n, value)), 0o644); err != nil {
			return 0, 0, err
		}
		return firstDiagnostics(ctx, c, target, time.Minute)
	}
	cli := func(value string) (time.Duration, error) {
		if err := os.WriteFile(target, []byte(pySource(n/2, n, value)), 0o644); err != nil {
			return 0, err
		}
		cmd := exec.Command(filepath.Join(bin, "pyright"), filepath.Base(target))
		cmd.Dir = dir
		start := time.Now()
		out, err := cmd.CombinedOutput()
		took := time.Since(start)
		if (err != nil) != (value == `"x"`) {
			return 0, fmt.Errorf("pyright %s with K = %s: %v: %s", filepath.Base(target), value, err, out)
		}
		return took, nil
	}
	if err := measure(runs, edit, cli, table{
		intro:  fmt.Sprintf("%d modules", n),
		server: "pyright-langserver, warm (lsp package)", base: "pyright FILE (CLI)", ratio: "ratio server/CLI",
	}); err != nil {
		return err
	}
	fmt.Printf("\ncold start (pyright started, first diagnostics of the edited module): %s ms\n", ms(cold))
	return nil
}
