package forge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/google/go-github/v84/github"

	"github.com/longrun/longrun/checkout"
)

// A forge's webhooks, read into what Longrun does with them. Everything a
// webhook carries is untrusted: its signature proves GitHub sent it, not
// that the text in it is safe. Who may act is the sender's login on the
// allowlist; what a session does with an issue's text is the model's to
// read as its task. Nothing of a payload becomes a flag, a setting, a
// path or a session's configuration: the session's id and branch are
// made here from the repository's name and the issue's number.

// Webhook headers GitHub sends (and Gitea and Forgejo, with GitHub's
// names beside their own).
const (
	HeaderSignature = "X-Hub-Signature-256"
	HeaderEvent     = github.EventTypeHeader
	HeaderDelivery  = github.DeliveryIDHeader
)

// DefaultLabel is the label that hands an issue to Longrun.
const DefaultLabel = "longrun"

// HookConfig is what a webhook receiver accepts.
type HookConfig struct {
	// Secret is the webhook's secret, as configured on the forge.
	Secret []byte
	// Allow are the logins whose events may act, compared without case.
	Allow []string
	// Label hands a labelled issue to Longrun (DefaultLabel if "").
	Label string
	// Repos are the repositories served ("owner/name", compared without
	// case), each with the worker's directory its sessions work in.
	Repos map[string]string
}

// Kind is what a webhook asks for.
type Kind string

// The kinds of Action.
const (
	// Start a session on an issue.
	Start Kind = "start"
	// Message is the person's next message to a session.
	Message Kind = "message"
	// Approve or Deny a waiting call.
	Approve Kind = "approve"
	Deny    Kind = "deny"
)

// Action is a verified, allowed webhook's request.
type Action struct {
	Kind Kind
	// Repo is the repository's "owner/name" as the forge spells it;
	// WorkDir the directory configured for it.
	Repo, WorkDir string
	// Issue is the issue's (or pull request's) number.
	Issue int
	// Session is the session acted on: made from Repo and Issue for
	// Start, read from the pull request's branch for the others.
	Session string
	// Text is the task (Start), the message (Message) or the reason
	// (Deny): untrusted, for the model to read and nothing else.
	Text string
	// Call is the waiting call's id (Approve, Deny).
	Call string
	// Sender is the login that acted.
	Sender string
}

// Refusal is why a webhook does nothing: a bad signature, an event not
// handled, a sender not on the allowlist, a repository not configured.
// Status is the HTTP status to answer with.
type Refusal struct {
	Status int
	Reason string
}

func (r *Refusal) Error() string { return r.Reason }

func refuse(status int, format string, args ...any) error {
	return &Refusal{Status: status, Reason: fmt.Sprintf(format, args...)}
}

// ErrBadSignature is a body whose signature is missing or not the secret's.
var ErrBadSignature = errors.New("bad signature")

// Verify checks header (X-Hub-Signature-256: "sha256=" and the hex
// HMAC-SHA256 of body with secret) in constant time. An empty secret
// verifies nothing.
func Verify(secret, body []byte, header string) error {
	if len(secret) == 0 {
		return fmt.Errorf("%w: no webhook secret configured", ErrBadSignature)
	}
	hexSum, ok := strings.CutPrefix(header, "sha256=")
	if !ok {
		return fmt.Errorf("%w: no %s sha256= header", ErrBadSignature, HeaderSignature)
	}
	got, err := hex.DecodeString(hexSum)
	if err != nil || len(got) != sha256.Size {
		return fmt.Errorf("%w: %s is not a sha256 hex digest", ErrBadSignature, HeaderSignature)
	}
	if !hmac.Equal(got, Sign(secret, body)) {
		return fmt.Errorf("%w: %s does not match the body and the secret", ErrBadSignature, HeaderSignature)
	}
	return nil
}

// Sign is the HMAC-SHA256 of body with secret, as GitHub signs a
// delivery.
func Sign(secret, body []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return m.Sum(nil)
}

// SessionFor is the id of the session an issue starts: made of the
// repository and the number only, so a webhook delivered twice names
// the same session, and its branch (checkout.Branch) is the same. The
// owner and the name are joined by "_", which no owner's name holds, and
// the number is last: two issues never share an id (acme/app-x #7 is
// gh-acme_app-x-7, acme-app/x #7 gh-acme-app_x-7).
func SessionFor(repo string, issue int) string {
	return checkout.Sanitize("gh-" + strings.ToLower(strings.Replace(repo, "/", "_", 1)) + "-" + strconv.Itoa(issue))
}

