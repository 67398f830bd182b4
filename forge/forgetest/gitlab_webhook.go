package forgetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"
)

// GitLabIssue is an issue on the scripted GitLab.
type GitLabIssue struct {
	IID         int
	Project     string
	Title       string
	Description string
	Author      string
}

// OpenIssue files an issue on project (its full path) by author.
func (f *GitLab) OpenIssue(project, title, description, author string) GitLabIssue {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.issues[project]++
	return GitLabIssue{IID: f.issues[project], Project: project, Title: title, Description: description, Author: author}
}

// Webhook payloads as GitLab sends them (the fields Longrun reads, and
// some neighbours), with the X-Gitlab-Event each goes under.

func glProjectJSON(project string) map[string]any {
	return map[string]any{"id": 1, "path_with_namespace": project, "web_url": "https://gitlab.test/" + project}
}

func glUserJSON(username string) map[string]any {
	return map[string]any{"id": 7, "name": username, "username": username}
}

func (is GitLabIssue) attrs(action string) map[string]any {
	return map[string]any{"id": 5000 + is.IID, "iid": is.IID, "title": is.Title, "description": is.Description,
		"state": "opened", "action": action, "created_at": "2026-12-05 12:00:00 UTC"}
}

func labels(names ...string) []map[string]any {
	out := []map[string]any{}
	for _, n := range names {
		out = append(out, map[string]any{"id": 1, "title": n})
	}
	return out
}

// GitLabLabeled is the Issue Hook of sender adding label to is.
func GitLabLabeled(is GitLabIssue, label, sender string) (string, any) {
	return "Issue Hook", map[string]any{"object_kind": "issue", "event_type": "issue",
		"user": glUserJSON(sender), "project": glProjectJSON(is.Project),
		"object_attributes": is.attrs("update"), "labels": labels(label),
		"changes": map[string]any{"labels": map[string]any{"previous": labels(), "current": labels(label)}}}
}

// GitLabOpenedWith is the Issue Hook of sender opening is with label.
func GitLabOpenedWith(is GitLabIssue, label, sender string) (string, any) {
	return "Issue Hook", map[string]any{"object_kind": "issue", "event_type": "issue",
		"user": glUserJSON(sender), "project": glProjectJSON(is.Project),
		"object_attributes": is.attrs("open"), "labels": labels(label)}
}

// GitLabIssueNote is the Note Hook of sender's note on is.
func GitLabIssueNote(is GitLabIssue, note, sender string) (string, any) {
	return "Note Hook", map[string]any{"object_kind": "note", "event_type": "note",
		"user": glUserJSON(sender), "project": glProjectJSON(is.Project),
		"object_attributes": map[string]any{"id": time.Now().UnixNano(), "note": note, "noteable_type": "Issue", "action": "create"},
		"issue":             is.attrs("")}
}

// GitLabMergeRequestNote is the Note Hook of sender's note on m; path and
// line, when path is set, place it on the diff.
func GitLabMergeRequestNote(m MergeRequest, path string, line int, note, sender string) (string, any) {
	attrs := map[string]any{"id": time.Now().UnixNano(), "note": note, "noteable_type": "MergeRequest", "action": "create"}
	if path != "" {
		attrs["type"] = "DiffNote"
		attrs["position"] = map[string]any{"new_path": path, "new_line": line, "old_path": path, "old_line": nil, "position_type": "text"}
	}
	return "Note Hook", map[string]any{"object_kind": "note", "event_type": "note",
		"user": glUserJSON(sender), "project": glProjectJSON(m.Project), "object_attributes": attrs,
		"merge_request": map[string]any{"iid": m.IID, "title": m.Title, "source_branch": m.SourceBranch,
			"target_branch": m.TargetBranch, "state": m.State}}
}

// GitLabDelivery is one webhook request as GitLab makes it.
type GitLabDelivery struct {
	URL, Event, ID string
	Body           []byte
	// Token is sent as X-Gitlab-Token ("" sends none).
	Token string
	// ContentType, when set, replaces application/json.
	ContentType string
}

// NewGitLabDelivery encodes payload for event, to be delivered to url
// with token, under a new delivery id.
func NewGitLabDelivery(t testing.TB, url, token, event string, payload any) GitLabDelivery {
	t.Helper()
	body, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return GitLabDelivery{URL: url, Event: event, ID: fmt.Sprintf("gl-%d", time.Now().UnixNano()), Body: body, Token: token}
}

// Send posts the delivery as GitLab does (its event, token, event UUID
// and idempotency key headers; a resend keeps the key) and returns the
// answer's status and body.
func (d GitLabDelivery) Send(t testing.TB) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, d.URL, bytes.NewReader(d.Body))
	if err != nil {
		t.Fatal(err)
	}
	ct := d.ContentType
	if ct == "" {
		ct = "application/json"
	}
	req.Header.Set("Content-Type", ct)
	req.Header.Set("User-Agent", "GitLab/17.6.0")
	req.Header.Set("X-Gitlab-Event", d.Event)
	req.Header.Set("X-Gitlab-Event-UUID", fmt.Sprintf("uuid-%d", time.Now().UnixNano()))
	req.Header.Set("Idempotency-Key", d.ID)
	if d.Token != "" {
		req.Header.Set("X-Gitlab-Token", d.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("deliver %s: %v", d.Event, err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}
