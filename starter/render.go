package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// Lengths previews are cut to. Arguments and results can be whole files; a
// terminal line should still show which call it is. `conversation --json`
// has everything.
const (
	maxArgsPreview    = 200
	maxResultPreview  = 300
	maxSystemPreview  = 200
	maxPendingArgs    = 80
	maxSummaryRunes   = 80
	defaultAddress    = "localhost:7233"
	defaultNamespace  = "default"
	continuationSpace = "  "
)

// cut shortens s to at most n runes, marking the cut with an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	if n <= 1 {
		return "…"
	}
	return string(r[:n-1]) + "…"
}

// oneLine folds untrusted text onto one line, made visible
// (untrusted.Line), so a preview never breaks a listing and no control
// sequence in it reaches the terminal.
func oneLine(s string) string { return untrusted.Line(s) }

// preview is untrusted text on one line cut to about n bytes, saying how
// much it hides and where the rest is (more): nothing is cut silently.
func preview(s string, n int, more string) string { return untrusted.Preview(s, n, more) }

// showID is an id the model or a tool chose, made visible on one line.
func showID(s string) string { return untrusted.Token(s) }

// indentRest renders untrusted text visibly and indents every line after
// the first, so a multi-line message stays visibly one message.
func indentRest(s string) string {
	return strings.ReplaceAll(strings.TrimRight(untrusted.Visible(s), "\n"), "\n", "\n"+continuationSpace)
}

// fullHint is where the whole of a cut text is seen: the command with
// --full.
func fullHint(command, session string) string {
	return fmt.Sprintf("see all: %s %s --full %s", progName, command, shellQuote(session))
}

// renderMessage is one conversation message as plain text: see
// style.message.
func renderMessage(m conversation.Message) []string {
	return style{}.message(m)
}

// renderConversation is the messages as plain text in st (full or cut
// previews).
func renderConversation(w io.Writer, msgs []conversation.Message, st style) {
	for _, m := range msgs {
		for _, l := range st.message(m) {
			fmt.Fprintln(w, l)
		}
	}
}

