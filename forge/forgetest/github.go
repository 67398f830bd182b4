package forgetest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/longrun/longrun/hostcheck"
)

// Pull is a pull request the scripted forge holds.
type Pull struct {
	Number   int      `json:"number"`
	Title    string   `json:"title"`
	Body     string   `json:"body"`
	Head     string   `json:"head"`
	Base     string   `json:"base"`
	State    string   `json:"state"`
	Comments []string `json:"comments"`
	Repo     string   `json:"repo"`
}

// GitHub is a scripted forge speaking GitHub's REST API for pulls (list,
// create, update) and issue comments (list, create) under /repos/OWNER/
// NAME/, answering as GitHub documents: 401 without the token, 422 for a
// second open pull request from one branch or a head the repository does
// not have. State lives in memory.
type GitHub struct {
	*httptest.Server
	Token string
	// Git, when set, is the git server whose repositories the pull
	// requests' heads must be in, as on GitHub.
	Git *GitServer

	mu     sync.Mutex
	pulls  []*Pull
	issues []*Issue
	auth   []string // every Authorization header seen
	denied int
	// OnCreate, when set, runs before a pull request is made (a test
	// kills a worker there).
	onCreate func()
}

// NewGitHub starts a scripted forge.
func NewGitHub(t testing.TB, token string, git *GitServer) *GitHub {
	t.Helper()
	f := &GitHub{Token: token, Git: git}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls", f.list)
	mux.HandleFunc("POST /repos/{owner}/{repo}/pulls", f.create)
	mux.HandleFunc("PATCH /repos/{owner}/{repo}/pulls/{n}", f.update)
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/comments", f.comments)
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{n}/comments", f.comment)
	f.Server = httptest.NewServer(hostcheck.Wrap(hostcheck.Policy{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		f.mu.Lock()
		f.auth = append(f.auth, got)
		ok := got == "Bearer "+f.Token || got == "token "+f.Token
		if !ok {
			f.denied++
		}
		f.mu.Unlock()
		if !ok {
			writeJSON(w, http.StatusUnauthorized, map[string]string{"message": "Bad credentials"})
			return
		}
		mux.ServeHTTP(w, r)
	})))
	t.Cleanup(f.Close)
	return f
}

// SetOnCreate sets a hook run before each pull request is made.
func (f *GitHub) SetOnCreate(h func()) {
	f.mu.Lock()
	f.onCreate = h
	f.mu.Unlock()
}

// Pulls are copies of the pull requests, by number.
func (f *GitHub) Pulls() []Pull {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Pull, len(f.pulls))
	for i, p := range f.pulls {
		out[i] = *p
		out[i].Comments = append([]string(nil), p.Comments...)
	}
	return out
}

// Denied counts requests refused for their credentials.
func (f *GitHub) Denied() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.denied
}

func (f *GitHub) json(p *Pull) map[string]any {
	owner, _, _ := strings.Cut(p.Repo, "/")
	return map[string]any{
		"number": p.Number, "title": p.Title, "body": p.Body, "state": p.State,
		"html_url": fmt.Sprintf("%s/%s/pull/%d", f.URL, p.Repo, p.Number),
		"url":      fmt.Sprintf("%s/repos/%s/pulls/%d", f.URL, p.Repo, p.Number),
		"head":     map[string]any{"ref": p.Head, "label": owner + ":" + p.Head},
		"base":     map[string]any{"ref": p.Base},
	}
}

func repoOf(r *http.Request) string { return r.PathValue("owner") + "/" + r.PathValue("repo") }

func (f *GitHub) list(w http.ResponseWriter, r *http.Request) {
	repo := repoOf(r)
	state := r.URL.Query().Get("state")
	if state == "" {
		state = "open"
	}
	head := r.URL.Query().Get("head")
	f.mu.Lock()
	out := []map[string]any{}
	for _, p := range f.pulls {
		owner, _, _ := strings.Cut(repo, "/")
		if p.Repo == repo && (state == "all" || p.State == state) && (head == "" || head == owner+":"+p.Head) {
			out = append(out, f.json(p))
		}
	}
	f.mu.Unlock()
	writeJSON(w, http.StatusOK, out)
}

func (f *GitHub) create(w http.ResponseWriter, r *http.Request) {
	var in struct{ Title, Body, Head, Base string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Head == "" || in.Base == "" || in.Title == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed: title, head and base are required"})
		return
	}
	repo := repoOf(r)
	if f.Git != nil && !f.Git.hasBranch(repo, in.Head) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed", "errors": []map[string]string{{"field": "head", "code": "invalid"}}})
		return
	}
	f.mu.Lock()
	hook := f.onCreate
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range f.pulls {
		if p.Repo == repo && p.Head == in.Head && p.State == "open" {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed", "errors": []map[string]string{{"message": "A pull request already exists for " + in.Head + "."}}})
			return
		}
	}
	p := &Pull{Number: f.nextNumber(), Title: in.Title, Body: in.Body, Head: in.Head, Base: in.Base, State: "open", Repo: repo}
	f.pulls = append(f.pulls, p)
	writeJSON(w, http.StatusCreated, f.json(p))
}

func (f *GitHub) pull(w http.ResponseWriter, r *http.Request) *Pull {
	n, _ := strconv.Atoi(r.PathValue("n"))
	for _, p := range f.pulls {
		if p.Repo == repoOf(r) && p.Number == n {
			return p
		}
	}
	writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
	return nil
}

func (f *GitHub) update(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Title *string `json:"title"`
		Body  *string `json:"body"`
		State *string `json:"state"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"message": "Problems parsing JSON"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pull(w, r)
	if p == nil {
		return
	}
	if in.Title != nil {
		p.Title = *in.Title
	}
	if in.Body != nil {
		p.Body = *in.Body
	}
	if in.State != nil {
		p.State = *in.State
	}
	writeJSON(w, http.StatusOK, f.json(p))
}

func (f *GitHub) comments(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pull(w, r)
	if p == nil {
		return
	}
	out := []map[string]any{}
	for i, c := range p.Comments {
		out = append(out, map[string]any{"id": i + 1, "body": c})
	}
	writeJSON(w, http.StatusOK, out)
}

func (f *GitHub) comment(w http.ResponseWriter, r *http.Request) {
	var in struct{ Body string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil || in.Body == "" {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]string{"message": "Validation Failed: body is required"})
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	p := f.pull(w, r)
	if p == nil {
		return
	}
	p.Comments = append(p.Comments, in.Body)
	writeJSON(w, http.StatusCreated, map[string]any{"id": len(p.Comments), "body": in.Body})
}

// AuthHeaders are the distinct Authorization headers the forge saw,
// sorted.
func (f *GitHub) AuthHeaders() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := map[string]bool{}
	var out []string
	for _, a := range f.auth {
		if !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	sort.Strings(out)
	return out
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}
