package workflows

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/notify"
)

// waitingDetails is the Markdown the Web UI's "User Metadata" tab shows
// for the calls waiting for a person: a heading that says so, one
// paragraph per call, and the commands that decide it in a code block,
// one per line, ready to paste (a list of inline code collapses into one
// paragraph there).
func (s *driver) waitingDetails(b *strings.Builder, pending []PendingApproval) {
	fmt.Fprintf(b, "\n### waiting for approval: %d call(s)\n", len(pending))
	for _, c := range pending {
		fmt.Fprintf(b, "\n**%s** `%s` — `%s`", c.Tool, c.ID, truncate(strings.ReplaceAll(c.Arguments, "\n", " "), 160))
		if c.Reason != "" {
			fmt.Fprintf(b, " — %s", c.Reason)
		}
		b.WriteString("\n\n```sh\n")
		flags := notify.ConnFlags(s.address, s.namespace)
		fmt.Fprintf(b, "longrun%s approve %s %s\n", flags, notify.ShellQuote(s.workflowID), notify.ShellQuote(c.ID))
		fmt.Fprintf(b, "longrun%s deny %s %s --feedback \"why\"\n", flags, notify.ShellQuote(s.workflowID), notify.ShellQuote(c.ID))
		// The signal names the call by the session's id and carries the
		// digest of the arguments shown above it.
		for _, ap := range []Approval{{ID: c.ID, Digest: callref.Short(c.Digest), Decision: DecisionApprove},
			{ID: c.ID, Digest: callref.Short(c.Digest), Decision: DecisionDeny, Feedback: "why"}} {
			payload, _ := json.Marshal(ap) // strings only: always encodes
			fmt.Fprintf(b, "temporal workflow signal%s --workflow-id %s --name %s --input %s\n",
				flags, notify.ShellQuote(s.workflowID), SignalApproval, notify.ShellQuote(string(payload)))
		}
		b.WriteString("```\n")
	}
}
