package forge

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/untrusted"
)

// Request is one session's branch to publish.
type Request struct {
	// Dir is the repository that holds the branch on this machine: the
	// person's (the branch was brought there at the session's end), or
	// the session's own checkout.
	Dir    string
	Branch string
	// BaseCommit is the commit the session started from: the stat is
	// the branch against it.
	BaseCommit string
	Session    string
	Namespace  string
	// Summary is the session's final text: the pull request's body
	// starts with it, its first line is the title.
	Summary string
	// LeftOut are the control files the branch does not hold.
	LeftOut []string
	// Review is what the session recorded for a reviewer (the commands
	// it ran, the approvals, what was left undone); nil: none.
	Review *record.Review
}

// Published is what Publish did, none of it secret: it goes into the
// session's history and result.
type Published struct {
	URL     string `json:"url"`
	Number  int    `json:"number"`
	Commit  string `json:"commit"`
	Created bool   `json:"created,omitempty"`
	// Remote is where the branch went, without user information.
	Remote string `json:"remote"`
}

// markers are HTML comments in the body and in comments (GitHub does not
// render them) by which a later run knows what an earlier one did.
const (
	sessionMarker = "<!-- longrun:session %s -->"
	commitMarker  = "<!-- longrun:commit %s -->"
	pushedMarker  = "<!-- longrun:pushed %s -->"
)

var commitMarkerRe = regexp.MustCompile(`<!-- longrun:commit ([0-9a-f]+) -->`)

// title is the pull request's title: the summary's first line, cut to 72
// characters.
func title(req Request) string {
	line, _, _ := strings.Cut(strings.TrimSpace(req.Summary), "\n")
	line = strings.TrimSpace(strings.TrimLeft(line, "# "))
	if line == "" {
		return "longrun session " + req.Session
	}
	if r := []rune(line); len(r) > 72 {
		line = string(r[:71]) + "…"
	}
	return line
}

// body is the pull request's text: the summary, the changed files, what
// a reviewer needs (reviewSection), the control files left out, the
// session and its links, and the markers. The summary is the model's
// text: it is shown as a block (untrusted.MarkdownBlock), so it can
// mention nobody, load no image, link nowhere and forge no marker. Each
// part is bounded, so the body stays under GitHub's 65,536 characters.
func (c Config) body(req Request, stat, commit string) string {
	var b strings.Builder
	if s := strings.TrimSpace(req.Summary); s != "" {
		b.WriteString(strings.TrimPrefix(fitBlock(s, "text", maxSummary, "the session's final text has it all"), "\n") + "\n")
	}
	if stat != "" {
		b.WriteString("### Changed files\n" + fitBlock(stat, "", maxStat, "git diff --stat has it all") + "\n")
	}
	b.WriteString(reviewSection(req.Review, req.Summary))
	if len(req.LeftOut) > 0 {
		names := make([]string, 0, min(len(req.LeftOut), maxLeftOut))
		for _, n := range req.LeftOut[:cap(names)] {
			n, _ = untrusted.Head(n, 200, 1)
			names = append(names, untrusted.MarkdownCode(n))
		}
		if more := len(req.LeftOut) - len(names); more > 0 {
			names = append(names, fmt.Sprintf("and %d more", more))
		}
		fmt.Fprintf(&b, "Control files the session changed were left out of this branch: %s\n\n", strings.Join(names, ", "))
	}
	fmt.Fprintf(&b, "Longrun session `%s`", req.Session)
	if c.ConsoleURL != "" {
		fmt.Fprintf(&b, " · [console](%s/session?id=%s)", strings.TrimSuffix(c.ConsoleURL, "/"), url.QueryEscape(req.Session))
	}
	if c.WebUIURL != "" {
		ns := req.Namespace
		if ns == "" {
			ns = "default"
		}
		fmt.Fprintf(&b, " · [Web UI](%s/namespaces/%s/workflows/%s)", strings.TrimSuffix(c.WebUIURL, "/"), url.PathEscape(ns), url.PathEscape(req.Session))
	}
	b.WriteString(", commit " + commit + "\n\n")
	fmt.Fprintf(&b, sessionMarker+"\n"+commitMarker+"\n", req.Session, commit)
	return b.String()
}

// bodyCommit is the commit an earlier body was written for, "" if none:
// the last marker, the body's own at its end (the text before it is the
// model's, shown as a block, where a marker is only text).
func bodyCommit(body string) string {
	if m := commitMarkerRe.FindAllStringSubmatch(body, -1); m != nil {
		return m[len(m)-1][1]
	}
	return ""
}

// fitBlock is s as a fenced block (untrusted.MarkdownBlock) of at most
// max bytes once rendered: s is cut until its rendering fits (a control
// character renders longer than it is), and the note says what was cut.
func fitBlock(s, info string, max int, hint string) string {
	keep := min(len(s), max)
	for {
		v, cut := untrusted.Head(s, keep, 0)
		out := untrusted.MarkdownBlock(v, info)
		if len(out) <= max || keep == 0 {
			if !cut.None() {
				out += cut.Note(hint) + "\n"
			}
			return out
		}
		keep = min(keep/2, max)
	}
}
