// Command bench measures what durability costs: the session's turn loop run
// in-process with no Temporal against the same loop as an AgentSession on
// the embedded Temporal server, per-turn overhead with its breakdown from
// the workflow history, replay of a long history, and concurrent sessions.
// It prints tables; docs/BENCHMARKS.md records them with the command.
package main

import (
	"fmt"
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
	cfg, err := ParseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	if cfg.CPUProfile != "" {
		f, err := os.Create(cfg.CPUProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	if cfg.Trace != "" {
		f, err := os.Create(cfg.Trace)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(2)
		}
		defer func() { trace.Stop(); _ = f.Close() }()
	}
	if err := Run(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
