// Command patchbench applies one apply_patch patch to a directory, so
// tools/testdata/patch/bench.sh can time our applier as a process next to
// git apply.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/longrun/longrun/tools"
)

func main() {
	root := flag.String("root", ".", "workspace root the patch's paths are relative to")
	patchFile := flag.String("patch", "", "file holding the patch")
	flag.Parse()
	if err := run(*root, *patchFile); err != nil {
		fmt.Fprintln(os.Stderr, "patchbench:", err)
		os.Exit(1)
	}
}

func run(root, patchFile string) error {
	text, err := os.ReadFile(patchFile)
	if err != nil {
		return err
	}
	ws, err := tools.NewWorkspace(root)
	if err != nil {
		return err
	}
	p, err := tools.ParsePatch(string(text))
	if err != nil {
		return err
	}
	plan, err := tools.PlanPatch(p, ws)
	if err != nil {
		return err
	}
	if err := plan.Apply(context.Background()); err != nil {
		return err
	}
	fmt.Println(plan.Summary())
	return nil
}
