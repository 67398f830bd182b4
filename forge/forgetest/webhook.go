package forgetest

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Issue is an issue the scripted forge holds: issues and pull requests
// share one sequence of numbers, as on GitHub.
type Issue struct {
	Number int
	Repo   string
	Title  string
	Body   string
	Author string
}

// nextNumber is the next issue or pull request number; f.mu is held.
func (f *GitHub) nextNumber() int { return len(f.pulls) + len(f.issues) + 1 }

// OpenIssue files an issue on repo ("owner/name") by author.
func (f *GitHub) OpenIssue(repo, title, body, author string) Issue {
	f.mu.Lock()
	defer f.mu.Unlock()
	is := &Issue{Number: f.nextNumber(), Repo: repo, Title: title, Body: body, Author: author}
	f.issues = append(f.issues, is)
	return *is
}

// Webhook payloads as GitHub sends them (the fields Longrun reads, and
// their neighbours), for a test to deliver with Deliver.

func repoJSON(repo string) map[string]any {
	owner, name, _ := strings.Cut(repo, "/")
	return map[string]any{"full_name": repo, "name": name, "owner": map[string]any{"login": owner}}
}

func user(login string) map[string]any { return map[string]any{"login": login, "type": "User"} }

func (is Issue) json() map[string]any {
	return map[string]any{"number": is.Number, "title": is.Title, "body": is.Body, "user": user(is.Author), "state": "open"}
}

// Labeled is the "issues" event of sender labelling is with label.
func Labeled(is Issue, label, sender string) (string, any) {
	return "issues", map[string]any{"action": "labeled", "issue": is.json(), "label": map[string]any{"name": label},
		"repository": repoJSON(is.Repo), "sender": user(sender)}
}

// Commented is the "issue_comment" event of sender's comment on is.
func Commented(is Issue, body, sender string) (string, any) {
	return "issue_comment", map[string]any{"action": "created", "issue": is.json(),
		"comment":    map[string]any{"id": time.Now().UnixNano(), "body": body, "user": user(sender)},
		"repository": repoJSON(is.Repo), "sender": user(sender)}
}

func (p Pull) json() map[string]any {
	return map[string]any{"number": p.Number, "title": p.Title, "body": p.Body, "state": p.State,
		"head": map[string]any{"ref": p.Head}, "base": map[string]any{"ref": p.Base}}
}

// ReviewCommented is the "pull_request_review_comment" event of sender's
// comment on line of path in p's diff.
func ReviewCommented(p Pull, path string, line int, body, sender string) (string, any) {
	return "pull_request_review_comment", map[string]any{"action": "created", "pull_request": p.json(),
		"comment":    map[string]any{"id": time.Now().UnixNano(), "body": body, "path": path, "line": line, "user": user(sender)},
		"repository": repoJSON(p.Repo), "sender": user(sender)}
}

// Reviewed is the "pull_request_review" event of sender's review of p,
// state "changes_requested", "commented" or "approved".
func Reviewed(p Pull, state, body, sender string) (string, any) {
	return "pull_request_review", map[string]any{"action": "submitted", "pull_request": p.json(),
		"review":     map[string]any{"id": time.Now().UnixNano(), "state": state, "body": body, "user": user(sender)},
		"repository": repoJSON(p.Repo), "sender": user(sender)}
}

// Delivery is one webhook request as GitHub makes it.
type Delivery struct {
	URL, Event, ID string
	Body           []byte
	// Secret signs the body (X-Hub-Signature-256); Signature, when set,
	// is sent instead (a forged one).
	Secret    string
	Signature string
	// Host, when set, is the Host header sent.
	Host string
}

// NewDelivery encodes payload for event, to be delivered to url signed
// with secret, under a new delivery id.
func NewDelivery(t testing.TB, url, secret, event string, payload any) Delivery {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return Delivery{URL: url, Event: event, ID: fmt.Sprintf("d-%d", time.Now().UnixNano()), Body: body, Secret: secret}
}

// Send posts the delivery as GitHub does (application/json, its event,
// delivery and signature headers) and returns the answer's status and
// body.
func (d Delivery) Send(t testing.TB) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		t.Fatal(err)
	}
	sig := d.Signature
	if sig == "" {
		m := hmac.New(sha256.New, []byte(d.Secret))
		m.Write(d.Body)
		sig = "sha256=" + hex.EncodeToString(m.Sum(nil))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "GitHub-Hookshot/forgetest")
	req.Header.Set("X-GitHub-Event", d.Event)
	req.Header.Set("X-GitHub-Delivery", d.ID)
	req.Header.Set("X-Hub-Signature-256", sig)
	if d.Host != "" {
		req.Host = d.Host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("deliver %s: %v", d.Event, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}
