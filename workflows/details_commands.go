package workflows

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Where a person's commands reach Temporal when nothing says otherwise;
// the details name --address and --namespace only when they differ.
const (
	defaultAddress   = "localhost:7233"
	defaultNamespace = "default"
)

// waitingDetails is the Markdown the Web UI's "User Metadata" tab shows
// for the calls waiting for a person: a heading that says so, one
// paragraph per call, and the commands that decide it in a code block,
// one per line, ready to paste (a list of inline code collapses into one
// paragraph there).
func (s *driver) waitingDetails(b *strings.Builder, pending []PendingApproval) {
	fmt.Fprintf(b, "\n### waiting for approval: %d call(s)\n", len(pending))
	for _, c := range pending {
		fmt.Fprintf(b, "\n**%s** `%s` — `%s`", c.Tool, c.CallID, truncate(strings.ReplaceAll(c.Arguments, "\n", " "), 160))
		if c.Reason != "" {
			fmt.Fprintf(b, " — %s", c.Reason)
		}
		b.WriteString("\n\n```sh\n")
		flags := s.connFlags()
		fmt.Fprintf(b, "longrun%s approve %s %s\n", flags, shellWord(s.workflowID), shellWord(c.CallID))
		fmt.Fprintf(b, "longrun%s deny %s %s --feedback \"why\"\n", flags, shellWord(s.workflowID), shellWord(c.CallID))
		for _, ap := range []Approval{{CallID: c.CallID, Decision: DecisionApprove}, {CallID: c.CallID, Decision: DecisionDeny, Feedback: "why"}} {
			payload, _ := json.Marshal(ap) // strings only: always encodes
			fmt.Fprintf(b, "temporal workflow signal%s --workflow-id %s --name %s --input %s\n",
				flags, shellWord(s.workflowID), SignalApproval, shellWord(string(payload)))
		}
		b.WriteString("```\n")
	}
}

// connFlags are the --address and --namespace a command needs to reach
// this session's server, as the worker that runs it knows them.
func (s *driver) connFlags() string {
	var f string
	if s.address != "" && s.address != defaultAddress {
		f += " --address " + shellWord(s.address)
	}
	if s.namespace != "" && s.namespace != defaultNamespace {
		f += " --namespace " + shellWord(s.namespace)
	}
	return f
}

// shellWord quotes w for a POSIX shell unless it is plainly safe.
func shellWord(w string) string {
	if w != "" && strings.IndexFunc(w, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@=,+", r))
	}) < 0 {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}
