package forgetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/longrun/longrun/hostcheck"
)

// MergeRequest is a merge request the scripted GitLab holds.
type MergeRequest struct {
	IID          int
	Project      string // the project's full path
	Title        string
	Description  string
	SourceBranch string
	TargetBranch string
	State        string // opened, closed, merged
	Notes        []string
}

// GitLab is a scripted forge speaking GitLab's REST API v4 for merge
// requests (list, create, update) and their notes (list, create) under
// /api/v4/projects/:id/, the id being the project's URL-encoded path,
// answering as GitLab documents: 401 without the token (PRIVATE-TOKEN or
// a bearer), 409 for a second open merge request from one branch, 422 for
// a source branch the repository does not have. State lives in memory.
type GitLab struct {
	*httptest.Server
	Token string
	// Git, when set, is the git server whose repositories the merge
	// requests' source branches must be in.
	Git *GitServer

	mu     sync.Mutex
	mrs    []*MergeRequest
	issues map[string]int // the last issue iid per project
	denied int
}

// NewGitLab starts a scripted GitLab.
func NewGitLab(t testing.TB, token string, git *GitServer) *GitLab {
	t.Helper()
	f := &GitLab{Token: token, Git: git, issues: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v4/projects/{id}/merge_requests", f.list)
	mux.HandleFunc("POST /api/v4/projects/{id}/merge_requests", f.create)
	mux.HandleFunc("PUT /api/v4/projects/{id}/merge_requests/{iid}", f.update)
	mux.HandleFunc("GET /api/v4/projects/{id}/merge_requests/{iid}/notes", f.notes)
	mux.HandleFunc("POST /api/v4/projects/{id}/merge_requests/{iid}/notes", f.note)
	f.Server = httptest.NewServer(hostcheck.Wrap(hostcheck.Policy{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ok := r.Header.Get("PRIVATE-TOKEN") == f.Token || r.Header.Get("Authorization") == "Bearer "+f.Token
		if !ok {
			f.mu.Lock()
			f.denied++
			f.mu.Unlock()
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "401 Unauthorized"})
			return
		}
		mux.ServeHTTP(w, r)
	})))
	t.Cleanup(f.Close)
	return f
}

// MergeRequests are copies of the merge requests, in the order made.
func (f *GitLab) MergeRequests() []MergeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]MergeRequest, len(f.mrs))
	for i, m := range f.mrs {
		out[i] = *m
		out[i].Notes = append([]string(nil), m.Notes...)
	}
	return out
}

// Denied counts requests refused for their credentials.
func (f *GitLab) Denied() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.denied
}

// WebURL is a merge request's page, as GitLab links it.
func (f *GitLab) WebURL(m MergeRequest) string {
	return fmt.Sprintf("%s/%s/-/merge_requests/%d", f.URL, m.Project, m.IID)
}

func (f *GitLab) json(m *MergeRequest) map[string]any {
	return map[string]any{
		"id": 1000 + m.IID, "iid": m.IID, "project_id": 1, "title": m.Title, "description": m.Description,
		"state": m.State, "source_branch": m.SourceBranch, "target_branch": m.TargetBranch,
		"web_url": f.WebURL(*m),
	}
}

func (f *GitLab) list(w http.ResponseWriter, r *http.Request) {
	project := r.PathValue("id")
	q := r.URL.Query()
	state, source := q.Get("state"), q.Get("source_branch")
	f.mu.Lock()
	out := []map[string]any{}
	for _, m := range f.mrs {
		if m.Project == project && (state == "" || state == "all" || m.State == state) && (source == "" || m.SourceBranch == source) {
			out = append(out, f.json(m))
		}
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (f *GitLab) create(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title        string `json:"title"`
		Description  string `json:"description"`
		SourceBranch string `json:"source_branch"`
		TargetBranch string `json:"target_branch"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Title == "" || in.SourceBranch == "" || in.TargetBranch == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "title, source_branch, target_branch are missing"})
		return
	}
	project := r.PathValue("id")
	if f.Git != nil && !f.Git.hasBranch(project, in.SourceBranch) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": []string{"Source branch \"" + in.SourceBranch + "\" does not exist"}})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	iid := 1
	for _, m := range f.mrs {
		if m.Project != project {
			continue
		}
		if m.SourceBranch == in.SourceBranch && m.State == "opened" {
			writeJSON(w, http.StatusConflict, map[string]any{"message": []string{fmt.Sprintf("Another open merge request already exists for this source branch: !%d", m.IID)}})
			return
		}
		iid = max(iid, m.IID+1)
	}
	m := &MergeRequest{IID: iid, Project: project, Title: in.Title, Description: in.Description, SourceBranch: in.SourceBranch, TargetBranch: in.TargetBranch, State: "opened"}
	f.mrs = append(f.mrs, m)
	writeJSON(w, http.StatusCreated, f.json(m))
}

// mr is the merge request the path names, or nil with 404 answered;
// f.mu is held.
func (f *GitLab) mr(w http.ResponseWriter, r *http.Request) *MergeRequest {
	iid, _ := strconv.Atoi(r.PathValue("iid"))
	for _, m := range f.mrs {
		if m.Project == r.PathValue("id") && m.IID == iid {
			return m
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "404 Not found"})
	return nil
}

func (f *GitLab) update(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title       *string `json:"title"`
		Description *string `json:"description"`
		StateEvent  *string `json:"state_event"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "bad JSON"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.mr(w, r)
	if m == nil {
		return
	}
	if in.Title != nil {
		m.Title = *in.Title
	}
	if in.Description != nil {
		m.Description = *in.Description
	}
	if in.StateEvent != nil && *in.StateEvent == "close" {
		m.State = "closed"
	}
	writeJSON(w, http.StatusOK, f.json(m))
}

func (f *GitLab) notes(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.mr(w, r)
	if m == nil {
		return
	}
	out := []map[string]any{}
	for i, n := range m.Notes {
		out = append(out, map[string]any{"id": i + 1, "body": n, "system": false, "noteable_type": "MergeRequest"})
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *GitLab) note(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Body string `json:"body"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body is missing"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	m := f.mr(w, r)
	if m == nil {
		return
	}
	m.Notes = append(m.Notes, in.Body)
	writeJSON(w, http.StatusCreated, map[string]any{"id": len(m.Notes), "body": in.Body})
}