// SessionOfBranch is the session whose branch is head (longrun/<session>),
// "" when head is not a Longrun branch.
func SessionOfBranch(head string) string {
	s, ok := strings.CutPrefix(head, checkout.BranchPrefix)
	if !ok || s == "" || checkout.Sanitize(s) != s {
		return ""
	}
	return s
}

// callID is a session's call id as issue 28 names them ("c17") or a
// model's id: one token of a few safe characters, nothing a flag or a
// line could hide in.
var callID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$`)

// Parse reads a verified delivery of event with body into the action it
// asks for, or a *Refusal saying why it asks for none.
func (c HookConfig) Parse(event string, body []byte) (Action, error) {
	ev, err := github.ParseWebHook(event, body)
	if err != nil {
		return Action{}, refuse(400, "event %q: %v", event, err)
	}
	switch e := ev.(type) {
	case *github.PingEvent:
		return Action{}, refuse(200, "ping: nothing to do")
	case *github.IssuesEvent:
		if e.GetAction() != "labeled" || !strings.EqualFold(e.GetLabel().GetName(), c.label()) {
			return Action{}, refuse(202, "issues %s (label %q): only the label %q starts a session", e.GetAction(), e.GetLabel().GetName(), c.label())
		}
		if e.GetIssue() == nil {
			return Action{}, refuse(400, "issues %s: the payload has no issue", e.GetAction())
		}
		if e.GetIssue().IsPullRequest() {
			return Action{}, refuse(202, "a pull request labelled %q: only issues start sessions", c.label())
		}
		a, err := c.who(e.GetRepo(), e.GetSender())
		if err != nil {
			return a, err
		}
		return c.start(a, e.GetIssue(), ""), nil
	case *github.IssueCommentEvent:
		if e.GetAction() != "created" {
			return Action{}, refuse(202, "issue_comment %s: only new comments act", e.GetAction())
		}
		if e.GetIssue() == nil {
			return Action{}, refuse(400, "issue_comment: the payload has no issue")
		}
		a, err := c.who(e.GetRepo(), e.GetSender())
		if err != nil {
			return a, err
		}
		return c.comment(a, e.GetIssue(), e.GetComment().GetBody())
	case *github.PullRequestReviewCommentEvent:
		if e.GetAction() != "created" {
			return Action{}, refuse(202, "pull_request_review_comment %s: only new comments act", e.GetAction())
		}
		a, err := c.onPull(e.GetRepo(), e.GetSender(), e.GetPullRequest())
		if err != nil {
			return a, err
		}
		cm := e.GetComment()
		return review(a, cm.GetBody(), fmt.Sprintf("Review comment on %s line %d:\n\n", cm.GetPath(), cm.GetLine()))
	case *github.PullRequestReviewEvent:
		st := strings.ToLower(e.GetReview().GetState())
		if e.GetAction() != "submitted" || st != "changes_requested" && strings.TrimSpace(e.GetReview().GetBody()) == "" {
			return Action{}, refuse(202, "pull_request_review %s (%s): only a submitted review with changes requested or a comment acts", e.GetAction(), st)
		}
		a, err := c.onPull(e.GetRepo(), e.GetSender(), e.GetPullRequest())
		if err != nil {
			return a, err
		}
		body := e.GetReview().GetBody()
		if strings.TrimSpace(body) == "" {
			body = "(no text)"
		}
		return review(a, body, "Review ("+st+"):\n\n")
	}
	return Action{}, refuse(202, "event %q: not handled", event)
}

func (c HookConfig) label() string {
	if c.Label == "" {
		return DefaultLabel
	}
	return c.Label
}

// who checks the repository is served and the sender allowed.
func (c HookConfig) who(repo *github.Repository, sender *github.User) (Action, error) {
	name := repo.GetFullName()
	dir, ok := "", false
	for k, v := range c.Repos {
		if strings.EqualFold(k, name) {
			dir, ok = v, true
		}
	}
	if !ok {
		return Action{}, refuse(403, "repository %q is not configured (--repo)", name)
	}
	login := sender.GetLogin()
	if login == "" || !slices.ContainsFunc(c.Allow, func(a string) bool { return strings.EqualFold(a, login) }) {
		return Action{}, refuse(403, "sender %q of %s is not on the allowlist (--allow-user)", login, name)
	}
	return Action{Repo: name, WorkDir: dir, Sender: login}, nil
}

// start is the action that starts the session of issue: its title and
// body, then the comment's words, are the task.
func (c HookConfig) start(a Action, issue *github.Issue, extra string) Action {
	a.Kind, a.Issue = Start, issue.GetNumber()
	a.Session = SessionFor(a.Repo, a.Issue)
	task := issue.GetTitle()
	if b := strings.TrimSpace(issue.GetBody()); b != "" {
		task += "\n\n" + b
	}
	if extra = strings.TrimSpace(extra); extra != "" {
		task += "\n\n" + extra
	}
	a.Text = task
	return a
}

// comment reads an issue's (or a pull request's conversation's) comment:
// "/longrun [task]" starts the issue's session; "/approve CALL" and
// "/deny CALL reason" decide a call of the session the issue started.
// On a pull request, the comment names its session through the command
// only: its head branch is not in the payload.
func (c HookConfig) comment(a Action, issue *github.Issue, body string) (Action, error) {
	cmd, rest := command(body)
	switch cmd {
	case "/longrun":
		if issue.IsPullRequest() {
			return Action{}, refuse(202, "/longrun on a pull request: comment on an issue to start a session")
		}
		return c.start(a, issue, rest), nil
	case "/approve", "/deny":
		if issue.IsPullRequest() {
			// The payload does not name the pull request's branch, so
			// not its session either; a review's payload does.
			return Action{}, refuse(202, "%s on pull request #%d's conversation: its branch is not in the payload; write it on the issue, or as a review comment", cmd, issue.GetNumber())
		}
		a.Issue = issue.GetNumber()
		a.Session = SessionFor(a.Repo, a.Issue)
		return decision(a, cmd, rest)
	}
	return Action{}, refuse(202, "comment on #%d: no /longrun, /approve or /deny command", issue.GetNumber())
}

// onPull checks a pull request event: the repository served, the sender
// allowed, and the pull request a Longrun session's.
func (c HookConfig) onPull(repo *github.Repository, sender *github.User, pr *github.PullRequest) (Action, error) {
	a, err := c.who(repo, sender)
	if err != nil {
		return a, err
	}
	a.Issue = pr.GetNumber()
	a.Session = SessionOfBranch(pr.GetHead().GetRef())
	if a.Session == "" {
		return Action{}, refuse(202, "pull request #%d: its branch %q is not a Longrun session's (longrun/<session>)", a.Issue, pr.GetHead().GetRef())
	}
	if !ofRepo(a.Session, a.Repo) {
		return Action{}, refuse(403, "pull request #%d: session %s was started from another repository's issue than %s", a.Issue, a.Session, a.Repo)
	}
	return a, nil
}

// gitHubPrefix begins every session id a GitHub issue starts.
const gitHubPrefix = "gh-"

// ofRepo reports whether session, when it is one an issue started
// (SessionFor), was started on repo: a branch pushed to one repository
// cannot steer the session of another's issue, nor of a GitLab issue.
// Other sessions (started by hand, pushed by their worker) pass.
func ofRepo(session, repo string) bool {
	if strings.HasPrefix(session, gitLabPrefix) {
		return false
	}
	if !strings.HasPrefix(session, gitHubPrefix) {
		return true
	}
	i := strings.LastIndexByte(session, '-')
	n, err := strconv.Atoi(session[i+1:])
	return err == nil && SessionFor(repo, n) == session
}

// review is a review's text as the session's next message, unless it is
// an /approve or /deny command.
func review(a Action, body, intro string) (Action, error) {
	if cmd, rest := command(body); cmd == "/approve" || cmd == "/deny" {
		return decision(a, cmd, rest)
	}
	a.Kind, a.Text = Message, intro+strings.TrimSpace(body)
	return a, nil
}

// decision reads "CALL [reason]" after /approve or /deny.
func decision(a Action, cmd, rest string) (Action, error) {
	call, reason, _ := strings.Cut(rest, " ")
	reason = strings.TrimSpace(reason)
	if !callID.MatchString(call) {
		return Action{}, refuse(400, "%s: %q is not a call id (as c17)", cmd, call)
	}
	a.Call = call
	if cmd == "/approve" {
		a.Kind = Approve
		return a, nil
	}
	if reason == "" {
		return Action{}, refuse(400, "/deny %s: give the reason after the call id; the model reads it", call)
	}
	a.Kind, a.Text = Deny, reason
	return a, nil
}

// command is a comment's command ("/longrun", "/approve", "/deny") and
// the rest of its first line, then the lines after it: a command is the
// comment's first word, at the start of its first line.
func command(body string) (string, string) {
	body = strings.TrimLeft(body, " \t\r\n")
	first, more, _ := strings.Cut(body, "\n")
	first = strings.TrimRight(first, "\r")
	word, rest, _ := strings.Cut(first, " ")
	switch word {
	case "/longrun", "/approve", "/deny":
	default:
		return "", ""
	}
	rest = strings.TrimSpace(rest)
	if word == "/longrun" || word == "/deny" {
		if m := strings.TrimSpace(more); m != "" {
			rest = strings.TrimSpace(rest + "\n" + m)
		}
	}
	return word, rest
}
