// Package forgetest serves what package forge talks to, for tests: a git
// server over HTTP (git http-backend, the CGI program git ships, behind
// basic auth) and scripted forges speaking the part of GitHub's REST API
// (pulls, issue comments) and of GitLab's (merge requests, their notes)
// that forge uses, with their webhooks' payloads and deliveries. All are
// real HTTP servers on the loopback interface.
package forgetest

import (
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/longrun/longrun/hostcheck"
)

// GitServer serves the bare repositories under Root over smart HTTP, to
// a client that authenticates with basic auth and Token as the password
// (any user name, as GitHub takes a token).
type GitServer struct {
	*httptest.Server
	Root  string
	Token string

	mu sync.Mutex
	// Denied counts requests refused for missing or wrong credentials.
	Denied int
	// Pushes counts receive-pack requests (the pushes' POSTs).
	Pushes int
	// OnPush, when set, runs before a push is handed to git (a test
	// kills a worker there).
	OnPush func()
}

// NewGitServer starts a git server whose repositories live under a
// temporary directory.
func NewGitServer(t testing.TB, token string) *GitServer {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("the scripted forge serves repositories with git http-backend, and git is not installed: %v", err)
	}
	out, err := exec.Command(gitPath, "--exec-path").Output()
	if err != nil {
		t.Fatalf("git --exec-path: %v", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	g := &GitServer{Root: t.TempDir(), Token: token}
	h := &cgi.Handler{
		Path: backend,
		Env:  []string{"GIT_PROJECT_ROOT=" + g.Root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + g.Root},
	}
	g.Server = httptest.NewServer(hostcheck.Wrap(hostcheck.Policy{}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pass, ok := r.BasicAuth()
		if !ok || pass != g.Token {
			g.mu.Lock()
			g.Denied++
			g.mu.Unlock()
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-receive-pack") {
			g.mu.Lock()
			g.Pushes++
			hook := g.OnPush
			g.mu.Unlock()
			if hook != nil {
				hook()
			}
		}
		// http-backend wants the user for receive-pack.
		r.Header.Set("Remote-User", "longrun")
		h.ServeHTTP(w, r)
	})))
	t.Cleanup(g.Close)
	return g
}

// Repo makes the bare repository owner/name.git (default branch main)
// and returns its URL and directory.
func (g *GitServer) Repo(t testing.TB, ownerName string) (string, string) {
	t.Helper()
	dir := filepath.Join(g.Root, ownerName+".git")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q", "--bare", "-b", "main", dir},
		{"-C", dir, "config", "http.receivepack", "true"},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return g.URL + "/" + ownerName + ".git", dir
}

// Counts are Denied and Pushes, read together.
func (g *GitServer) Counts() (denied, pushes int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.Denied, g.Pushes
}

// SetOnPush sets OnPush.
func (g *GitServer) SetOnPush(f func()) {
	g.mu.Lock()
	g.OnPush = f
	g.mu.Unlock()
}

// hasBranch reports whether the repository ownerName (GitHub's
// owner/name, GitLab's group path) holds branch; both scripted forges
// ask it before they open a pull or merge request. It runs git on the
// host, outside the sandbox: the bare repository is this test server's
// own, a session reaches it only by pushing over HTTP (refs and objects,
// never config or hooks), and rev-parse reads a ref and runs no hook,
// filter or configured program.
func (g *GitServer) hasBranch(ownerName, branch string) bool {
	dir := g.Root + "/" + ownerName + ".git"
	return exec.Command("git", "-C", dir, "rev-parse", "--verify", "--quiet", "refs/heads/"+branch).Run() == nil
}
