package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/longrun/longrun/checkout"
)

// cmdCheckouts lists the sessions' checkouts a worker on this machine
// keeps under its state directory, with the disk each takes and their
// total: what --max-checkout-bytes bounds. It reads the directory, not
// Temporal: a checkout is on the disk of the worker that holds it.
func (a *app) cmdCheckouts(_ context.Context, fs *flag.FlagSet, args []string) error {
	dir := fs.String("state-dir", a.defaultStateDir(), "the worker's state directory (default as the worker's: LONGRUN_STATE_DIR, else $XDG_STATE_HOME/longrun or ~/.local/state/longrun)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("checkouts takes no arguments")
	}
	if *dir == "" {
		return usagef("no state directory: HOME and XDG_STATE_HOME are unset; name it with --state-dir")
	}
	uses, total, err := checkout.DiskUse(*dir)
	if err != nil {
		return err
	}
	if a.cfg.JSON {
		if uses == nil {
			uses = []checkout.Use{}
		}
		return a.printJSON(map[string]any{"dir": filepath.Join(*dir, checkout.Dir), "checkouts": uses, "bytes": total})
	}
	if len(uses) == 0 {
		fmt.Fprintf(a.stdout, "no checkouts under %s\n", filepath.Join(*dir, checkout.Dir))
		return nil
	}
	tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECKOUT\tBRANCH\tFILES\tDISK")
	for _, u := range uses {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", u.Name, checkout.BranchPrefix+u.Name, u.Files, checkout.Size(u.Bytes))
	}
	tw.Flush()
	fmt.Fprintf(a.stdout, "%d checkouts under %s take %s (a worker's --max-checkout-bytes bounds this)\n", len(uses), filepath.Join(*dir, checkout.Dir), checkout.Size(total))
	return nil
}

// defaultStateDir is the worker's default state directory, found the way
// the worker finds it.
func (a *app) defaultStateDir() string {
	if d := a.getenv("LONGRUN_STATE_DIR"); d != "" {
		return d
	}
	if d := a.getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "longrun")
	}
	home := a.getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "state", "longrun")
}
