// Command bench measures what durability costs: the session's turn loop run
// in-process with no Temporal against the same loop as an AgentSession on
// the embedded Temporal server, per-turn overhead with its breakdown from
// the workflow history, replay of a long history, and concurrent sessions.
// It prints tables; docs/BENCHMARKS.md records them with the command.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"runtime/trace"
)

func main() {
	keepModelConns()
	if len(os.Args) > 1 && os.Args[1] == workerCmd {
		if err := workerMain(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "bench worker:", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(benchMain(os.Args[1:]))
}

// benchMain runs the bench with args and returns its exit code. The
// profiles it was asked for are written whole before it returns, a
// failed run's too.
func benchMain(args []string) int {
	cfg, err := ParseFlags(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 2
	}
	for _, p := range []struct {
		path  string
		start func(io.Writer) error
		stop  func()
	}{
		{cfg.CPUProfile, pprof.StartCPUProfile, pprof.StopCPUProfile},
		{cfg.Trace, trace.Start, trace.Stop},
	} {
		if p.path == "" {
			continue
		}
		f, err := os.Create(p.path)
		if err == nil {
			if err = p.start(f); err != nil {
				_ = f.Close()
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return 2
		}
		defer func() { p.stop(); _ = f.Close() }()
	}
	if err := Run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		return 1
	}
	return 0
}