// shellQuote quotes s for a POSIX shell unless it is plainly safe. A
// string holding a control or hidden character is written as bash's
// $'...' with escapes, so the command reads as it runs.
func shellQuote(s string) string {
	if q, ok := untrusted.ShellQuote(s); ok {
		return q
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.:/@=,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// signalCommand is the temporal CLI command that sends the same approval,
// for people who script with the temporal CLI or have no starter at hand.
// It names --address and --namespace only when they are not the defaults.
func signalCommand(cfg config, session string, ap workflows.Approval) string {
	payload, _ := json.Marshal(ap) // a struct of strings always encodes
	var b strings.Builder
	b.WriteString("temporal workflow signal")
	if cfg.Address != "" && cfg.Address != defaultAddress {
		b.WriteString(" --address " + shellQuote(cfg.Address))
	}
	if cfg.Namespace != "" && cfg.Namespace != defaultNamespace {
		b.WriteString(" --namespace " + shellQuote(cfg.Namespace))
	}
	fmt.Fprintf(&b, " --workflow-id %s --name %s --input %s",
		shellQuote(session), workflows.SignalApproval, shellQuote(string(payload)))
	return b.String()
}

// renderPending is the table of calls waiting for a person and, for each,
// the exact commands that answer it. full lays out every call's arguments
// whole, one field a line, instead of a cut preview.
func renderPending(w io.Writer, cfg config, session string, pending []workflows.PendingApproval, full bool) {
	if len(pending) == 0 {
		fmt.Fprintf(w, "no tool calls are waiting for approval in %s\n", session)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CALL ID\tTOOL\tARGS\tREASON")
	for _, p := range pending {
		args := preview(p.Arguments, maxPendingArgs, fullHint("pending", session))
		if full {
			args = "(below)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", showID(p.ID), oneLine(p.Tool), args, oneLine(p.Reason))
	}
	tw.Flush()
	for _, p := range pending {
		fmt.Fprintf(w, "\n%s (%s):\n", showID(p.ID), oneLine(p.Tool))
		if full {
			for _, l := range argLines(style{}, p.Arguments) {
				fmt.Fprintln(w, "  "+continuationSpace+l)
			}
		}
		digest := callref.Short(p.Digest) // of the arguments listed above
		// Our own commands first (they check the call and say what
		// happened); the signals are the fallback that needs neither a
		// worker running nor longrun installed. The digest is of what was
		// listed: approve refuses it when the call waiting under that id
		// by then has other arguments.
		check := ""
		if digest != "" {
			check = " --digest " + digest
		}
		fmt.Fprintf(w, "  approve: %s approve %s %s%s\n", progName, shellQuote(session), shellQuote(p.ID), check)
		fmt.Fprintf(w, "  deny:    %s deny %s %s%s --feedback 'why'\n", progName, shellQuote(session), shellQuote(p.ID), check)
		fmt.Fprintf(w, "  as durable signals (the temporal CLI; no worker needed):\n")
		fmt.Fprintf(w, "    %s\n", signalCommand(cfg, session, workflows.Approval{ID: p.ID, Digest: digest, Decision: workflows.DecisionApprove}))
		fmt.Fprintf(w, "    %s\n", signalCommand(cfg, session, workflows.Approval{ID: p.ID, Digest: digest, Decision: workflows.DecisionDeny, Feedback: "why"}))
	}
}

// renderApprovalRequest is how watch announces a call that now waits, in
// plain text.
func renderApprovalRequest(w io.Writer, session string, p workflows.PendingApproval) {
	style{}.approvalRequest(w, session, p)
}

// renderUsage is the token counts, with the cached and reasoning parts and
// the estimated cost when there are any.
func renderUsage(u conversation.Usage) string {
	s := fmt.Sprintf("%d (prompt %d, completion %d", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
	if u.CachedTokens > 0 {
		s += fmt.Sprintf(", %d of the prompt cached", u.CachedTokens)
	}
	if u.ReasoningTokens > 0 {
		s += fmt.Sprintf(", %d of the completion reasoning", u.ReasoningTokens)
	}
	s += ")"
	if u.CostUSD > 0 {
		s += fmt.Sprintf(", ~$%.4f", u.CostUSD)
	}
	return s
}

// statusRows writes the status query's fields as tab-separated rows, for
// status and show alike.
func statusRows(tw io.Writer, st workflows.Status) {
	fmt.Fprintf(tw, "phase\t%s\n", st.Phase)
	fmt.Fprintf(tw, "turn\t%d/%d\n", st.Turn, st.MaxTurns)
	if st.Model != "" {
		fmt.Fprintf(tw, "model\t%s\n", oneLine(st.Model))
	}
	fmt.Fprintf(tw, "tokens\t%s\n", renderUsage(st.Usage))
	fmt.Fprintf(tw, "pending approvals\t%d\n", st.PendingApprovals)
	guardianRows(tw, st)
	changesRows(tw, st.Changes, nil)
	if st.PullRequest != "" {
		fmt.Fprintf(tw, "pull request\t%s\n", oneLine(st.PullRequest))
	}
	if st.LastError != "" {
		fmt.Fprintf(tw, "last error\t%s\n", oneLine(st.LastError))
	}
}

// endedRow is the row saying how a session that did not complete ended.
func endedRow(tw io.Writer, e *ending) {
	if e == nil {
		return
	}
	if e.Reason == "" {
		fmt.Fprintf(tw, "ended\t%s\n", e.How)
		return
	}
	fmt.Fprintf(tw, "ended\t%s: %s\n", e.How, oneLine(e.Reason))
}

func renderStatus(w io.Writer, session string, st workflows.Status, e *ending) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "session\t%s\n", session)
	endedRow(tw, e)
	statusRows(tw, st)
	tw.Flush()
	if len(st.Rejected) > 0 {
		fmt.Fprintln(w, "rejected signals:")
		for _, r := range st.Rejected {
			fmt.Fprintf(w, "  %s\n", oneLine(r))
		}
	}
	if st.PendingApprovals > 0 {
		fmt.Fprintf(w, "see them with: %s pending %s\n", progName, shellQuote(session))
	}
}

func renderResult(w io.Writer, res workflows.SessionResult) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "status\t%s\n", res.Status)
	fmt.Fprintf(tw, "turns\t%d\n", res.Turns)
	fmt.Fprintf(tw, "tokens\t%s\n", renderUsage(res.Usage))
	if res.Error != "" {
		fmt.Fprintf(tw, "error\t%s\n", oneLine(res.Error))
	}
	if res.Branch != "" {
		commit := "no changes"
		if res.Commit != "" {
			commit = "commit " + short(res.Commit)
		}
		fmt.Fprintf(tw, "branch\t%s (%s; %s diff, apply or discard it)\n", res.Branch, commit, progName)
		changesRows(tw, res.Changes, res.LeftOut)
	}
	if res.PullRequest != "" {
		fmt.Fprintf(tw, "pull request\t%s\n", oneLine(res.PullRequest))
	}
	if res.PushError != "" {
		fmt.Fprintf(tw, "push error\t%s (%s push to try again)\n", oneLine(res.PushError), progName)
	}
	tw.Flush()
	if res.FinalText != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimRight(untrusted.Visible(res.FinalText), "\n"))
	}
}

// summaryLine is the prompt's first non-empty line, cut for the UI's
// one-line StaticSummary.
func summaryLine(prompt string) string {
	for _, l := range strings.Split(prompt, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return cut(l, maxSummaryRunes)
		}
	}
	return ""
}

// staticDetails is the multi-line StaticDetails the Web UI shows for a
// session: what it was started with, since the input is otherwise JSON.
func staticDetails(in workflows.SessionInput) string {
	model := in.Model
	if model == "" {
		model = "(worker default)"
	}
	workdir := in.WorkDir
	if workdir == "" {
		workdir = "(workspace root)"
	}
	maxTurns := fmt.Sprint(in.MaxTurns)
	if in.MaxTurns == 0 {
		maxTurns = fmt.Sprintf("%d (default)", workflows.DefaultMaxTurns)
	}
	approver := in.Approval
	if approver == "" {
		approver = workflows.ApproverPerson
	}
	// The last line is the one click path to what waits: these details
	// are fixed at start and shown atop every tab, the calls waiting for
	// a person are in the current details, which the UI shows in its
	// User Metadata tab only.
	return fmt.Sprintf("**model:** %s  \n**workdir:** %s  \n**max turns:** %s  \n**idle timeout:** %s  \n**approval:** %s  \nstarted with %s  \n%s",
		model, workdir, maxTurns, idleText(in.IdleTimeout), approver, progName, waitingHint)
}

// waitingHint is where the Web UI shows the calls waiting for a person.
var waitingHint = "**waiting calls:** open the **User Metadata** tab (Current Details: each call with the commands that decide it), or run " + progName + " pending with this workflow's id"

func idleText(d workflows.Duration) string {
	if d == 0 {
		return "none (ends when the model stops)"
	}
	if d < 0 {
		return "forever (waits until a message or a cancel)"
	}
	return time.Duration(d).String()
}
