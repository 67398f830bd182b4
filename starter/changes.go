package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/longrun/longrun/checkout"
)

// changesRows are the rows of status and result about what an isolated
// session changed: the diff's size, the first files, and the control
// files the branch leaves out (which apply never brings over unless named:
// --include-control).
func changesRows(tw io.Writer, st *checkout.Stat, leftOut []string) {
	if st == nil {
		if len(leftOut) > 0 {
			fmt.Fprintf(tw, "left out\t%s (control files: not on the branch)\n", strings.Join(leftOut, ", "))
		}
		return
	}
	noun := "files"
	if st.Files == 1 {
		noun = "file"
	}
	fmt.Fprintf(tw, "changes\t%d %s changed, +%d -%d\n", st.Files, noun, st.Insertions, st.Deletions)
	if len(st.Paths) > 0 {
		more := ""
		if n := st.Files - len(st.Paths); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		paths := make([]string, len(st.Paths))
		for i, p := range st.Paths {
			paths[i] = showID(p) // a file's name is the model's
		}
		fmt.Fprintf(tw, "files\t%s%s\n", strings.Join(paths, ", "), more)
	}
	if len(leftOut) == 0 {
		leftOut = st.Control
	}
	if len(leftOut) > 0 {
		fmt.Fprintf(tw, "left out\t%s (control files: not on the branch)\n", strings.Join(leftOut, ", "))
	}
}
