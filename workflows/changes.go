package workflows

import (
	"fmt"
	"github.com/longrun/longrun/untrusted"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/checkout/record"
)

// recordChanges keeps the checkout's size the last checkpoint measured
// (activities.Checkpoint: the checkpoint commit against the base, with no
// second walk of the checkout): the numbers come from an activity result,
// so status, the Web UI and the result show them with no command of their
// own, as of the end of the last batch that may have changed files. The Web UI's current details follow at once
// (setting them is no command: they are read through a query).
func (s *driver) recordChanges(ctx workflow.Context, st *record.Stat) {
	if st != nil {
		s.Changes = st
		workflow.SetCurrentDetails(ctx, s.details())
	}
}

// changesDetails is the Web UI's line about what the session changed on
// its branch, "" when it has no checkout or changed nothing yet.
func (s *driver) changesDetails() string {
	if !s.isolated() || s.Changes == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n**changes on %s:** %s\n", s.Checkout.Branch, s.Changes)
	if len(s.Changes.Paths) > 0 {
		more := ""
		if n := s.Changes.Files - len(s.Changes.Paths); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		paths := make([]string, len(s.Changes.Paths))
		for i, p := range s.Changes.Paths {
			paths[i] = untrusted.MarkdownCode(p) // a file's name is the model's
		}
		fmt.Fprintf(&b, "files: %s%s\n", strings.Join(paths, ", "), more)
	}
	return b.String()
}
