package forge

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/longrun/longrun/checkout"
)

// GitLab's webhooks, read into the same Actions as GitHub's. GitLab does
// not sign a delivery: it sends the secret token configured on the hook
// in a header, so the check is that header against the token, in constant
// time. The payloads are read into the few fields Longrun acts on (the
// client library's event types decode every field with strict types, so
// a field of another shape in a GitLab version would refuse a delivery
// for a field Longrun never reads).

// Webhook headers GitLab sends.
const (
	HeaderGitLabToken = "X-Gitlab-Token"
	HeaderGitLabEvent = "X-Gitlab-Event"
	// HeaderGitLabDelivery names one delivery; HeaderIdempotencyKey
	// (GitLab 17.4 and later) stays the same across its retries.
	HeaderGitLabDelivery = "X-Gitlab-Event-UUID"
	HeaderIdempotencyKey = "Idempotency-Key"
)

// ErrBadToken is a GitLab delivery whose X-Gitlab-Token is missing or not
// the configured one.
var ErrBadToken = errors.New("bad token")

// VerifyGitLab checks header (X-Gitlab-Token) against secret in constant
// time: both are hashed first, so neither the comparison nor its length
// tells how much of a guess was right. An empty secret verifies nothing.
func VerifyGitLab(secret []byte, header string) error {
	if len(secret) == 0 {
		return fmt.Errorf("%w: no GitLab webhook token configured", ErrBadToken)
	}
	if header == "" {
		return fmt.Errorf("%w: no %s header", ErrBadToken, HeaderGitLabToken)
	}
	got, want := sha256.Sum256([]byte(header)), sha256.Sum256(secret)
	if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
		return fmt.Errorf("%w: %s is not the configured token", ErrBadToken, HeaderGitLabToken)
	}
	return nil
}

// gitLabPrefix begins every session id a GitLab issue starts.
const gitLabPrefix = "gl-"

// GitLabSessionFor is the id of the session a GitLab issue starts: made of
// the project's path and the issue's iid only, so a delivery sent twice
// names the same session. The path is lowercased with "/" as "_" for a
// person to read, then a hash of the whole path, since GitLab's names may
// hold "_" themselves (a_b/c and a/b_c read alike); the iid is last
// (acme/app #7 is gl-acme_app-<hash>-7).
func GitLabSessionFor(project string, iid int) string {
	p := strings.ToLower(project)
	slug := strings.ReplaceAll(p, "/", "_")
	for strings.Contains(slug, "..") {
		slug = strings.ReplaceAll(slug, "..", ".")
	}
	if len(slug) > 60 {
		slug = slug[:60]
	}
	sum := sha256.Sum256([]byte(p))
	return checkout.Sanitize(gitLabPrefix + slug + "-" + hex.EncodeToString(sum[:4]) + "-" + strconv.Itoa(iid))
}

// ofGitLabProject reports whether session may be steered from a merge
// request of project: a session a GitLab issue started only from its own
// project's, one a GitHub issue started never; others (started by hand)
// pass.
func ofGitLabProject(session, project string) bool {
	switch {
	case strings.HasPrefix(session, gitHubPrefix):
		return false
	case !strings.HasPrefix(session, gitLabPrefix):
		return true
	}
	i := strings.LastIndexByte(session, '-')
	n, err := strconv.Atoi(session[i+1:])
	return err == nil && n > 0 && GitLabSessionFor(project, n) == session
}

