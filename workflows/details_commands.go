package workflows

import (
	"encoding/json"
	"fmt"
	"strings"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/untrusted"
)

// waitingDetails is the Markdown the Web UI's "User Metadata" tab shows
// for the calls waiting for a person: a heading that says so, one
// paragraph per call, and the commands that decide it in a code block,
// one per line, ready to paste (a list of inline code collapses into one
// paragraph there). Everything of the model's (tool, id, arguments,
// reason) goes through untrusted's Markdown forms: no heading, link or
// code fence can be made of it, and a cut preview says how much it hides.
func (s *driver) waitingDetails(b *strings.Builder, pending []PendingApproval) {
	fmt.Fprintf(b, "### waiting for approval: %d call(s)\n", len(pending))
	for _, c := range pending {
		args, cut := untrusted.Head(c.Arguments, detailsMaxArgs, 0)
		fmt.Fprintf(b, "\n**%s** %s — %s", untrusted.MarkdownText(c.Tool), untrusted.MarkdownCode(c.ID), untrusted.MarkdownCode(args))
		if !cut.None() {
			fmt.Fprintf(b, " %s", untrusted.MarkdownText(cut.Note(fmt.Sprintf("the whole call: longrun pending --full %s", untrusted.ShellWord(s.workflowID)))))
		}
		if c.Reason != "" {
			fmt.Fprintf(b, " — %s", untrusted.MarkdownText(c.Reason))
		}
		b.WriteString("\n")
		var cmds strings.Builder
		flags := activities.ConnFlags(s.address, s.namespace)
		// A cut preview offers no approve command: a person approves only
		// after seeing the call whole (pending --full prints them).
		approvals := []Approval{{ID: c.ID, Digest: callref.Short(c.Digest), Decision: DecisionApprove},
			{ID: c.ID, Digest: callref.Short(c.Digest), Decision: DecisionDeny, Feedback: "why"}}
		if cut.None() {
			fmt.Fprintf(&cmds, "longrun%s approve %s %s\n", flags, untrusted.ShellWord(s.workflowID), untrusted.ShellWord(c.ID))
		} else {
			fmt.Fprintf(&cmds, "longrun%s pending --full %s   # approve only after seeing it whole\n", flags, untrusted.ShellWord(s.workflowID))
			approvals = approvals[1:]
		}
		fmt.Fprintf(&cmds, "longrun%s deny %s %s --feedback \"why\"\n", flags, untrusted.ShellWord(s.workflowID), untrusted.ShellWord(c.ID))
		// The signal names the call by the session's id and carries the
		// digest of the arguments shown above it.
		for _, ap := range approvals {
			payload, _ := json.Marshal(ap) // strings only: always encodes
			fmt.Fprintf(&cmds, "temporal workflow signal%s --workflow-id %s --name %s --input %s\n",
				flags, untrusted.ShellWord(s.workflowID), SignalApproval, untrusted.ShellWord(string(payload)))
		}
		b.WriteString(untrusted.MarkdownBlock(cmds.String(), "sh"))
	}
}

// detailsMaxArgs is how much of a waiting call's arguments the details
// show; the note after a cut says how much more there is.
const detailsMaxArgs = 160
