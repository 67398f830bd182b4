package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// promptQuestion is what watch asks for each new pending call.
const promptQuestion = "approve? [y]es / [n]o / [f]eedback / [s]kip: "

// promptQuestionCut is asked instead when the call's arguments were cut:
// approving needs the whole call seen first ([v]iew).
const promptQuestionCut = "approve? [v]iew all first / [n]o / [f]eedback / [s]kip: "

// maxPromptArg is how much of one argument the prompt shows. A person
// deciding needs the whole command or most of the file; past this the
// rest is in `pending --json`.
const maxPromptArg = 2000

// lineReader gives the person's answers one line at a time, without the
// newline. It is an interface so tests script the answers; ctx lets a
// prompt give up when Ctrl-C stops watching.
type lineReader interface {
	ReadLine(ctx context.Context) (string, error)
}

// lines is the lineReader over stdin. A read from a terminal blocks until
// Enter and cannot be cancelled, so one goroutine reads and ReadLine waits
// for it or for ctx: Ctrl-C still stops watch at once.
type lines struct {
	ch chan lineResult
}

type lineResult struct {
	line string
	err  error
}

func newLines(r io.Reader) *lines {
	l := &lines{ch: make(chan lineResult)}
	go func() {
		br := bufio.NewReader(r)
		for {
			s, err := br.ReadString('\n')
			if err != nil && s == "" {
				l.ch <- lineResult{err: err}
				close(l.ch)
				return
			}
			l.ch <- lineResult{line: strings.TrimRight(s, "\r\n")}
		}
	}()
	return l
}

// ReadLine returns the next line, io.EOF once stdin is closed, or ctx's
// error.
func (l *lines) ReadLine(ctx context.Context) (string, error) {
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case r, ok := <-l.ch:
		if !ok {
			return "", io.EOF
		}
		return r.line, r.err
	}
}

func (a *app) lineReader() lineReader {
	if a.answers == nil {
		a.answers = newLines(a.stdin)
	}
	return a.answers
}

// answer is what a person chose for one call.
type answer int

const (
	answerSkip answer = iota
	answerApprove
	answerDeny
	answerView // show the whole call
)

// parseAnswer reads one reply to promptQuestion. "f text" gives the
// feedback on the same line. ok is false for anything else, which is asked
// again rather than guessed: a typo must never approve a shell command.
func parseAnswer(s string) (a answer, feedback string, wantFeedback, ok bool) {
	word, rest, _ := strings.Cut(strings.TrimSpace(s), " ")
	switch strings.ToLower(word) {
	case "y", "yes":
		return answerApprove, "", false, rest == ""
	case "n", "no":
		return answerDeny, "", false, rest == ""
	case "f", "feedback":
		rest = strings.TrimSpace(rest)
		return answerDeny, rest, rest == "", true
	case "s", "skip":
		return answerSkip, "", false, rest == ""
	case "v", "view":
		return answerView, "", false, rest == ""
	}
	return answerSkip, "", false, false
}

// errStopPrompting is returned by prompt when stdin has ended: watch then
// only announces calls, as it does without a terminal.
var errStopPrompting = errors.New("no more answers on stdin")

// errNotRecorded is returned by prompt when the server did not answer the
// decision, so it was not recorded: watch asks again once it is back.
var errNotRecorded = errors.New("decision not recorded: the server does not answer")

// prompt shows one pending call, asks until it gets a usable answer, and
// sends the decision with the same approve update as `approve`/`deny`. A
// refused decision (someone else decided first, the call is gone) is
// shown and not an error: watching goes on. It returns ctx's error when
// watching stops, and errStopPrompting when stdin is closed.
func (a *app) prompt(ctx context.Context, c sessionClient, session string, p workflows.PendingApproval) error {
	st := a.ui.style
	seen := a.approvalPrompt(p, maxPromptArg)
	in := a.lineReader()
	for {
		q := promptQuestion
		if !seen {
			q = promptQuestionCut
		}
		fmt.Fprint(a.stdout, st.paint(q, sgrBold))
		line, err := in.ReadLine(ctx)
		if err != nil {
			return a.endPrompt(ctx, err, session, p)
		}
		ans, feedback, wantFeedback, ok := parseAnswer(line)
		if !ok {
			fmt.Fprintf(a.stdout, "answer y, n, f or s (not %q)\n", strings.TrimSpace(line)) // %q shows any control character escaped
			continue
		}
		if ans == answerView {
			seen = a.approvalPrompt(p, 0)
			continue
		}
		if ans == answerApprove && !seen {
			fmt.Fprintln(a.stdout, "part of this call is hidden: view all of it (v) before approving")
			continue
		}
		if wantFeedback {
			fmt.Fprint(a.stdout, st.paint("feedback for the model: ", sgrBold))
			feedback, err = in.ReadLine(ctx)
			if err != nil {
				return a.endPrompt(ctx, err, session, p)
			}
			if feedback = strings.TrimSpace(feedback); feedback == "" {
				fmt.Fprintln(a.stdout, "no feedback given; nothing sent")
				continue
			}
		}
		switch ans {
		case answerSkip:
			fmt.Fprintf(a.stdout, "skipped %s (%s); decide later with:\n", showID(p.ID), oneLine(p.Tool))
			a.laterHint(session, p)
			return nil
		case answerApprove:
			return a.promptDecision(ctx, c, session, p, workflows.Approval{ID: p.ID, Digest: p.Digest, Decision: workflows.DecisionApprove, Author: localAuthor()})
		case answerDeny:
			return a.promptDecision(ctx, c, session, p, workflows.Approval{ID: p.ID, Digest: p.Digest, Decision: workflows.DecisionDeny, Feedback: feedback, Author: localAuthor()})
		}
		return nil
	}
}