// The parts of GitLab's payloads Longrun reads.
type (
	glUser struct {
		Username string `json:"username"`
	}
	glProject struct {
		PathWithNamespace string `json:"path_with_namespace"`
	}
	glLabel struct {
		Title string `json:"title"`
	}
	glIssue struct {
		IID         int64  `json:"iid"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Action      string `json:"action"` // Issue Hook: open, update, close, reopen
	}
	glMergeRequest struct {
		IID          int64  `json:"iid"`
		SourceBranch string `json:"source_branch"`
	}
	glNote struct {
		Note         string `json:"note"`
		NoteableType string `json:"noteable_type"`
		Action       string `json:"action"` // create, update (GitLab 16 and later)
		Position     *struct {
			NewPath string `json:"new_path"`
			NewLine *int   `json:"new_line"`
			OldPath string `json:"old_path"`
			OldLine *int   `json:"old_line"`
		} `json:"position"`
	}
	glHook struct {
		ObjectKind       string          `json:"object_kind"`
		User             glUser          `json:"user"`
		Project          glProject       `json:"project"`
		ObjectAttributes json.RawMessage `json:"object_attributes"`
		Labels           []glLabel       `json:"labels"`
		Changes          struct {
			Labels *struct {
				Previous []glLabel `json:"previous"`
				Current  []glLabel `json:"current"`
			} `json:"labels"`
		} `json:"changes"`
		Issue        *glIssue        `json:"issue"`
		MergeRequest *glMergeRequest `json:"merge_request"`
	}
)

// ParseGitLab reads a verified GitLab delivery of event (X-Gitlab-Event)
// with body into the action it asks for, or a *Refusal saying why it asks
// for none: an issue given the label starts its session, a note
// "/longrun [task]" on an issue too; a note on a Longrun merge request is
// its session's next message; "/approve CALL" and "/deny CALL reason"
// decide a call.
func (c HookConfig) ParseGitLab(event string, body []byte) (Action, error) {
	switch event {
	case "Issue Hook", "Confidential Issue Hook", "Note Hook", "Confidential Note Hook":
	default:
		return Action{}, refuse(202, "event %q: not handled (send Issues and Comments events)", event)
	}
	var h glHook
	if err := json.Unmarshal(body, &h); err != nil {
		return Action{}, refuse(400, "event %q: %v", event, err)
	}
	switch h.ObjectKind {
	case "issue":
		var is glIssue
		if err := json.Unmarshal(h.ObjectAttributes, &is); err != nil {
			return Action{}, refuse(400, "issue: object_attributes: %v", err)
		}
		if !c.labelAdded(h, is.Action) {
			return Action{}, refuse(202, "issue %s: only an issue given the label %q starts a session", is.Action, c.label())
		}
		a, err := c.gitLabWho(h)
		if err != nil {
			return a, err
		}
		return gitLabStart(a, is, "")
	case "note":
		var n glNote
		if err := json.Unmarshal(h.ObjectAttributes, &n); err != nil {
			return Action{}, refuse(400, "note: object_attributes: %v", err)
		}
		if n.Action != "" && n.Action != "create" {
			return Action{}, refuse(202, "note %s: only new notes act", n.Action)
		}
		a, err := c.gitLabWho(h)
		if err != nil {
			return a, err
		}
		switch {
		case n.NoteableType == "Issue" && h.Issue != nil:
			return gitLabIssueNote(a, *h.Issue, n.Note)
		case n.NoteableType == "MergeRequest" && h.MergeRequest != nil:
			return gitLabMergeRequestNote(a, *h.MergeRequest, n)
		}
		return Action{}, refuse(202, "note on a %q: only notes on issues and merge requests act", n.NoteableType)
	}
	return Action{}, refuse(202, "event %q of kind %q: not handled", event, h.ObjectKind)
}

// labelAdded reports whether an Issue Hook gives the issue the label: it
// is opened with it, or an update adds it.
func (c HookConfig) labelAdded(h glHook, action string) bool {
	has := func(ls []glLabel) bool {
		return slices.ContainsFunc(ls, func(l glLabel) bool { return strings.EqualFold(l.Title, c.label()) })
	}
	switch action {
	case "open":
		return has(h.Labels)
	case "update":
		ch := h.Changes.Labels
		return ch != nil && has(ch.Current) && !has(ch.Previous)
	}
	return false
}

// gitLabWho checks the project is served and the user allowed.
func (c HookConfig) gitLabWho(h glHook) (Action, error) {
	name := h.Project.PathWithNamespace
	dir, ok := "", false
	for k, v := range c.Repos {
		if strings.EqualFold(k, name) {
			dir, ok = v, true
		}
	}
	if !ok {
		return Action{}, refuse(403, "project %q is not configured (--gitlab-project)", name)
	}
	login := h.User.Username
	if login == "" || !slices.ContainsFunc(c.Allow, func(a string) bool { return strings.EqualFold(a, login) }) {
		return Action{}, refuse(403, "user %q of %s is not on the allowlist (--gitlab-allow-user)", login, name)
	}
	return Action{Repo: name, WorkDir: dir, Sender: login}, nil
}

// gitLabIID is an iid as an int, refusing one no issue has.
func gitLabIID(iid int64) (int, error) {
	if iid <= 0 || iid > 1<<31 {
		return 0, refuse(400, "iid %d: not an issue's", iid)
	}
	return int(iid), nil
}

// gitLabStart starts the issue's session: its title and description, then
// the note's words, are the task.
func gitLabStart(a Action, is glIssue, extra string) (Action, error) {
	n, err := gitLabIID(is.IID)
	if err != nil {
		return Action{}, err
	}
	a.Kind, a.Issue, a.Session = Start, n, GitLabSessionFor(a.Repo, n)
	task := is.Title
	if b := strings.TrimSpace(is.Description); b != "" {
		task += "\n\n" + b
	}
	if extra = strings.TrimSpace(extra); extra != "" {
		task += "\n\n" + extra
	}
	a.Text = task
	return a, nil
}

// gitLabIssueNote reads a note on an issue: "/longrun [task]" starts the
// issue's session, "/approve" and "/deny" decide a call of it.
func gitLabIssueNote(a Action, is glIssue, note string) (Action, error) {
	cmd, rest := command(note)
	switch cmd {
	case "/longrun":
		return gitLabStart(a, is, rest)
	case "/approve", "/deny":
		n, err := gitLabIID(is.IID)
		if err != nil {
			return Action{}, err
		}
		a.Issue, a.Session = n, GitLabSessionFor(a.Repo, n)
		return decision(a, cmd, rest)
	}
	return Action{}, refuse(202, "note on issue #%d: no /longrun, /approve or /deny command", is.IID)
}

// gitLabMergeRequestNote reads a note on a merge request from a Longrun
// branch: its session's next message, or a decision.
func gitLabMergeRequestNote(a Action, mr glMergeRequest, n glNote) (Action, error) {
	iid, err := gitLabIID(mr.IID)
	if err != nil {
		return Action{}, err
	}
	a.Issue = iid
	a.Session = SessionOfBranch(mr.SourceBranch)
	if a.Session == "" {
		return Action{}, refuse(202, "merge request !%d: its branch %q is not a Longrun session's (longrun/<session>)", iid, mr.SourceBranch)
	}
	if !ofGitLabProject(a.Session, a.Repo) {
		return Action{}, refuse(403, "merge request !%d: session %s was not started from an issue of %s", iid, a.Session, a.Repo)
	}
	if cmd, _ := command(n.Note); cmd == "/longrun" {
		return Action{}, refuse(202, "/longrun on a merge request: write it on an issue to start a session")
	}
	intro := "Comment on the merge request:\n\n"
	if p := n.Position; p != nil {
		path, line := p.NewPath, p.NewLine
		if line == nil {
			path, line = p.OldPath, p.OldLine
		}
		if line != nil {
			intro = fmt.Sprintf("Review comment on %s line %d:\n\n", path, *line)
		}
	}
	return review(a, n.Note, intro)
}
