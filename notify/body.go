package notify

import (
	"github.com/longrun/longrun/callref"

	"encoding/json"
	"fmt"
	"net/url"
	"strings"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/untrusted"
)

// Render is what the worker adds to an event when it renders it: where a
// person decides. None of it is secret, but it is the worker's, so it
// stays out of history.
type Render struct {
	// ConsoleURL is the approval inbox (starter console), linked from
	// every message; "" links nothing.
	ConsoleURL string
	// Address and Namespace are the worker's Temporal frontend and
	// namespace, named in the commands when they are not the defaults.
	Address, Namespace string
	// CLI is the starter's command name; "" is "longrun".
	CLI string
}

// Body is the generic webhook's JSON body.
type Body struct {
	Event   string `json:"event"`
	Session string `json:"session"`
	// IdempotencyKey is also sent as the Idempotency-Key header.
	IdempotencyKey string `json:"idempotency_key"`
	Status         string `json:"status,omitempty"`
	Turn           int    `json:"turn"`
	Error          string `json:"error,omitempty"`
	FinalText      string `json:"final_text,omitempty"`
	// Text is one line for a person: what happened.
	Text string `json:"text"`
	// InboxURL is the approval inbox, when the worker knows it.
	InboxURL string `json:"inbox_url,omitempty"`
	// SessionURL is the session's own page in the inbox, at its first
	// waiting call (the console's /session?id=ID#call-CALL link).
	SessionURL string        `json:"session_url,omitempty"`
	Pending    []PendingCall `json:"pending"`
	// Task, Repository and Workspace are what the session was asked
	// and where it works (Event.Task, Repo, Workspace).
	Task       string `json:"task,omitempty"`
	Repository string `json:"repository,omitempty"`
	Workspace  string `json:"workspace,omitempty"`
	// Branch, Changes and Review are an ended session's branch, its
	// size and files, and the commands that review it.
	Branch  string         `json:"branch,omitempty"`
	Changes *checkout.Stat `json:"changes,omitempty"`
	Review  *Review        `json:"review,omitempty"`
	// PullRequest is the URL of the pull request an ended session's
	// branch was published to, as the forge answered it: link it only
	// when it is an http(s) URL (Text and the Slack message show it
	// made visible). PushError says why publishing failed.
	PullRequest string `json:"pull_request,omitempty"`
	PushError   string `json:"push_error,omitempty"`
}

// Review are the commands that look at an ended session's branch and
// bring it over or drop it; the console's session page has the same as
// buttons.
type Review struct {
	Diff    string `json:"diff"`
	Apply   string `json:"apply"`
	Discard string `json:"discard"`
}

// PendingCall is a waiting call with the exact commands that decide it.
type PendingCall struct {
	Call
	Commands Commands `json:"commands"`
	// Shown is the call as a person should read it: the raw strings above
	// are the model's, and may hold escape sequences, bidi controls or a
	// homoglyph host a receiver would render as they want.
	Shown Shown `json:"shown"`
}

// Shown is a call rendered by untrusted: ids, tool and reason on one line
// and the arguments with every hidden character visible, followed by what
// was cut, if anything, and where the whole call is.
type Shown struct {
	// ID is the session's id of the call, the one decisions name.
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Tool      string `json:"tool"`
	Arguments string `json:"arguments"`
	Reason    string `json:"reason"`
	// Hidden says how much of the arguments is not here and where they
	// are whole; "" when they are all here.
	Hidden string `json:"hidden,omitempty"`
}

// Commands decide one call: with the CLI (the approve update, checked),
// or, when no CLI is at hand, with the temporal CLI's signal (durable,
// taken even while no worker runs).
type Commands struct {
	Approve       string `json:"approve"`
	Deny          string `json:"deny"`
	ApproveSignal string `json:"approve_signal"`
	DenySignal    string `json:"deny_signal"`
}

// NewBody renders ev for the generic webhook.
func NewBody(ev Event, r Render) Body {
	b := Body{
		Event: ev.Event, Session: ev.Session, IdempotencyKey: ev.Key, Status: ev.Status, Turn: ev.Turn,
		Error: ev.Error, FinalText: ev.FinalText, Text: Summary(ev), InboxURL: r.ConsoleURL,
		SessionURL: r.sessionURL(ev),
		Pending:    make([]PendingCall, 0, len(ev.Pending)),
		Task:       ev.Task, Repository: ev.Repo, Workspace: ev.Workspace, Branch: ev.Branch, Changes: ev.Changes,
		Review: r.review(ev), PullRequest: ev.PullRequest, PushError: ev.PushError,
	}
	for _, c := range ev.Pending {
		b.Pending = append(b.Pending, PendingCall{Call: c, Commands: r.commands(ev.Session, c), Shown: r.shown(ev, c, 0)})
	}
	return b
}

// shown renders c, its arguments cut to limit bytes (0: as recorded).
func (r Render) shown(ev Event, c Call, limit int) Shown {
	args, cut := untrusted.Head(c.Arguments, limit, 0)
	if c.Cut != nil {
		cut = cut.Plus(*c.Cut)
	}
	return Shown{
		ID: untrusted.Token(c.ID), CallID: untrusted.Token(c.CallID), Tool: untrusted.Line(c.Tool), Reason: untrusted.Line(c.Reason),
		Arguments: untrusted.Visible(args), Hidden: cut.Note(r.whole(ev)),
	}
}