// endPrompt ends a prompt whose answer could not be read: watching
// stopped (ctx), or stdin ended and the call is left for later.
func (a *app) endPrompt(ctx context.Context, err error, session string, p workflows.PendingApproval) error {
	fmt.Fprintln(a.stdout)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	fmt.Fprintf(a.stdout, "no more answers (%v); %s is left waiting:\n", err, showID(p.ID))
	a.laterHint(session, p)
	return errStopPrompting
}

// promptDecision sends one answer and prints its outcome. An error is the
// session's or the server's word on this call only, so it is shown and the
// prompt moves on. A decision whose reply never came is checked in
// history first (sendDecision): taken, it is reported as taken; not
// taken, it goes as the durable approval signal. A ✗ is only ever the
// session's refusal or a decision that could not be sent at all.
//
// When the server itself does not answer (an outage), the decision is
// reported as not recorded and errNotRecorded returned: watch asks about
// the call again once the server is back, so an answer is never lost
// without a word.
func (a *app) promptDecision(ctx context.Context, c sessionClient, session string, p workflows.PendingApproval, ap workflows.Approval) error {
	st := a.ui.style
	out, err := a.sendDecision(ctx, c, session, p.ID, ap)
	if err == nil && out == notTaken {
		a.fallbackNote(session, fmt.Sprintf("no worker took the update within %s", decisionWait))
		err = a.signalDecision(ctx, c, session, ap)
		if err == nil {
			return nil
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		if unreachable(err) {
			fmt.Fprintf(a.stdout, "%s %s\n", st.paint("✗", sgrBold, sgrRed), st.paint(fmt.Sprintf(
				"the %s of %s was NOT recorded: the server at %s does not answer (%s); watch asks again once it is back",
				ap.Decision, showID(p.ID), a.cfg.Address, oneLine(shortErr(err))), sgrBold, sgrRed))
			return errNotRecorded
		}
		fmt.Fprintf(a.stdout, "%s %v\n", st.paint("✗", sgrBold, sgrRed), st.paint(untrusted.Visible(err.Error()), sgrRed))
		return nil
	}
	verb, code := "approved", sgrGreen
	if ap.Decision == workflows.DecisionDeny {
		verb, code = "denied", sgrRed
	}
	note := ""
	if out == decidedUnanswered {
		note = " — the reply was lost; the session's history shows it took the decision"
	}
	fmt.Fprintf(a.stdout, "%s %s (%s)%s\n", st.paint(verb, sgrBold, code), showID(p.ID), oneLine(p.Tool), note)
	return nil
}

// laterHint names the commands that decide a call from another terminal.
func (a *app) laterHint(session string, p workflows.PendingApproval) {
	fmt.Fprintf(a.stdout, "  %s approve %s %s   |   %s deny %s %s --feedback \"...\"\n",
		progName, shellQuote(session), shellQuote(p.ID), progName, shellQuote(session), shellQuote(p.ID))
}

// approvalPrompt shows a call in full enough to decide it: the tool, why
// it asks, and each argument on its own line (a shell command, a path, a
// patch coloured as a diff) rather than one cut line of JSON, each cut to
// limit bytes (0: whole). It reports whether the whole call was shown.
func (a *app) approvalPrompt(p workflows.PendingApproval, limit int) bool {
	st := a.ui.style
	fmt.Fprintf(a.stdout, "%s %s %s", st.paint("⏸ approval needed", sgrBold, sgrYellow), st.paint("["+showID(p.ID)+"]", sgrDim), st.paint(oneLine(p.Tool), sgrBold))
	if p.Reason != "" {
		fmt.Fprintf(a.stdout, " (%s)", oneLine(p.Reason))
	}
	fmt.Fprintln(a.stdout)
	lines, whole := st.arguments(p.Arguments, limit)
	for _, l := range lines {
		fmt.Fprintln(a.stdout, continuationSpace+l)
	}
	return whole
}

// arguments lays out a call's JSON arguments one field a line, in key
// order so the layout is stable, each made visible (untrusted.Visible) and
// cut to limit bytes with a note of what is hidden (0: whole). Arguments
// that are not a JSON object are shown as they are. whole is false when
// something was cut.
func (st style) arguments(args string, limit int) (lines []string, whole bool) {
	whole = true
	var obj map[string]any
	if err := json.Unmarshal([]byte(args), &obj); err != nil {
		head, c := untrusted.Head(args, limit, 0)
		return appendNote([]string{oneLine(head)}, st, c), c.None()
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []string
	for _, k := range keys {
		v, ok := obj[k].(string)
		if !ok {
			b, _ := json.Marshal(obj[k]) // decoded from JSON, so it encodes
			v = string(b)
		}
		v, c := untrusted.Head(strings.TrimRight(v, "\n"), limit, 0)
		whole = whole && c.None()
		vl := strings.Split(untrusted.Visible(v), "\n")
		key := st.paint(oneLine(k)+":", sgrDim)
		if len(vl) == 1 {
			out = appendNote(append(out, key+" "+vl[0]), st, c)
			continue
		}
		isDiff := isDiffText(vl)
		out = append(out, key)
		for _, l := range vl {
			if isDiff {
				l = st.diffLine(l)
			}
			out = append(out, continuationSpace+l)
		}
		out = appendNote(out, st, c)
	}
	return out, whole
}

// appendNote adds the note of what c cut, on its own line, to lines.
func appendNote(lines []string, st style, c untrusted.Cut) []string {
	if c.None() {
		return lines
	}
	return append(lines, continuationSpace+st.paint(c.Note("[v]iew shows all; so does "+progName+" pending --full"), sgrBold, sgrYellow))
}

// argLines is every argument of a call, whole.
func argLines(st style, args string) []string {
	lines, _ := st.arguments(args, 0)
	return lines
}
