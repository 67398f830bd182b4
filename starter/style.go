package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// SGR codes watch paints with. The 16 basic colours only: they follow the
// person's terminal theme, where 256-colour picks clash with some.
const (
	sgrReset   = "\x1b[0m"
	sgrBold    = "1"
	sgrDim     = "2"
	sgrRed     = "31"
	sgrGreen   = "32"
	sgrYellow  = "33"
	sgrBlue    = "34"
	sgrMagenta = "35"
	sgrCyan    = "36"
)

// maxDiffLines is how much of a diff watch shows under a result: enough for
// a typical edit, and the whole of it is in `conversation --json`.
const maxDiffLines = 40

// style is how watch draws on a terminal. The zero style is the plain
// text every other command and a piped watch print, byte for byte, so
// scripts reading watch's output never see escape codes.
type style struct {
	color bool // ANSI colours
	// blocks shows a unified diff in a tool result as its own lines
	// instead of folding it onto one: a person at a terminal reads the
	// change, a log keeps one line per message.
	blocks bool
	// full shows tool calls and results whole (show, conversation and
	// pending with --full) instead of cut previews.
	full bool
	// more is where a cut text is seen whole ("see all: longrun show
	// --full s1"), said beside each cut.
	more string
}

// paint wraps s in the SGR codes, or returns it as it is without colour.
func (st style) paint(s string, codes ...string) string {
	if !st.color || s == "" || len(codes) == 0 {
		return s
	}
	return "\x1b[" + strings.Join(codes, ";") + "m" + s + sgrReset
}

// Kinds of diff line, as diffKind tells them apart: watch colours them,
// the console gives them CSS classes of the same names.
const (
	diffFile    = "file" // --- a/x, +++ b/x
	diffHunk    = "hunk" // @@ ... @@
	diffAdd     = "add"
	diffDel     = "del"
	diffContext = ""
)

// diffKind is what one line of a unified diff or an apply_patch patch is.
func diffKind(l string) string {
	switch {
	case strings.HasPrefix(l, "+++ "), strings.HasPrefix(l, "--- "):
		return diffFile
	case strings.HasPrefix(l, "@@"):
		return diffHunk
	case strings.HasPrefix(l, "+"):
		return diffAdd
	case strings.HasPrefix(l, "-"):
		return diffDel
	}
	return diffContext
}

// diffLine colours one line of a unified diff the way git does.
func (st style) diffLine(l string) string {
	switch diffKind(l) {
	case diffFile:
		return st.paint(l, sgrBold)
	case diffHunk:
		return st.paint(l, sgrCyan)
	case diffAdd:
		return st.paint(l, sgrGreen)
	case diffDel:
		return st.paint(l, sgrRed)
	}
	return l
}

// isDiffText reports whether lines are a unified diff (after any summary)
// or an apply_patch patch, so they are shown line by line as a diff.
func isDiffText(lines []string) bool {
	return diffStart(lines) >= 0 || len(lines) > 0 && strings.HasPrefix(lines[0], "*** Begin Patch")
}

// diffStart is the index of the line where a unified diff begins in s's
// lines ("--- a/x" followed by "+++ b/x", or a bare "@@" hunk), or -1. The
// edit and write tools put such a diff after a one-line summary.
func diffStart(lines []string) int {
	for i, l := range lines {
		if strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			return i
		}
		if strings.HasPrefix(l, "@@ -") {
			return i
		}
	}
	return -1
}

// message is one conversation message as a person reads it. User and
// assistant text is shown whole (it is the conversation); tool traffic is
// previewed.
func (st style) message(m conversation.Message) []string {
	var lines []string
	switch m.Role {
	case conversation.RoleSystem:
		lines = append(lines, st.paint("system:", sgrDim)+" "+st.paint(st.preview(m.Content, maxSystemPreview), sgrDim))
	case conversation.RoleUser:
		lines = append(lines, st.paint("user:", sgrBold, sgrGreen)+" "+indentRest(m.Content))
	case conversation.RoleAssistant:
		lines = append(lines, st.reasoning(m.Reasoning)...)
		if m.Content != "" || len(m.ToolCalls) == 0 {
			lines = append(lines, st.paint("assistant:", sgrBold, sgrMagenta)+" "+indentRest(m.Content))
		}
		for _, tc := range m.ToolCalls {
			if st.full {
				lines = append(lines, fmt.Sprintf("%s %s %s", st.paint("→ tool call", sgrYellow), st.paint(oneLine(tc.Name), sgrBold, sgrYellow),
					st.paint("["+showID(tc.Ref)+"]", sgrDim)))
				for _, l := range argLines(st, tc.Arguments) {
					lines = append(lines, continuationSpace+l)
				}
				continue
			}
			lines = append(lines, fmt.Sprintf("%s %s %s %s", st.paint("→ tool call", sgrYellow), st.paint(oneLine(tc.Name), sgrBold, sgrYellow),
				st.preview(tc.Arguments, maxArgsPreview), st.paint("["+showID(tc.Ref)+"]", sgrDim)))
		}
	case conversation.RoleTool:
		lines = st.result(m)
	default:
		lines = append(lines, st.paint(oneLine(m.Role)+":", sgrBold)+" "+indentRest(m.Content))
	}
	return lines
}

