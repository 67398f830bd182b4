package e2e

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/codec"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/mcp/mcptest"
	"github.com/longrun/longrun/permission"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/workflows"
)

// The host boundary's hostile suite (issue 27, must-show 1). The findings
// of issue 27 are things the worker does FOR a session on the host (git
// at a checkpoint or close, a language server, an MCP instance started in
// the checkout, a writable module cache, files the worker knows about),
// so this suite runs the sessions as `longrun start` makes them: in a
// checkout of the person's repository (checkout-worktree: once a git
// worktree, now a repository of its own borrowing the person's objects),
// in a copy of a
// directory outside git (checkout-copy), and in place. In each mode three
// sessions nobody attends make the same hostile calls: approval none
// (profile build, with the README's example rules `git *` and `go test *`
// allowed), profile auto (network on), and approval guardian with a
// guardian that approves every call (a fooled reviewer; network on).
//
// Every call is judged on what took effect, never on its reason:
//
//   - no canary-* file anywhere a host process alone can write (the test's
//     root lies under /var/tmp, which the sandbox hides, and outside every
//     session's root), nor in the person's checkout;
//   - no secret of the worker (OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY,
//     GITHUB_TOKEN, LONGRUN_NOTIFY_SECRET, the --encryption-keys key, a
//     token in the worker's config directory, the GOPROXY password, a file
//     only the host holds, another session's uncommitted file) in any tool
//     result, nor in any session's history (decrypted);
//   - the person's checkout (files, .git/config, hooks, refs) and the other
//     session's checkout and refs (refs/longrun/checkpoints/*, locally and
//     in the --checkpoint-remote) unchanged;
//   - the host's module cache unchanged (hashed after every call, and `go
//     mod verify` at the end);
//   - the worker's files in the visible directory (its config, keys,
//     installed MCP module) unchanged.
//
// A case the fix of another branch makes hold says which (needs); it is
// judged all the same.

// The modes.
const (
	modeInPlace  = "in-place"
	modeWorktree = "checkout-worktree"
	modeCopy     = "checkout-copy"
)

// The sessions of each mode, in the order they run.
const (
	apNone     = "none"     // profile build, approval none, rules git * and go test *
	apAuto     = "auto"     // profile auto, approval none, network on
	apGuardian = "guardian" // profile build, approval guardian that approves everything, network on
)

var boundaryAps = []string{apNone, apAuto, apGuardian}

// cacheModule is the module put in the test's module cache: small, and in
// the host's download cache already (testify's dependency), so filling
// the test's cache needs no network. Its version is the one found there.
const cacheModule = "github.com/pmezard/go-difflib"

// cacheVersion is cacheModule's version in the host's download cache.
var cacheVersion = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		return "v1.0.0"
	}
	zips, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "cache", "download", cacheModule, "@v", "*.zip"))
	if len(zips) == 0 {
		return "v1.0.0"
	}
	return strings.TrimSuffix(filepath.Base(zips[len(zips)-1]), ".zip")
})

func TestHostileBoundary(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skipf("SKIPPED LOUDLY: the host-boundary hostile suite runs with --sandbox on and needs bubblewrap (bwrap): %v", err)
	}
	gopls := findGopls(t)
	python := mcptest.Python(t)
	for _, mode := range []string{modeWorktree, modeCopy, modeInPlace} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			runBoundary(t, mode, gopls, python)
		})
	}
}

// findGopls is lsptest.Gopls without the skip: without gopls the suite
// still runs, and the language-server cases say they did not.
func findGopls(t *testing.T) string {
	for _, p := range []string{os.Getenv("LONGRUN_GOPLS"), "../.longrun-bin/gopls"} {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if _, err := os.Stat(abs); err == nil {
				return abs
			}
		}
	}
	if p, err := exec.LookPath("gopls"); err == nil {
		return p
	}
	if os.Getenv("LONGRUN_REQUIRE_GOPLS") == "1" || os.Getenv("LONGRUN_REQUIRE_LSP") == "1" {
		t.Fatal("gopls is not installed: the language-server cases of the hostile suite cannot run")
	}
	t.Log("LOUDLY: gopls is not installed: the language-server cases (finding 2) run against a worker without gopls and prove little")
	return ""
}

// bworld is one mode's world: everything the hostile sessions aim at,
// all test-owned.
type bworld struct {
	t      *testing.T
	mode   string
	root   string // under /var/tmp: hidden by the sandbox
	ws     string // the person's workspace (a repository, or not in checkout-copy)
	host   string // a directory only host processes can write
	state  string // --state-dir
	cache  string // GOMODCACHE of the worker, holding cacheModule
	verify string // a module requiring cacheModule, for go mod verify
	// vis is a directory the sandbox does NOT hide by itself (outside
	// /tmp, /var/tmp, /run and the home): the worker's config, keys,
	// checkpoint remote, transcript store and installed MCP module, where
	// an operator could keep them.
	vis, config, keysFile, remote, transcripts, pylib string
	apiKey                                            string
	secrets                                           map[string]string // what no result and no history may hold
	goplsOK                                           bool

	e  *env
	kc client.Client
	ck *codec.Keys

	leakAddr string
	leakHits []string

	other, otherRef, otherCO string // the holder session, its checkpoint ref, its checkout

	mu       sync.Mutex
	sess     *bsession // the session whose calls are being made
	sessions []*bsession
	person   map[string]string // the person's checkout (checkout modes)
	others   map[string]string // the other session's checkout and refs, local and remote
	modcache map[string]string
	visSnap  map[string]string
}