// whole is where a cut call is seen whole.
func (r Render) whole(ev Event) string {
	if u := r.sessionURL(ev); u != "" {
		return "the whole call: " + u
	}
	return fmt.Sprintf("the whole call: %s pending --full %s", orDefault(r.CLI, "longrun"), untrusted.ShellWord(ev.Session))
}

// sessionURL links ev's session in the console: its page, at the first
// waiting call; "" without a console URL.
func (r Render) sessionURL(ev Event) string {
	if r.ConsoleURL == "" {
		return ""
	}
	u := strings.TrimSuffix(r.ConsoleURL, "/") + "/session?id=" + url.QueryEscape(ev.Session)
	if len(ev.Pending) > 0 {
		u += "#call-" + url.PathEscape(ev.Pending[0].ID)
	}
	return u
}

// Marshal is the body's bytes, the ones the signature covers.
func (b Body) Marshal() ([]byte, error) {
	raw, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("encode notification %s: %w", b.IdempotencyKey, err)
	}
	return raw, nil
}

// Summary is one line saying what happened, what the session was asked,
// where, and what it left to review.
func Summary(ev Event) string {
	return what(ev) + where(ev)
}

func what(ev Event) string {
	switch ev.Event {
	case EventWaiting:
		return fmt.Sprintf("Session %s is waiting for approval of %d tool call(s).", ev.Session, len(ev.Pending))
	case EventCompleted:
		return fmt.Sprintf("Session %s completed after %d turn(s).", ev.Session, ev.Turn)
	case EventFailed:
		return fmt.Sprintf("Session %s failed: %s", ev.Session, orNone(ev.Error))
	case EventBudget:
		return fmt.Sprintf("Session %s stopped on its budget: %s", ev.Session, orNone(ev.Error))
	}
	return fmt.Sprintf("Session %s: %s", ev.Session, ev.Event)
}

// where is the task, the repository, the branch's changes and its pull
// request, as they are known: " Asked: "fix the tests"; repository
// /src/app; branch longrun/session-x: 2 files changed, +10 -2; pull
// request https://github.com/acme/app/pull/7." The task is made
// visible: it may be pasted from anywhere; so is the forge's URL.
func where(ev Event) string {
	var parts []string
	if ev.Task != "" {
		parts = append(parts, fmt.Sprintf("Asked: %q", untrusted.Line(ev.Task)))
	}
	switch {
	case ev.Repo != "":
		parts = append(parts, "repository "+untrusted.Line(ev.Repo))
	case ev.Workspace != "":
		parts = append(parts, "in place, in the worker's workspace ("+untrusted.Line(ev.Workspace)+")")
	}
	if ev.Branch != "" {
		b := "branch " + untrusted.Line(ev.Branch)
		switch {
		case ev.Changes != nil && ev.Changes.Files > 0:
			b += ": " + ev.Changes.String()
		case ev.Changes != nil:
			b += ": no change"
		}
		parts = append(parts, b)
	}
	if ev.PullRequest != "" {
		parts = append(parts, "pull request "+untrusted.Line(ev.PullRequest))
	}
	if ev.PushError != "" {
		parts = append(parts, "not published: "+untrusted.Line(ev.PushError))
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, "; ") + "."
}

// review is the commands that review ev's branch; nil when it has none
// (a session still running, or one that ran in place).
func (r Render) review(ev Event) *Review {
	if ev.Branch == "" || ev.Event == EventWaiting {
		return nil
	}
	cmd := func(verb string) string {
		return fmt.Sprintf("%s%s %s %s", orDefault(r.CLI, "longrun"), contract.ConnFlags(r.Address, r.Namespace), verb, untrusted.ShellWord(ev.Session))
	}
	return &Review{Diff: cmd("diff"), Apply: cmd("apply"), Discard: cmd("discard")}
}

func orNone(s string) string {
	if s == "" {
		return "no reason given"
	}
	return s
}

// commands are the four commands deciding call c of session: by the
// session's id of the call, the signal with the digest of its arguments.
func (r Render) commands(session string, c Call) Commands {
	callID := c.ID
	cli := r.CLI
	if cli == "" {
		cli = "longrun"
	}
	conn := contract.ConnFlags(r.Address, r.Namespace)
	signal := func(decision, feedback string) string {
		// The signal's payload, workflows.Approval's JSON.
		payload, _ := json.Marshal(struct {
			ID       string `json:"id"`
			Digest   string `json:"digest,omitempty"`
			Decision string `json:"decision"`
			Feedback string `json:"feedback,omitempty"`
		}{callID, callref.Short(c.Digest), decision, feedback}) // strings always encode
		return fmt.Sprintf("temporal workflow signal%s --workflow-id %s --name %s --input %s",
			conn, untrusted.ShellWord(session), SignalApproval, untrusted.ShellWord(string(payload)))
	}
	return Commands{
		Approve:       fmt.Sprintf("%s%s approve %s %s", cli, conn, untrusted.ShellWord(session), untrusted.ShellWord(callID)),
		Deny:          fmt.Sprintf("%s%s deny %s %s --feedback 'why'", cli, conn, untrusted.ShellWord(session), untrusted.ShellWord(callID)),
		ApproveSignal: signal("approve", ""),
		DenySignal:    signal("deny", "why"),
	}
}
