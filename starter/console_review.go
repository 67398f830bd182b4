package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"go.temporal.io/api/workflowservice/v1"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// Review in the browser: what a session was asked and where it works, on
// every card and page, and for a finished session its changes with the
// buttons that apply or discard them. The diff is read and applied by
// this process, with git, where the repository is: the console, like
// `longrun apply`, must run on the machine that holds it.

// maxConsoleDiff is how much of a finished session's diff its page shows;
// the rest is counted, and `longrun diff` has it whole.
const maxConsoleDiff = 200000

// consoleApplyTimeout bounds one Apply or Discard: git on a large
// repository, not a model.
const consoleApplyTimeout = 2 * time.Minute

// whereView is what a session was asked and where it works: its task
// (the first line of its prompt, the start's static summary, cut), its
// repository and branch (the checkout query, answered by a worker).
type whereView struct {
	Task    string
	Repo    string
	Branch  string
	Base    string
	InPlace bool   // ran in the worker's workspace: no branch of its own
	Err     string // why the checkout query did not answer
}

// taskOf is the session's task as describe has it: its static summary,
// made visible (it is the person's text, but it may be pasted from
// anywhere).
func (s *console) taskOf(desc *workflowservice.DescribeWorkflowExecutionResponse) string {
	t := payloadText(s.a.payloads(), desc.GetExecutionConfig().GetUserMetadata().GetSummary())
	return untrusted.Token(cut(strings.TrimSpace(t), maxSummaryRunes))
}

// where asks session id for its checkout. task is filled by the caller,
// which has described the session already.
func (s *console) where(ctx context.Context, id, task string) whereView {
	w := whereView{Task: task}
	co, err := query[*session.Checkout](ctx, s.a, s.c, id, workflows.QueryCheckout)
	switch {
	case err != nil:
		w.Err = err.Error()
	case !co.Isolated():
		w.InPlace = true
	default:
		w.Repo, w.Branch, w.Base = co.Repo, co.Branch, short(co.Base)
		if co.Origin != "" {
			w.Repo = co.Origin
		}
	}
	return w
}

// reviewView is a finished session's changes as its page shows them.
type reviewView struct {
	Files  []string
	Diff   []lineView
	Hidden string // how much of the diff is not shown, if any
	Empty  bool   // the branch changes nothing
	Err    string // why there is no diff to show (and so no buttons)
}

// review reads the changes of the finished session id the way `longrun
// diff` does (sessionCheckout, checkout.Diff), in this process.
func (s *console) review(ctx context.Context, id string) *reviewView {
	r := &reviewView{}
	in, err := s.a.sessionCheckout(ctx, s.c, id)
	if err != nil {
		r.Err = plainError(err)
		return r
	}
	d, err := checkout.Diff(ctx, in)
	if err != nil {
		r.Err = fmt.Sprintf("diff of session %s: %v (was it discarded?)", id, err)
		return r
	}
	if strings.TrimSpace(d) == "" {
		r.Empty = true
		return r
	}
	if paths, err := checkout.PatchPaths(ctx, d); err == nil {
		for _, p := range paths {
			r.Files = append(r.Files, untrusted.Token(p)) // a file's name is the model's
		}
	}
	shown, c := untrusted.Head(d, maxConsoleDiff, 0)
	r.Diff, r.Hidden = diffLines(shown), c.Note(progName+" diff "+shellQuote(id)+" has it whole")
	return r
}

// plainError is err's message for a page: an exitError's without its
// exit code.
func plainError(err error) string {
	var e exitError
	if errors.As(err, &e) {
		return e.msg
	}
	return err.Error()
}

// apply is the Apply button: applySession, the code of `longrun apply`,
// then back to the session's page with its outcome. A diff that does not
// apply as the checkout is now changes nothing, and says so.
func (s *console) apply(w http.ResponseWriter, r *http.Request, rq request) {
	s.act(w, r, rq, "apply", func(ctx context.Context, id string) (string, error) {
		return s.a.applySession(ctx, s.c, id, "", nil)
	})
}

// discard is the Discard button: discardSession, the code of `longrun
// discard`.
func (s *console) discard(w http.ResponseWriter, r *http.Request, rq request) {
	s.act(w, r, rq, "discard", func(ctx context.Context, id string) (string, error) {
		return s.a.discardSession(ctx, s.c, id)
	})
}

// act runs one review action on the form's session, logs who did it (the
// console's log is the audit trail), and shows the outcome on the
// session's page.
func (s *console) act(w http.ResponseWriter, r *http.Request, rq request, verb string, do func(context.Context, string) (string, error)) {
	id := r.PostFormValue("session")
	if id == "" {
		s.setFlash(w, "the form names no session", true)
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	back := "/session?id=" + url.QueryEscape(id)
	ctx, cancel := context.WithTimeout(r.Context(), consoleApplyTimeout)
	defer cancel()
	msg, err := do(ctx, id)
	if err != nil {
		fmt.Fprintf(s.a.stderr, "console: %s's %s of %s: %v\n", rq.who, verb, id, err)
		s.setFlash(w, plainError(err), true)
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	fmt.Fprintf(s.a.stderr, "console: %s: %s\n", rq.who, msg)
	s.setFlash(w, msg, false)
	http.Redirect(w, r, back, http.StatusSeeOther)
}