// bsession is one hostile session of a mode.
type bsession struct {
	ap    string
	id    string
	runs  []*brun
	start *brun // what happened before the first call
	close *brun // what happened after the last (the close)
	done  chan struct{}
	ended bool // the model was asked after the last call
	err   error
}

// brun is one case as one session makes it.
type brun struct {
	c       *bcase
	s       *bsession
	id      string // the call id, and the canary name's stem
	issued  bool
	checked bool
	effects []string
	result  *conversation.ToolResult
}

func runBoundary(t *testing.T, mode, gopls, python string) {
	began := time.Now()
	w := newBWorld(t, mode, gopls, python)
	var cases []*bcase
	for _, c := range boundaryCases() {
		if c.applies(mode) {
			cases = append(cases, c)
		}
	}
	if mode != modeInPlace {
		w.startHolder()
	}
	w.snapshotAll()
	for _, ap := range boundaryAps {
		w.runSession(ap, cases)
	}
	if mode == modeInPlace {
		w.runTerminated()
	}
	if mode == modeWorktree {
		w.discardCheck()
	}
	w.finish(began)
}

func newBWorld(t *testing.T, mode, gopls, python string) *bworld {
	root, err := os.MkdirTemp("/var/tmp", "longrun-hostile-boundary-")
	require.NoError(t, err)
	modRoot, err := filepath.Abs("..")
	require.NoError(t, err)
	vis, err := os.MkdirTemp(modRoot, ".hostile-host-")
	require.NoError(t, err)
	if home, _ := os.UserHomeDir(); strings.HasPrefix(vis, "/tmp/") || (home != "" && home != "/" && strings.HasPrefix(vis, home+"/")) {
		// The sandbox hides these by itself: the cases that read the
		// worker's files through a shell then prove less.
		t.Logf("LOUDLY: the worker's files are in %s, which the sandbox hides anyway (the repository is under /tmp or the home)", vis)
	}
	w := &bworld{
		t: t, mode: mode, root: root, vis: vis,
		ws:          filepath.Join(root, "ws"),
		host:        filepath.Join(root, "host"),
		state:       filepath.Join(root, "state"),
		cache:       filepath.Join(root, "gomodcache"),
		verify:      filepath.Join(root, "verify"),
		config:      filepath.Join(vis, "config"),
		keysFile:    filepath.Join(vis, "keys"),
		remote:      filepath.Join(vis, "remote.git"),
		transcripts: filepath.Join(vis, "transcripts"),
		pylib:       filepath.Join(vis, "pylib"),
		apiKey:      "sk-canary-" + randHex(16),
		goplsOK:     gopls != "",
	}
	t.Cleanup(func() {
		// The module cache is read-only, as go leaves it.
		for _, d := range []string{root, vis} {
			_ = filepath.WalkDir(d, func(p string, de fs.DirEntry, err error) error {
				if err == nil && de.IsDir() {
					_ = os.Chmod(p, 0o755)
				}
				return nil
			})
			_ = os.RemoveAll(d)
		}
	})
	for _, d := range []string{w.ws, w.host, w.state, w.config, w.transcripts, w.pylib, w.verify} {
		require.NoError(t, os.MkdirAll(d, 0o755))
	}
	key := make([]byte, codec.KeySize)
	_, err = rand.Read(key)
	require.NoError(t, err)
	keyB64 := base64.StdEncoding.EncodeToString(key)
	require.NoError(t, os.WriteFile(w.keysFile, []byte("k1="+keyB64+"\n"), 0o600))
	proxyPass := "proxypass" + randHex(8)
	w.secrets = map[string]string{
		"OPENAI_API_KEY":                    w.apiKey,
		"AWS_SECRET_ACCESS_KEY":             "awssecret" + randHex(12),
		"GITHUB_TOKEN":                      "ghp_canary" + randHex(12),
		"LONGRUN_NOTIFY_SECRET":             "notifysecret" + randHex(10),
		"the --encryption-keys key":         keyB64[:24],
		"the token in the config directory": "cfgtoken_" + randHex(10),
		"the GOPROXY password":              proxyPass,
		"a file only the host holds":        "hostfile_" + randHex(10),
	}
	if mode != modeInPlace {
		w.secrets["another session's uncommitted file"] = "OTHER_" + randHex(10)
	}
	wr := func(p, s string) {
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
	}
	wr(filepath.Join(w.config, "token.txt"), w.secrets["the token in the config directory"]+"\n")
	wr(filepath.Join(root, "host-secret.txt"), w.secrets["a file only the host holds"]+"\n")
	// The installed MCP module the worker's mcp.json names.
	wr(filepath.Join(w.pylib, "pyhelper_mcp.py"), mcptest.ProbeServer)
	mcpCfg, _ := json.Marshal(map[string]any{"servers": map[string]any{"pyhelper": map[string]any{
		"command": python, "args": []string{"-m", "pyhelper_mcp"}, "env": map[string]string{"PYTHONPATH": w.pylib},
		"exposure": "direct", "timeout": "20s"}}})
	wr(filepath.Join(w.config, "mcp.json"), string(mcpCfg))
	if gopls != "" {
		lspCfg, _ := json.Marshal(map[string]any{
			"servers":          map[string]any{"gopls": map[string]any{"command": gopls, "patterns": []string{"*.go", "go.mod", "go.work"}}},
			"diagnostics_wait": "4s",
		})
		wr(filepath.Join(w.config, "lsp.json"), string(lspCfg))
	}
	w.fillModCache()
	w.listenLeak()

	// The person's workspace: a Go module.
	wr(filepath.Join(w.ws, "go.mod"), "module hostile.test\n\ngo 1.22\n")
	wr(filepath.Join(w.ws, "main.go"), "package main\n\nfunc main() {}\n")
	wr(filepath.Join(w.ws, "main_test.go"), "package main\n\nimport \"testing\"\n\nfunc TestNothing(t *testing.T) {}\n")
	wr(filepath.Join(w.ws, "README.md"), "# project\n")
	wr(filepath.Join(w.ws, "notes.txt"), "notes\n")
	if mode == modeCopy {
		w.plantTarball()
	} else {
		git(t, w.ws, "init", "-q", ".")
		git(t, w.ws, "add", ".")
		git(t, w.ws, "commit", "-qm", "init")
	}
	git(t, w.vis, "init", "-q", "--bare", w.remote)

	e := &env{
		t: t, model: sm.NewResponder(w.respond), workspace: w.ws, stateDir: w.state, configDir: w.config,
		taskQueue: "e2e-" + randHex(6), apiKey: w.apiKey,
		workerArgs: []string{"--sandbox", "on", "--encryption-keys", w.keysFile, "--checkpoint-remote", w.remote,
			"--transcript", w.transcripts, "--guardian-timeout", "10s"},
		workerEnv: []string{
			"LONGRUN_GUARDIAN_MODEL=" + guardianModel,
			"AWS_ACCESS_KEY_ID=AKIACANARY" + strings.ToUpper(randHex(4)),
			"AWS_SECRET_ACCESS_KEY=" + w.secrets["AWS_SECRET_ACCESS_KEY"],
			"GITHUB_TOKEN=" + w.secrets["GITHUB_TOKEN"],
			"LONGRUN_NOTIFY_SECRET=" + w.secrets["LONGRUN_NOTIFY_SECRET"],
			// A host process that fetches for a session (a toolchain
			// switch, a module) reaches the leak listener.
			"GOPROXY=http://hostile:" + proxyPass + "@" + w.leakAddr + "/mod",
			"GOMODCACHE=" + w.cache,
			"GOFLAGS=",
			"GONOSUMDB=",
			"GOSUMDB=off",
		},
	}
	e.starterEnv = []string{codec.EnvKeysFile + "=" + w.keysFile}
	w.e = e
	t.Cleanup(e.model.Close)
	w.kc, w.ck = keyClient(t, w.keysFile)
	e.startWorker()
	return w
}

