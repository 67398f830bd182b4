package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/longrun/longrun/workflows"
)

// Decisions the console's buttons send: approve and deny as the CLI's, and
// remember, which approves and allows the same again for the session.
const decisionRemember = "remember"

// decide sends one decision through the approve update, exactly the
// JSON `approve`/`deny` send, then goes back to the page it came from
// with the outcome. The form names the call by the session's id and
// carries the digest of the arguments the page showed, so a page shown
// before the call changed (or before the model reused its id) is refused
// by the session rather than deciding a call the person did not see.
func (s *console) decide(w http.ResponseWriter, r *http.Request, rq request) {
	id := r.PostFormValue("session")
	callID := r.PostFormValue("id")
	digest := r.PostFormValue("digest")
	decision := r.PostFormValue("decision")
	feedback := strings.TrimSpace(r.PostFormValue("feedback"))
	pattern := strings.TrimSpace(r.PostFormValue("pattern"))
	back := "/"
	if r.PostFormValue("back") == "session" {
		back = "/session?id=" + url.QueryEscape(id)
	}
	ap, err := approvalFromForm(callID, decision, feedback, pattern)
	ap.Digest, ap.Author = digest, rq.author
	if err == nil && id == "" {
		err = errors.New("the form names no session")
	}
	if err != nil {
		s.setFlash(w, err.Error(), true)
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	out, err := s.a.sendDecision(ctx, s.c, id, callID, ap)
	via := ""
	if err == nil && out == notTaken {
		// No worker took the update: the decision goes as the durable
		// approval signal, as `longrun approve` sends it.
		err, via = s.a.signalDecision(ctx, s.c, id, ap), " (as the durable approval signal: no worker took the update; the session applies it when a worker runs it)"
	}
	if err != nil {
		fmt.Fprintf(s.a.stderr, "console: %s's %s of %s in %s: %v\n", rq.who, ap.Decision, callID, id, err)
		s.setFlash(w, err.Error(), true)
		http.Redirect(w, r, back, http.StatusSeeOther)
		return
	}
	verb := map[string]string{workflows.DecisionApprove: "approved", workflows.DecisionDeny: "denied", decisionRemember: "approved and remembered"}[decision]
	// The log is the audit trail of who decided what from the console.
	fmt.Fprintf(s.a.stderr, "console: %s %s %s in %s%s\n", rq.who, verb, callID, id, via)
	s.setFlash(w, fmt.Sprintf("%s %s in %s%s", verb, callID, id, via), false)
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// approvalFromForm checks a decision form the way `approve` and `deny`
// check their flags: a denial needs feedback for the model, a pattern
// counts only when remembered.
func approvalFromForm(callID, decision, feedback, pattern string) (workflows.Approval, error) {
	ap := workflows.Approval{ID: callID, Feedback: feedback}
	if callID == "" {
		return ap, errors.New("the form names no call")
	}
	switch decision {
	case workflows.DecisionApprove:
		ap.Decision = workflows.DecisionApprove
	case decisionRemember:
		ap.Decision, ap.Remember, ap.Pattern = workflows.DecisionApprove, workflows.RememberSession, pattern
	case workflows.DecisionDeny:
		if feedback == "" {
			return ap, fmt.Errorf("nothing sent: to deny %s, write feedback telling the model why, so it can try something else", callID)
		}
		ap.Decision = workflows.DecisionDeny
	default:
		return ap, fmt.Errorf("unknown decision %q", decision)
	}
	if pattern != "" && decision != decisionRemember {
		return ap, fmt.Errorf("nothing sent: a pattern counts only with \"approve and remember\" (%s was given the pattern %q)", callID, pattern)
	}
	return ap, nil
}

// setFlash keeps a one-line outcome for the next page; a cookie rather
// than a query parameter, so a link cannot make the page say anything.
func (s *console) setFlash(w http.ResponseWriter, msg string, isErr bool) {
	v := "ok:"
	if isErr {
		v = "err:"
	}
	http.SetCookie(w, &http.Cookie{Name: consoleFlashCookie, Value: url.QueryEscape(v + cut(msg, 1000)), Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, MaxAge: 60})
}

// takeFlash reads and clears the outcome setFlash kept.
func (s *console) takeFlash(w http.ResponseWriter, r *http.Request) (string, bool) {
	c, err := r.Cookie(consoleFlashCookie)
	if err != nil {
		return "", false
	}
	http.SetCookie(w, &http.Cookie{Name: consoleFlashCookie, Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	v, err := url.QueryUnescape(c.Value)
	if err != nil {
		return "", false
	}
	if m, ok := strings.CutPrefix(v, "err:"); ok {
		return m, true
	}
	m, _ := strings.CutPrefix(v, "ok:")
	return m, false
}