// preview is untrusted text on one line, cut to n bytes unless st is
// full, saying how much it hides and where it is whole.
func (st style) preview(s string, n int) string {
	if st.full {
		return oneLine(s)
	}
	return preview(s, n, st.hint())
}

// hint is where a text st cut is seen whole.
func (st style) hint() string {
	if st.more == "" {
		return fmt.Sprintf("see all: %s conversation --full SESSION", progName)
	}
	return st.more
}

// maxReasoningLines is how much of a model's reasoning watch shows above
// its answer: the start of its thinking, dimmed; the whole of it is in
// `conversation --json`.
const maxReasoningLines = 12

// reasoning is the "thinking:" lines of an assistant message whose model
// returned its reasoning (none when it did not).
func (st style) reasoning(text string) []string {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	all := strings.Split(untrusted.Visible(text), "\n")
	shown := all
	if !st.full {
		shown = all[:min(len(all), maxReasoningLines)]
	}
	lines := []string{st.paint("thinking:", sgrDim) + " " + st.paint(shown[0], sgrDim)}
	for _, l := range shown[1:] {
		lines = append(lines, continuationSpace+st.paint(l, sgrDim))
	}
	if n := len(all) - len(shown); n > 0 {
		lines = append(lines, continuationSpace+st.paint(fmt.Sprintf("… %d more lines hidden; %s", n, st.hint()), sgrDim))
	}
	return lines
}

// result is a tool message: one line, and with blocks the diff it carries
// below it, coloured.
func (st style) result(m conversation.Message) []string {
	r := m.Result
	if r == nil {
		return []string{st.paint("← result:", sgrDim) + " " + st.preview(m.Content, maxResultPreview)}
	}
	reason := string(r.Reason)
	if reason == "" {
		reason = "unknown"
	}
	content, codes := r.Content, []string(nil)
	if r.IsError {
		reason += ", error"
		codes = []string{sgrRed}
	}
	var diff []string
	if st.blocks || st.full {
		all := strings.Split(strings.ReplaceAll(strings.TrimRight(content, "\n"), "\r\n", "\n"), "\n")
		if i := diffStart(all); i >= 0 {
			content, diff = strings.Join(all[:i], "\n"), all[i:]
		}
	}
	head := fmt.Sprintf("%s %s %s:", st.paint("← result", sgrDim), st.paint("["+showID(r.Ref)+"]", sgrDim), st.paint("("+oneLine(reason)+")", codes...))
	var body []string
	switch {
	case st.full && strings.Contains(strings.TrimSpace(content), "\n"):
		for _, l := range strings.Split(strings.TrimRight(untrusted.Visible(content), "\n"), "\n") {
			body = append(body, continuationSpace+st.paint(l, codes...))
		}
	case content != "" || diff == nil:
		head += " " + st.paint(st.preview(content, maxResultPreview), codes...)
	}
	lines := append([]string{head}, body...)
	for i, l := range diff {
		l = untrusted.Visible(l)
		if i == maxDiffLines && !st.full {
			lines = append(lines, continuationSpace+st.paint(fmt.Sprintf("… %d more lines hidden; %s", len(diff)-i, st.hint()), sgrDim))
			break
		}
		lines = append(lines, continuationSpace+st.diffLine(l))
	}
	return lines
}

// approvalRequest is how watch announces a call that now waits, with the
// commands that answer it from another terminal.
func (st style) approvalRequest(w io.Writer, session string, p workflows.PendingApproval) {
	fmt.Fprintf(w, "%s %s %s %s", st.paint("⏸ approval needed", sgrBold, sgrYellow), st.paint("["+showID(p.ID)+"]", sgrDim),
		st.paint(oneLine(p.Tool), sgrBold), preview(p.Arguments, maxArgsPreview, fullHint("pending", session)))
	if p.Reason != "" {
		fmt.Fprintf(w, " (%s)", oneLine(p.Reason))
	}
	fmt.Fprintln(w)
	digest := "" // of the arguments announced: approve refuses it for others
	if p.Digest != "" {
		digest = " --digest " + callref.Short(p.Digest)
	}
	fmt.Fprintf(w, "  %s approve %s %s%s   |   %s deny %s %s%s --feedback \"...\"\n",
		progName, shellQuote(session), shellQuote(p.ID), digest, progName, shellQuote(session), shellQuote(p.ID), digest)
}