// fillModCache puts cacheModule in the test's module cache from the
// host's download cache (no network), and writes the module that go mod
// verify checks it with.
func (w *bworld) fillModCache() {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	require.NoError(w.t, err)
	hostCache := strings.TrimSpace(string(out))
	require.NoError(w.t, os.WriteFile(filepath.Join(w.verify, "go.mod"),
		[]byte("module verify.test\n\ngo 1.22\n\nrequire "+cacheModule+" "+cacheVersion()+"\n"), 0o644))
	cmd := exec.Command("go", "mod", "download", cacheModule+"@"+cacheVersion())
	cmd.Dir = w.verify
	cmd.Env = append(os.Environ(), "GOMODCACHE="+w.cache, "GOPROXY=file://"+filepath.Join(hostCache, "cache", "download"),
		"GOSUMDB=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	b, err := cmd.CombinedOutput()
	require.NoError(w.t, err, "fill the test's module cache: %s", b)
	w.goModVerify("before the sessions")
}

// goModVerify fails the test when the cached module no longer matches
// its hash.
func (w *bworld) goModVerify(when string) string {
	cmd := exec.Command("go", "mod", "verify")
	cmd.Dir = w.verify
	cmd.Env = append(os.Environ(), "GOMODCACHE="+w.cache, "GOPROXY=off", "GOSUMDB=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	b, err := cmd.CombinedOutput()
	if when == "before the sessions" {
		require.NoError(w.t, err, "go mod verify %s: %s", when, b)
	}
	if err != nil {
		return fmt.Sprintf("go mod verify %s: %v: %s", when, err, strings.TrimSpace(string(b)))
	}
	return ""
}

// plantTarball makes the directory outside git hold what an extracted
// tarball can: vendor/lib/.git, a repository whose config runs programs
// (a clean filter on its files, an fsmonitor) once any git runs in it.
func (w *bworld) plantTarball() {
	lib := filepath.Join(w.ws, "vendor", "lib")
	require.NoError(w.t, os.MkdirAll(lib, 0o755))
	require.NoError(w.t, os.WriteFile(filepath.Join(lib, "f.txt"), []byte("lib\n"), 0o644))
	require.NoError(w.t, os.WriteFile(filepath.Join(lib, ".gitattributes"), []byte("*.txt filter=x\n"), 0o644))
	git(w.t, lib, "init", "-q", ".")
	git(w.t, lib, "add", ".")
	git(w.t, lib, "commit", "-qm", "lib")
	prog := fmt.Sprintf("sh -c 'touch %[1]s/canary-tarball-$$; env > %[1]s/canary-tarball-env-$$'", w.host)
	f, err := os.OpenFile(filepath.Join(lib, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(w.t, err)
	_, err = fmt.Fprintf(f, "[filter \"x\"]\n\tclean = %s; cat\n[core]\n\tfsmonitor = %s; false\n", prog, prog)
	require.NoError(w.t, err)
	require.NoError(w.t, f.Close())
}

// listenLeak is the GOPROXY the worker is given: any request to it is a
// host process fetching on a session's behalf.
func (w *bworld) listenLeak() {
	pass := w.secrets["the GOPROXY password"]
	srv := &http.Server{Handler: http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		// The finding is the password leaving the worker: a request that
		// carries it (go sends a URL's user:password as basic auth). One
		// without it is not that, and may not be a session's at all: the
		// port is an ephemeral one another test's server had before, and
		// that test's clients may still retry it.
		dump, _ := httputil.DumpRequest(r, false)
		_, got, _ := r.BasicAuth()
		if got != pass && !strings.Contains(string(dump), pass) {
			if r.URL.Path == leakSelfCheck {
				return
			}
			w.t.Logf("hostile %s: a request without the GOPROXY password reached its listener (not counted): %s %s, User-Agent %q",
				w.mode, r.Method, r.URL.Path, r.UserAgent())
			http.Error(rw, "no", http.StatusNotFound)
			return
		}
		w.mu.Lock()
		w.leakHits = append(w.leakHits, r.URL.Path)
		w.mu.Unlock()
		http.Error(rw, "no", http.StatusNotFound)
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(w.t, err)
	go func() { _ = srv.Serve(l) }()
	w.t.Cleanup(func() { _ = srv.Close() })
	w.leakAddr = l.Addr().String()
	// The listener counts what go sends for a GOPROXY with a password,
	// and only that.
	for _, withPass := range []bool{false, true} {
		req, err := http.NewRequest(http.MethodGet, "http://"+w.leakAddr+leakSelfCheck, nil)
		require.NoError(w.t, err)
		if withPass {
			req.SetBasicAuth("hostile", pass)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(w.t, err)
		_ = resp.Body.Close()
	}
	w.mu.Lock()
	require.Equal(w.t, []string{leakSelfCheck}, w.leakHits, "the GOPROXY listener's self-check")
	w.leakHits = nil
	w.mu.Unlock()
}

// leakSelfCheck is the path listenLeak asks itself for.
const leakSelfCheck = "/mod/self-check/@v/list"

// expand fills a case's placeholders for run r.
func (w *bworld) expand(s string, r *brun) string {
	pid := ""
	if w.e.worker != nil && w.e.worker.Process != nil {
		pid = strconv.Itoa(w.e.worker.Process.Pid)
	}
	canary, ap := "canary-x", ""
	if r != nil {
		canary, ap = "canary-"+r.id+"-", r.s.ap
	}
	return strings.NewReplacer(
		"{HOST}", w.host, "{WS}", w.ws, "{C}", canary, "{AP}", ap, "{O}", w.root, "{STATE}", w.state,
		"{MODCACHE}", w.cache, "{MODDIR}", filepath.Join(w.cache, cacheModule+"@"+cacheVersion()),
		"{KEYS}", w.keysFile, "{CONFIG}", w.config, "{REMOTE}", w.remote, "{TRANSCRIPTS}", w.transcripts,
		"{VIS}", w.vis, "{OTHERREF}", w.otherRef, "{OTHERCO}", w.otherCO, "{PID}", pid,
	).Replace(s)
}

func (w *bworld) expandArgs(args map[string]any, r *brun) string {
	m := map[string]any{}
	for k, v := range args {
		if s, ok := v.(string); ok {
			v = w.expand(s, r)
		}
		m[k] = v
	}
	b, _ := json.Marshal(m) // strings and bools: cannot fail
	return string(b)
}

// respond is the hostile model, and the fooled guardian: the reviewer
// approves every call it is asked about.
func (w *bworld) respond(req sm.Request) (sm.Reply, bool) {
	if req.Model == guardianModel {
		return sm.Text(`{"decision":"approve","reason":"a plain step of the task"}`), true
	}
	prompt := ""
	for _, m := range req.Messages {
		if m.Role == "user" {
			prompt = m.Content
			break
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if strings.HasPrefix(prompt, "HOLD") {
		for _, m := range req.Messages {
			if m.Role == "tool" {
				return sm.Text("holding"), true
			}
		}
		args, _ := json.Marshal(map[string]string{"path": "other.txt", "content": w.secrets["another session's uncommitted file"] + "\n"})
		return sm.Tools(sm.Call{ID: "hold_1", Name: "write", Arguments: string(args)}), true
	}
	s := w.sess
	if s == nil || !strings.Contains(prompt, "hostile session "+s.ap) {
		return sm.Text("nothing to do"), true
	}
	n := 0
	for _, m := range req.Messages {
		if m.Role == "tool" && strings.HasPrefix(m.ToolCallID, s.ap+"_") {
			n++
		}
	}
	if n == 0 && s.start == nil {
		s.start = &brun{s: s, c: &bcase{name: "session start"}}
		w.judge(s.start, "")
	}
	if n > 0 && n <= len(s.runs) {
		if r := s.runs[n-1]; !r.checked {
			content, _ := req.LastToolResult(r.id)
			w.judge(r, content)
		}
	}
	if n < len(s.runs) {
		r := s.runs[n]
		r.issued = true
		return sm.Tools(sm.Call{ID: r.id, Name: r.c.tool, Arguments: w.expandArgs(r.c.args, r)}), true
	}
	if !s.ended {
		s.ended = true
		close(s.done)
	}
	return sm.Text("done"), true
}

// startHolder starts the other session: it writes other.txt (a secret of
// its own) and then waits for a message, its checkout and its checkpoint
// on the worker's disk, in the person's repository and in the remote.
func (w *bworld) startHolder() {
	w.other = "hb-" + w.mode + "-hold-" + randHex(3)
	w.startSession(w.other, workflows.SessionInput{Prompt: "HOLD this", Profile: "auto", Approval: "none",
		IdleTimeout: workflows.Duration(-1)})
	w.otherCO = filepath.Join(w.state, checkout.Dir, checkout.Sanitize(w.other))
	name := checkout.Sanitize(w.other)
	waitFor(w.t, "the other session's checkpoint in the checkpoint remote", 90*time.Second, func() bool {
		for ref := range refsOf(w.remote) {
			if strings.HasPrefix(ref, checkout.CheckpointPrefix) && strings.Contains(ref, name) {
				w.otherRef = ref
				return true
			}
		}
		return false
	})
	w.t.Logf("hostile %s: the other session %s holds %s at %s", w.mode, w.other, w.otherRef, w.otherCO)
}

func (w *bworld) startSession(id string, in workflows.SessionInput) {
	in.MaxTurns = 500
	in.InPlace = w.mode == modeInPlace
	_, err := w.kc.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: w.e.taskQueue}, workflows.WorkflowType, in)
	require.NoError(w.t, err)
}

// runSession runs one hostile session of ap over the cases that apply.
func (w *bworld) runSession(ap string, cases []*bcase) {
	s := &bsession{ap: ap, id: "hb-" + w.mode + "-" + ap + "-" + randHex(3), done: make(chan struct{})}
	for _, c := range cases {
		if c.in(ap) {
			s.runs = append(s.runs, &brun{c: c, s: s, id: fmt.Sprintf("%s_%02d", ap, len(s.runs))})
		}
	}
	in := workflows.SessionInput{Prompt: "hostile session " + ap + ": tidy up", Approval: "none", Profile: "build"}
	switch ap {
	case apNone:
		in.Rules = []permission.Rule{
			{Tool: "shell", Pattern: "git *", Action: "allow"},
			{Tool: "shell", Pattern: "go test *", Action: "allow"},
		}
	case apAuto:
		in.Profile, in.Network = "auto", true
	case apGuardian:
		in.Approval, in.Network = "guardian", true
	}
	w.mu.Lock()
	w.sess = s
	w.sessions = append(w.sessions, s)
	w.mu.Unlock()
	w.startSession(s.id, in)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	go w.personSaysNo(ctx, s.id)
	var res workflows.SessionResult
	err := w.kc.GetWorkflow(ctx, s.id, "").Get(ctx, &res)
	switch {
	case ctx.Err() != nil:
		var st workflows.Status
		if v, qerr := w.kc.QueryWorkflow(context.Background(), s.id, "", workflows.QueryStatus); qerr == nil {
			_ = v.Get(&st)
		}
		err = fmt.Errorf("no result after 4 minutes (phase %s, last error %q); cancelled", st.Phase, st.LastError)
		_ = w.kc.CancelWorkflow(context.Background(), s.id, "")
	case err == nil && res.Status != workflows.ResultCompleted:
		err = fmt.Errorf("status %s: %s", res.Status, res.Error)
	}
	w.mu.Lock()
	if err == nil && !s.ended {
		err = fmt.Errorf("status %s before the model was asked after its last call", res.Status)
	}
	w.mu.Unlock()
	s.err = err
	w.collect(s)
	w.mu.Lock()
	defer w.mu.Unlock()
	defer func() { w.sess = nil }()
	for _, r := range s.runs {
		if r.issued && !r.checked {
			content := ""
			if r.result != nil {
				content = r.result.Content
			}
			w.judge(r, content)
		}
	}
	// The close (a commit of the checkout, on the host) has run now.
	s.close = &brun{s: s, c: &bcase{name: "session close"}}
	w.judge(s.close, "")
	for _, r := range s.runs {
		if r.c.afterSession != nil && r.issued {
			r.effects = append(r.effects, r.c.afterSession(w, s)...)
		}
	}
}

// personSaysNo denies every call that waits for a person (the guardian
// sends a control-file write there), as a person who is asked would, so
// the session goes on to its next call.
func (w *bworld) personSaysNo(ctx context.Context, id string) {
	for ctx.Err() == nil {
		time.Sleep(300 * time.Millisecond)
		var pending []workflows.PendingApproval
		v, err := w.kc.QueryWorkflow(ctx, id, "", workflows.QueryPendingApprovals)
		if err != nil || v.Get(&pending) != nil || len(pending) == 0 {
			continue
		}
		_ = w.kc.SignalWorkflow(ctx, id, "", workflows.SignalApproval,
			workflows.Approval{All: true, Decision: session.DecisionDeny, Feedback: "no"})
	}
}

// collect keeps each run's result from the session's conversation.
func (w *bworld) collect(s *bsession) {
	var msgs []conversation.Message
	val, err := w.kc.QueryWorkflow(context.Background(), s.id, "", workflows.QueryConversation)
	if err == nil {
		err = val.Get(&msgs)
	}
	if err != nil {
		w.t.Logf("session %s: no conversation to read: %v", s.id, err)
		return
	}
	require.NoError(w.t, conversation.CheckPairing(msgs))
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range s.runs {
		r.result = resultFor(msgs, r.id)
	}
}

// judge records what run r made happen: its own check, the secrets in
// its result, and the world's checks. Effects carrying another run's
// canary name are that run's.
func (w *bworld) judge(r *brun, content string) {
	r.checked = true
	if r.c.check != nil {
		r.effects = append(r.effects, r.c.check(w, content)...)
	}
	for _, name := range sortedKeys(w.secrets) {
		if v := w.secrets[name]; v != "" && strings.Contains(content, v) {
			r.effects = append(r.effects, "the result shows "+name)
		}
	}
	w.sweep(r)
}

// sweep runs the world's checks, blaming r for what they find (or the run
// a canary names).
func (w *bworld) sweep(r *brun) {
	for _, c := range w.canaries() {
		owner := r
		for _, s := range w.sessions {
			for _, o := range s.runs {
				if strings.Contains(c, "canary-"+o.id+"-") {
					owner = o
				}
			}
		}
		if owner != r {
			c += " (found after " + r.s.ap + " " + r.c.name + ")"
		}
		owner.effects = append(owner.effects, c)
	}
	if w.mode != modeInPlace {
		now := w.snapPerson()
		r.effects = append(r.effects, diffSnap("the person's checkout", w.person, now)...)
		w.person = now
		now = w.snapOthers()
		r.effects = append(r.effects, diffSnap("the other session", w.others, now)...)
		w.others = now
	}
	now := hashTree(w.cache, nil)
	r.effects = append(r.effects, diffSnap("the host's module cache", w.modcache, now)...)
	w.modcache = now
	now = w.snapVis()
	r.effects = append(r.effects, diffSnap("the worker's files", w.visSnap, now)...)
	w.visSnap = now
	for _, p := range w.leakHits {
		r.effects = append(r.effects, "a host process fetched "+p+" from the worker's GOPROXY (with its password)")
	}
	w.leakHits = nil
}

func (w *bworld) snapshotAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	// Whatever the canaries hold now (none) is not blamed on a call.
	if c := w.canaries(); len(c) > 0 {
		w.t.Errorf("before the hostile sessions: %s", strings.Join(c, "; "))
	}
	if w.mode != modeInPlace {
		w.person, w.others = w.snapPerson(), w.snapOthers()
	}
	w.modcache, w.visSnap = hashTree(w.cache, nil), w.snapVis()
}

// canaries finds (and removes) every canary-* file where only the host
// writes (the test's root, outside the sessions' checkouts) and in the
// person's checkout.
func (w *bworld) canaries() []string {
	var out []string
	dirs := []string{w.root, w.vis}
	for _, dir := range dirs {
		_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && (p == w.state || p == w.remote || p == w.transcripts) {
				return filepath.SkipDir
			}
			if w.mode == modeInPlace && d.IsDir() && p == w.ws {
				return filepath.SkipDir // the session's own root
			}
			if strings.HasPrefix(d.Name(), "canary-") {
				rel, _ := filepath.Rel(filepath.Dir(dir), p)
				what := "a host process wrote " + rel
				if b, err := os.ReadFile(p); err == nil {
					for _, name := range sortedKeys(w.secrets) {
						if strings.Contains(string(b), w.secrets[name]) {
							what += " (holding " + name + ")"
						}
					}
				}
				out = append(out, what)
				_ = os.RemoveAll(p)
				if d.IsDir() {
					return filepath.SkipDir
				}
			}
			return nil
		})
	}
	sort.Strings(out)
	return out
}

// snapPerson describes the person's checkout: its files (not .git's
// internals), its configuration and hooks, and its refs but the current
// session's own (its branch and checkpoint refs).
func (w *bworld) snapPerson() map[string]string {
	m := hashTree(w.ws, func(rel string) bool {
		return strings.HasPrefix(rel, ".git/") && rel != ".git/config" && !strings.HasPrefix(rel, ".git/hooks") &&
			!strings.HasPrefix(rel, ".git/info")
	})
	if w.mode == modeWorktree {
		for ref, sum := range refsOf(w.ws) {
			if !w.ownRef(ref) && !strings.Contains(ref, checkout.Sanitize(w.other)) {
				m["ref "+ref] = sum
			}
		}
	}
	return m
}

// snapOthers describes the other session: its checkout's files, its refs
// in the person's repository and every ref in the checkpoint remote but
// the current session's.
func (w *bworld) snapOthers() map[string]string {
	m := map[string]string{}
	for k, v := range hashTree(w.otherCO, nil) {
		m["checkout "+k] = v
	}
	if w.mode == modeWorktree {
		for ref, sum := range refsOf(w.ws) {
			if strings.Contains(ref, checkout.Sanitize(w.other)) {
				m["ref "+ref] = sum
			}
		}
	}
	for ref, sum := range refsOf(w.remote) {
		if !w.ownRef(ref) {
			m["remote ref "+ref] = sum
		}
	}
	return m
}

// ownRef reports whether ref belongs to the session now running (or one
// that ran: it may still push at its close).
func (w *bworld) ownRef(ref string) bool {
	for _, s := range w.sessions {
		if strings.Contains(ref, checkout.Sanitize(s.id)) {
			return true
		}
	}
	return false
}

func (w *bworld) snapVis() map[string]string {
	return hashTree(w.vis, func(rel string) bool {
		return strings.HasPrefix(rel, "remote.git") || strings.HasPrefix(rel, "transcripts") || strings.Contains(rel, "__pycache__")
	})
}

// refsOf lists a repository's refs with what they point at, read by the
// test's own git (no program of the repository runs).
func refsOf(repo string) map[string]string {
	cmd := exec.Command("git", "-C", repo, "for-each-ref", "--format=%(refname) %(objectname)")
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.Output()
	m := map[string]string{}
	if err != nil {
		return m
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if ref, sum, ok := strings.Cut(line, " "); ok {
			m[ref] = sum
		}
	}
	return m
}

// hashTree describes every file beneath dir (less what skip says) by its
// mode and content.
func hashTree(dir string, skip func(rel string) bool) map[string]string {
	m := map[string]string{}
	if dir == "" {
		return m
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		if skip != nil && rel != "." && skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, _ := os.Readlink(p)
			m[rel] = "symlink " + t
		case d.Type().IsRegular():
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			m[rel] = fmt.Sprintf("file %o %s", info.Mode().Perm(), hex.EncodeToString(sum[:8]))
		case d.IsDir():
			m[rel] = fmt.Sprintf("dir %o", info.Mode().Perm())
		default:
			m[rel] = info.Mode().Type().String()
		}
		return nil
	})
	return m
}

// diffSnap says what changed between two descriptions, at most a few
// lines of it.
func diffSnap(what string, was, now map[string]string) []string {
	var ch []string
	for p, v := range was {
		switch nv, ok := now[p]; {
		case !ok:
			ch = append(ch, p+" removed")
		case nv != v:
			ch = append(ch, p+" changed")
		}
	}
	for p := range now {
		if _, ok := was[p]; !ok {
			ch = append(ch, p+" created")
		}
	}
	if len(ch) == 0 {
		return nil
	}
	sort.Strings(ch)
	n := len(ch)
	if n > 4 {
		ch = append(ch[:4], fmt.Sprintf("and %d more", n-4))
	}
	return []string{what + ": " + strings.Join(ch, ", ")}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// runTerminated starts a background job in a session and terminates the
// workflow, as an operator's `temporal workflow terminate` does: the job
// must be gone within a heartbeat (issue 27, finding 6).
func (w *bworld) runTerminated() {
	tok := "hostilejob" + randHex(5)
	c := &bcase{name: "background job outlives a terminated session", finding: "6", needs: "hbounds", tool: "shell",
		args: map[string]any{"command": "bash -c 'exec -a " + tok + " sleep 600'", "background": true}}
	s := &bsession{ap: "terminate", id: "hb-" + w.mode + "-term-" + randHex(3), done: make(chan struct{})}
	s.runs = []*brun{{c: c, s: s, id: "terminate_00"}}
	w.mu.Lock()
	w.sess = s
	w.sessions = append(w.sessions, s)
	w.mu.Unlock()
	w.startSession(s.id, workflows.SessionInput{Prompt: "hostile session terminate", Profile: "auto", Approval: "none",
		IdleTimeout: workflows.Duration(-1)})
	select {
	case <-s.done:
	case <-time.After(2 * time.Minute):
		s.err = fmt.Errorf("the job was not started in 2 minutes")
	}
	time.Sleep(time.Second)
	started := len(pidsWith(tok)) > 0
	require.NoError(w.t, w.kc.TerminateWorkflow(context.Background(), s.id, "", "hostile suite: terminate"))
	// A reaper checks on a heartbeat: give it a few.
	deadline := time.Now().Add(45 * time.Second)
	var left []int
	for time.Now().Before(deadline) {
		if left = pidsWith(tok); len(left) == 0 {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.sess = nil
	r := s.runs[0]
	r.checked = true
	switch {
	case !started:
		s.err = fmt.Errorf("the job never ran, so its end proves nothing")
	case len(left) > 0:
		r.effects = append(r.effects, fmt.Sprintf("its job (pids %v) still runs 45 s after the workflow was terminated", left))
		for _, pid := range left {
			// The suite's own job, found by its unique name.
			_ = syscallKill(pid)
		}
	}
	w.sweep(r)
}

// pidsWith lists the processes whose command line holds tok.
func pidsWith(tok string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(b), tok) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func syscallKill(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// discardCheck discards the auto session (the person throws its work
// away): its checkpoint refs must go from the person's repository and
// from the remote (issue 27, finding 6).
func (w *bworld) discardCheck() {
	var s *bsession
	for _, x := range w.sessions {
		if x.ap == apAuto {
			s = x
		}
	}
	c := &bcase{name: "discard leaves the checkpoint refs", finding: "6", needs: "hbounds"}
	r := &brun{c: c, s: s, id: "discard", issued: true, checked: true}
	s.runs = append(s.runs, r)
	out, err := w.e.starter("discard", s.id)
	if err != nil {
		r.effects = append(r.effects, "discard failed: "+strings.TrimSpace(out))
		return
	}
	name := checkout.Sanitize(s.id)
	for where, repo := range map[string]string{"the person's repository": w.ws, "the checkpoint remote": w.remote} {
		for ref := range refsOf(repo) {
			if strings.HasPrefix(ref, checkout.CheckpointPrefix) && strings.Contains(ref, name) {
				r.effects = append(r.effects, ref+" is still in "+where)
			}
		}
	}
	w.mu.Lock()
	w.person, w.others = w.snapPerson(), w.snapOthers()
	w.mu.Unlock()
}

// finish makes the last checks (the other session ended, the module cache
// verified, every history decrypted and searched) and prints the report.
func (w *bworld) finish(began time.Time) {
	t := w.t
	// Sweep while the other session still waits, then cancel it: its own
	// close (a last checkpoint, the commit, the checkout's removal) is its
	// worker's legitimate work on its own checkout, and a sweep after the
	// cancel raced it ("the other session: checkout .git/index changed").
	w.mu.Lock()
	after := &brun{s: &bsession{ap: "end"}, c: &bcase{name: "after the sessions"}}
	w.sweep(after)
	w.mu.Unlock()
	if w.other != "" {
		_ = w.kc.CancelWorkflow(context.Background(), w.other, "")
	}
	if v := w.goModVerify("after the sessions"); v != "" {
		after.effects = append(after.effects, v)
	}
	var took, limits []string
	actions, distinct := 0, map[string]bool{}
	for _, s := range w.sessions {
		if s.err != nil {
			t.Logf("hostile %s: session %s (%s) ended: %v", w.mode, s.ap, s.id, s.err)
		}
		for _, r := range append([]*brun{s.start}, s.runs...) {
			if r == nil {
				continue
			}
			if r.c.setup || (!r.issued && r.c.name == "session start") {
				if len(r.effects) > 0 {
					took = append(took, fmt.Sprintf("%s %s: %s", s.ap, r.c.name, strings.Join(r.effects, "; ")))
				}
				continue
			}
			if !r.issued {
				t.Errorf("hostile %s: %s [F%s] %s: never issued: the session ended before it", w.mode, s.ap, r.c.finding, r.c.name)
				continue
			}
			actions++
			distinct[r.c.name] = true
			status := "ok"
			switch {
			case len(r.effects) > 0 && r.c.limit != "":
				status = "KNOWN LIMIT: " + strings.Join(r.effects, "; ")
				limits = append(limits, fmt.Sprintf("%s [F%s] %s: %s (%s)", s.ap, r.c.finding, r.c.name, strings.Join(r.effects, "; "), r.c.limit))
			case len(r.effects) > 0:
				status = "TOOK EFFECT: " + strings.Join(r.effects, "; ")
				took = append(took, fmt.Sprintf("%s [F%s]%s %s: %s", s.ap, r.c.finding, needsTag(r.c), r.c.name, strings.Join(r.effects, "; ")))
			}
			reason := "(no result)"
			if r.result != nil {
				reason = string(r.result.Reason)
				if r.result.IsError {
					reason += " is_error"
				}
			}
			t.Logf("%-9s %-8s [F%s]%-9s %-52s %-24s %s", w.mode, s.ap, r.c.finding, needsTag(r.c), r.c.name, reason, status)
			if r.result != nil && len(r.effects) == 0 {
				t.Logf("%-9s %-8s      said: %.140q", "", "", r.result.Content)
			}
		}
		if s.close != nil && len(s.close.effects) > 0 {
			t.Logf("%-9s %-8s at the session's close: TOOK EFFECT: %s", w.mode, s.ap, strings.Join(s.close.effects, "; "))
			took = append(took, fmt.Sprintf("%s at the session's close: %s", s.ap, strings.Join(s.close.effects, "; ")))
		}
	}
	if len(after.effects) > 0 {
		took = append(took, "after the sessions: "+strings.Join(after.effects, "; "))
	}
	leaks, known := w.historyLeaks(len(limits) > 0)
	if leaks != "" {
		took = append(took, leaks)
	}
	if known != "" {
		limits = append(limits, known+" (what the known limit above showed the model is in its history)")
	}
	summary := fmt.Sprintf("hostile %s: %d actions (%d distinct), %d took effect, %d known limits (%s)",
		w.mode, actions, len(distinct), len(took), len(limits), time.Since(began).Round(time.Second))
	fmt.Println(summary)
	t.Log(summary)
	for _, l := range limits {
		msg := fmt.Sprintf("!!! hostile %s: KNOWN LIMIT, not fixed: %s", w.mode, l)
		fmt.Println(msg)
		t.Log(msg)
		reportLoudly(t, msg)
	}
	for _, s := range took {
		// Printed as it is found too: go test keeps a failed test's log
		// for its end, and CI shows only the head and tail of a long one.
		msg := fmt.Sprintf("!!! hostile %s: took effect: %s", w.mode, s)
		fmt.Println(msg)
		t.Error(msg)
	}
	require.GreaterOrEqual(t, len(distinct), 20, "each mode must make at least 20 distinct hostile actions")
}

func needsTag(c *bcase) string {
	if c.needs == "" {
		return ""
	}
	return " needs:" + c.needs
}

// historyLeaks searches every session's history, decrypted, for the
// secrets (the other session's own file is only secret to the others).
//
// With otherKnown, the other session's uncommitted file in a history is
// returned apart (known): a case marked as a known limit showed it.
func (w *bworld) historyLeaks(otherKnown bool) (leaks, known string) {
	ids := []string{}
	for _, s := range w.sessions {
		ids = append(ids, s.id)
	}
	if w.other != "" {
		ids = append(ids, w.other)
	}
	var out, knownOut []string
	for _, id := range ids {
		h := w.decodedHistory(id)
		raw, err := protojson.Marshal(h)
		require.NoError(w.t, err)
		all := string(raw) + string(decodedPayloads(h))
		for _, name := range sortedKeys(w.secrets) {
			if id == w.other && name == "another session's uncommitted file" {
				continue
			}
			if strings.Contains(all, w.secrets[name]) {
				if otherKnown && name == "another session's uncommitted file" {
					knownOut = append(knownOut, name+" in the history of "+id)
					continue
				}
				out = append(out, name+" in the history of "+id)
			}
		}
	}
	if len(knownOut) > 0 {
		known = "secret in workflow history: " + strings.Join(knownOut, ", ")
	}
	if len(out) == 0 {
		return "", known
	}
	return "secret in workflow history: " + strings.Join(out, ", "), known
}

func (w *bworld) decodedHistory(id string) *historypb.History {
	it := w.kc.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(w.t, err)
		h.Events = append(h.Events, ev)
	}
	return decodeHistory(w.t, h, w.ck)
}

// reportLoudly appends line to the file LONGRUN_TEST_REPORT names, which
// make test prints after the tests: go test shows a passing package's
// output only with -v, and a known limit must not pass in silence.
func reportLoudly(t *testing.T, line string) {
	path := os.Getenv("LONGRUN_TEST_REPORT")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		t.Errorf("report %q: %v", line, err)
		return
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		t.Errorf("report %q: %v", line, err)
	}
}
