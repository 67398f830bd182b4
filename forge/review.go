package forge

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/untrusted"
)

// Bounds of the body: GitHub refuses a body over 65,536 characters, so
// each part is cut to its own share and says what it left out.
const (
	maxBody        = 65536
	maxSummary     = 24 << 10 // the final text, as the model wrote it
	maxStat        = 4 << 10  // git diff --stat
	maxReview      = 28 << 10 // checks, approvals, what was left undone
	maxLeftOut     = 20       // control files named
	maxStated      = 2 << 10  // the summary's own paragraph on what is undone
	maxStatedLines = 20
)

// statedRe finds the line where the model's final text says what it did
// not do: a heading or a line starting with such words.
var statedRe = regexp.MustCompile(`(?i)^[#*_>\s-]*(left undone|not done|undone|not yet done|remaining|still to do|todo|to do|known issues|limitations|open questions|not addressed)\b`)

// statedUndone is the model's own statement of what it left undone: the
// lines of the summary from the first line that starts with such words
// (statedRe) up to the next heading, at most maxStatedLines lines; ""
// when the summary has none. Quoted as the model's words, not a fact.
func statedUndone(summary string) string {
	lines := strings.Split(summary, "\n")
	for i, l := range lines {
		if !statedRe.MatchString(l) {
			continue
		}
		out := []string{l}
		for _, m := range lines[i+1:] {
			if strings.HasPrefix(strings.TrimSpace(m), "#") || len(out) == maxStatedLines {
				break
			}
			out = append(out, m)
		}
		s, _ := untrusted.Head(strings.TrimSpace(strings.Join(out, "\n")), maxStated, 0)
		return s
	}
	return ""
}

// reviewSection is the body's part for a reviewer: the commands the
// session ran and how each ended, the calls a person approved (who,
// when), and what was left undone (calls denied, timed out, interrupted,
// lost; steps of the model's plan not completed; the model's own words on
// it). Every string the model or a sender controls is rendered through
// package untrusted; times are UTC.
func reviewSection(r *record.Review, summary string) string {
	var b strings.Builder
	if r != nil && len(r.Commands) > 0 {
		b.WriteString("### Checks run\n\n")
		if r.DroppedCommands > 0 {
			fmt.Fprintf(&b, "The last %d commands the session ran (%d earlier not shown), with how each ended:\n\n", len(r.Commands), r.DroppedCommands)
		} else {
			b.WriteString("The commands the session ran, with how each ended:\n\n")
		}
		for _, c := range r.Commands {
			fmt.Fprintf(&b, "- %s %s: %s\n", untrusted.MarkdownCode(c.Summary), untrusted.MarkdownText(c.ID), commandOutcome(c))
		}
		b.WriteString("\n")
	}
	if r != nil && len(r.Approved) > 0 {
		b.WriteString("### Approved\n\n")
		fmt.Fprintf(&b, "The calls a person, a rule a person remembered or the guardian let run%s:\n\n", earlier(r.DroppedApproved))
		for _, c := range r.Approved {
			fmt.Fprintf(&b, "- %s %s: %s, %s\n", untrusted.MarkdownText(c.ID), untrusted.MarkdownCode(c.Summary), approver(c), at(c))
		}
		b.WriteString("\n")
	}
	stated := statedUndone(summary)
	if r != nil && (len(r.Undone) > 0 || len(r.Plan) > 0) || stated != "" {
		b.WriteString("### Left undone\n\n")
		if r != nil {
			if r.DroppedUndone > 0 {
				fmt.Fprintf(&b, "(%d earlier calls not shown)\n\n", r.DroppedUndone)
			}
			for _, c := range r.Undone {
				fmt.Fprintf(&b, "- %s %s: %s, %s\n", untrusted.MarkdownText(c.ID), untrusted.MarkdownCode(c.Summary), undoneOutcome(c), at(c))
			}
			for _, p := range r.Plan {
				fmt.Fprintf(&b, "- a step of the model's plan: %s\n", untrusted.MarkdownCode(p))
			}
		}
		if stated != "" {
			b.WriteString("\nThe model's own words on it, from its final text:\n" + untrusted.MarkdownBlock(stated, "text"))
		}
		b.WriteString("\n")
	}
	s, cut := untrusted.Head(b.String(), maxReview, 0)
	if !cut.None() {
		s = strings.TrimRight(s[:strings.LastIndexByte(s, '\n')+1], "\n") + "\n\n" + cut.Note("the session's events have it all") + "\n\n"
	}
	return s
}

func earlier(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d earlier not shown)", n)
}

func commandOutcome(c record.ReviewCall) string {
	if c.Exit != nil {
		return fmt.Sprintf("exit code %d", *c.Exit)
	}
	if c.Outcome == "failed" {
		return "failed (no exit code in its result)"
	}
	return untrusted.MarkdownText(c.Outcome) + " (no exit code in its result)"
}

func approver(c record.ReviewCall) string {
	switch c.By {
	case "rule":
		return "approved by a rule a person remembered"
	case "person":
		if c.Author != "" {
			return "approved by " + untrusted.MarkdownCode(c.Author)
		}
		return "approved by a person (no name given)"
	case "guardian":
		// A model's judgement, not a person's: said so, with its reason.
		if c.Text != "" {
			return "let run by the guardian (read-only sandbox): " + untrusted.MarkdownText(c.Text)
		}
		return "let run by the guardian (read-only sandbox)"
	}
	return "approved by " + untrusted.MarkdownText(c.By)
}

// undoneOutcome says what became of a call that did not run or finish.
func undoneOutcome(c record.ReviewCall) string {
	var s string
	switch c.Outcome {
	case "denied":
		s = "denied by a person"
		if c.Author != "" {
			s = "denied by " + untrusted.MarkdownCode(c.Author)
		}
		if c.Text != "" {
			s += ": " + untrusted.MarkdownCode(c.Text)
		}
	case "denied_by_policy":
		s = "refused by the session's rules (nobody was asked)"
	case "blocked":
		s = "blocked as destructive"
	case "timeout":
		s = "nobody decided within the approval timeout; it did not run"
	case "worker_lost":
		s = "the worker running it was lost; it may or may not have run"
	case "interrupted":
		s = "interrupted"
	case "cancelled_before_run":
		s = "cancelled before it ran"
	case "cancelled_while_running":
		s = "cancelled while it ran"
	default:
		s = untrusted.MarkdownText(c.Outcome)
	}
	return s
}

func at(c record.ReviewCall) string {
	if c.At.IsZero() {
		return "time not recorded"
	}
	return "at " + c.At.UTC().Format("2006-01-02 15:04:05 UTC")
}
