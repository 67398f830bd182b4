// Command grepbench runs tools.Search once over a directory and prints the
// number of matching lines, so the grep tool can be timed against rg with
// hyperfine (see tools/testdata/grep/bench.sh).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/longrun/longrun/tools"
)

func main() {
	ignoreCase := flag.Bool("i", false, "ignore case")
	include := flag.String("include", "", "glob of files to search")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: grepbench [-i] [-include glob] pattern dir")
	}
	flag.Parse()
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	res, err := tools.Search(context.Background(), flag.Arg(1), tools.GrepOptions{
		Pattern:    flag.Arg(0),
		Include:    *include,
		IgnoreCase: *ignoreCase,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "grepbench:", err)
		os.Exit(1)
	}
	fmt.Printf("%d matching lines in %d files\n", res.TotalMatches, res.TotalFiles)
}
