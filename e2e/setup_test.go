package e2e

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/longrun/longrun/activities/contract"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// Issue 32, must-show 2: the repository's setup command. The workspace is
// a Go module whose test needs example.test/greet, a module only a Go
// proxy on a test host outside this machine's loopback serves (a network
// namespace behind a veth pair: reachable from a sandbox with the network
// on, through pasta, and from none without it; the host's module cache
// does not hold it). The worker runs `go mod download` as the setup of
// every new checkout. The first session's setup downloads the module
// (the proxy sees it asked) with the network on; the session then runs
// `go test` in a sandbox without the network, and it passes. A second
// session of the same base reuses the layer: its setup does not run (the
// proxy sees no request), its result says whose run it reused, and its
// `go test`, still offline, passes. The setup saw none of the worker's
// secrets in its environment.
func TestSetupRunsBeforeTheFirstModelCall(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("pasta"); err != nil {
		t.Skipf("SKIPPED LOUDLY: the setup runs with the network on, through pasta (Debian package passt), which is not installed: %v", err)
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("SKIPPED LOUDLY: the setup test's repository is a Go module and needs the go command: %v", err)
	}
	proxy := newGoProxy(t)
	probe := fmt.Sprintf("(exec 3<>/dev/tcp/%s/%s) 2>/dev/null && echo NET-ON || echo NET-OFF", proxy.host, proxy.port)
	script := map[string][]sm.Reply{
		"run the tests": {
			// A cold build cache on a loaded machine: the first go test
			// builds the testing package's dependencies.
			sm.Tools(sm.Call{ID: "t1", Name: "shell", Arguments: shellArgs(probe+"; go env GOMODCACHE; go test ./... 2>&1", 600)}),
			sm.Text("The tests pass."),
		},
	}
	e := isolationEnv(t, func(string) map[string][]sm.Reply { return script })
	writeGoModule(t, e.workspace, proxy)
	git(t, e.workspace, "add", ".")
	git(t, e.workspace, "commit", "-qm", "a module that needs example.test/greet")

	forgeToken, awsSecret := "ghp_setup"+randHex(12), "aws-secret-"+randHex(12)
	e.stopWorker()
	e.workerArgs = append(e.workerArgs, "--setup", probe+" && go mod download && go env GOMODCACHE && env")
	e.workerEnv = append(e.workerEnv,
		"GOPROXY="+proxy.url, "GOSUMDB=off", "GOTOOLCHAIN=local", "GOFLAGS=",
		"LONGRUN_FORGE_TOKEN="+forgeToken, "AWS_SECRET_ACCESS_KEY="+awsSecret,
		"PATH="+filepath.Dir(goBin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	e.startWorker()

	run := func(label string) (string, contract.SetupResult) {
		t.Helper()
		id := e.startIsolated(workflows.SessionInput{Prompt: "run the tests (" + label + ")", Profile: "auto"})
		ctx, cancel := context.WithTimeout(context.Background(), 16*time.Minute)
		defer cancel()
		var r workflows.SessionResult
		require.NoError(t, tc.GetWorkflow(ctx, id, "").Get(ctx, &r))
		require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
		msgs := e.checkSession(id)
		res := resultFor(msgs, "t1")
		require.NotNil(t, res)
		require.Contains(t, res.Content, "NET-OFF", "the session's command has no network")
		require.Contains(t, res.Content, "ok  \texample.test/app", "the tests pass offline with what setup downloaded")
		setup := setupResultOf(t, id)
		require.Contains(t, res.Content, "/setup/layers/"+setup.Key+"/go-mod", "the session's commands use the setup's layer")
		return id, setup
	}
	// Nothing else could serve the module offline: the host's module
	// cache does not hold it.
	hostCache, err := exec.Command(goBin, "env", "GOMODCACHE").Output()
	require.NoError(t, err)
	require.NoDirExists(t, filepath.Join(strings.TrimSpace(string(hostCache)), "example.test"))
	require.NoDirExists(t, filepath.Join(strings.TrimSpace(string(hostCache)), "cache", "download", "example.test"))

	id1, first := run("first")
	asked := proxy.zips.Load()
	require.Empty(t, first.Error, first.Output)
	require.False(t, first.Cached)
	require.Positive(t, asked, "the first setup downloaded the module from the proxy")
	require.Contains(t, first.Output, "NET-ON", "the setup runs with the network on")
	require.Contains(t, first.Output, "GOPROXY=", "the setup printed its environment")
	for _, secret := range []string{forgeToken, awsSecret, e.apiKey} {
		require.NotContains(t, first.Output, secret, "the setup's environment holds none of the worker's secrets")
	}
	require.NotContains(t, first.Output, "LONGRUN_FORGE_TOKEN")
	require.NotContains(t, first.Output, "OPENAI_API_KEY")
	recordHistory(t, id1, "setup_checkout")

	requests := proxy.requests.Load()
	id2, second := run("second")
	require.Empty(t, second.Error, second.Output)
	require.True(t, second.Cached, "a session of the same base reuses the setup")
	require.Equal(t, id1, second.MadeBy)
	require.Equal(t, first.Key, second.Key)
	require.Equal(t, first.Millis, second.FirstMillis)
	require.Equal(t, requests, proxy.requests.Load(), "the second session asked the proxy nothing")
	t.Logf("setup `go mod download`: first session %s ran it in %d ms (%d requests to the proxy); second session %s reused it in %d ms (0 requests)",
		id1, first.Millis, requests, id2, second.Millis)

	// The order in history: the setup ran before the first model call.
	require.Less(t, firstActivity(t, id2, contract.SetupCheckout), firstActivity(t, id2, contract.CallModel))
}

// shellArgs are a shell call's arguments with a timeout in seconds.
func shellArgs(command string, timeout int) string {
	b, _ := json.Marshal(map[string]any{"command": command, "timeout": timeout})
	return string(b)
}

// setupResultOf is the SetupCheckout result in the session's history.
func setupResultOf(t *testing.T, id string) contract.SetupResult {
	t.Helper()
	var res contract.SetupResult
	activityResult(t, id, contract.SetupCheckout, &res)
	return res
}

// activityResult decodes the result of the session's first completed
// activity of that type into v.
func activityResult(t *testing.T, id, name string, v any) {
	t.Helper()
	h := history(t, id)
	types := map[int64]string{}
	for _, ev := range h.Events {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			types[ev.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := ev.GetActivityTaskCompletedEventAttributes(); a != nil && types[a.GetScheduledEventId()] == name {
			require.NoError(t, json.Unmarshal(a.GetResult().GetPayloads()[0].GetData(), v))
			return
		}
	}
	t.Fatalf("no completed %s in the history of %s", name, id)
}

// firstActivity is the event id at which the first activity of that type
// was scheduled (or its local-activity marker recorded).
func firstActivity(t *testing.T, id, name string) int64 {
	t.Helper()
	for _, ev := range history(t, id).Events {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == name {
			return ev.GetEventId()
		}
	}
	t.Fatalf("no %s scheduled in the history of %s", name, id)
	return 0
}

// goProxy is a Go module proxy serving example.test/greet v1.0.0 on a
// test host outside this machine's loopback, counting what it is asked.
type goProxy struct {
	url, host, port string
	zip, mod        []byte
	requests, zips  atomic.Int64
}

const greetMod = "module example.test/greet\n\ngo 1.21\n"

// newGoProxy makes the module and the host. The host is a network
// namespace with one end of a veth pair (as the tools' network tests
// make one): it needs root; without it the test is skipped, loudly.
func newGoProxy(t *testing.T) *goProxy {
	t.Helper()
	p := &goProxy{mod: []byte(greetMod)}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, body := range map[string]string{
		"go.mod":   greetMod,
		"greet.go": "package greet\n\n// Hello is the greeting.\nfunc Hello() string { return \"hello\" }\n",
	} {
		w, err := zw.Create("example.test/greet@v1.0.0/" + name)
		require.NoError(t, err)
		_, err = w.Write([]byte(body))
		require.NoError(t, err)
	}
	require.NoError(t, zw.Close())
	p.zip = buf.Bytes()

	ln := outsideListener(t)
	p.host, p.port, _ = net.SplitHostPort(ln.Addr().String())
	p.url = "http://" + ln.Addr().String() + "/"
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		switch r.URL.Path {
		case "/example.test/greet/@v/list":
			fmt.Fprint(w, "v1.0.0\n")
		case "/example.test/greet/@v/v1.0.0.info":
			fmt.Fprint(w, `{"Version":"v1.0.0","Time":"2026-01-01T00:00:00Z"}`)
		case "/example.test/greet/@v/v1.0.0.mod":
			_, _ = w.Write(p.mod)
		case "/example.test/greet/@v/v1.0.0.zip":
			p.zips.Add(1)
			_, _ = w.Write(p.zip)
		default:
			http.NotFound(w, r)
		}
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return p
}

// sums are the module's go.sum lines (h1: hashes, as dirhash.Hash1 makes
// them: sha256 over "<sha256 hex>  <name>\n" of each file, sorted).
func (p *goProxy) sums(t *testing.T) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(p.zip), int64(len(p.zip)))
	require.NoError(t, err)
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		var b bytes.Buffer
		_, err = b.ReadFrom(rc)
		require.NoError(t, err)
		rc.Close()
		files[f.Name] = b.Bytes()
	}
	return fmt.Sprintf("example.test/greet v1.0.0 %s\nexample.test/greet v1.0.0/go.mod %s\n",
		hash1(files), hash1(map[string][]byte{"go.mod": p.mod}))
}

func hash1(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		fmt.Fprintf(h, "%x  %s\n", sha256.Sum256(files[n]), n)
	}
	return "h1:" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// writeGoModule writes a module whose test needs example.test/greet.
func writeGoModule(t *testing.T, dir string, p *goProxy) {
	t.Helper()
	for name, body := range map[string]string{
		"go.mod":      "module example.test/app\n\ngo 1.21\n\nrequire example.test/greet v1.0.0\n",
		"go.sum":      p.sums(t),
		"app_test.go": "package app\n\nimport (\n\t\"testing\"\n\n\t\"example.test/greet\"\n)\n\nfunc TestGreet(t *testing.T) {\n\tif greet.Hello() != \"hello\" {\n\t\tt.Fatal(greet.Hello())\n\t}\n}\n",
		"app.go":      "package app\n",
	} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
}

// outsideListener listens on a test host outside this machine's
// loopback: a network namespace joined to this one by a veth pair
// (10.214.N.2/24; this side is .1).
func outsideListener(t *testing.T) net.Listener {
	t.Helper()
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skipf("SKIPPED LOUDLY: the setup test needs ip (iproute2) to make a host outside loopback for its Go proxy: %v", err)
	}
	n := 1 + rand.IntN(250)
	tag := fmt.Sprintf("%d%03d", os.Getpid()%10000, n)
	ns, host, peer := "lrs"+tag, "lsh"+tag, "lsp"+tag
	ip := func(args ...string) error {
		out, err := exec.Command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return nil
	}
	if err := ip("netns", "add", ns); err != nil {
		t.Skipf("SKIPPED LOUDLY: cannot make a host outside loopback for the setup's Go proxy, ip netns add is not permitted here: %v", err)
	}
	t.Cleanup(func() { _ = ip("netns", "del", ns) })
	require.NoError(t, ip("link", "add", host, "type", "veth", "peer", "name", peer))
	t.Cleanup(func() { _ = ip("link", "del", host) })
	hostAddr, peerAddr := fmt.Sprintf("10.214.%d.1", n), fmt.Sprintf("10.214.%d.2", n)
	for _, args := range [][]string{
		{"link", "set", peer, "netns", ns},
		{"addr", "add", hostAddr + "/24", "dev", host},
		{"link", "set", host, "up"},
		{"-n", ns, "addr", "add", peerAddr + "/24", "dev", peer},
		{"-n", ns, "link", "set", peer, "up"},
		{"-n", ns, "link", "set", "lo", "up"},
	} {
		require.NoError(t, ip(args...))
	}
	type result struct {
		ln  net.Listener
		err error
	}
	done := make(chan result)
	go func() {
		runtime.LockOSThread() // not unlocked: the thread dies with this goroutine
		f, err := os.Open("/run/netns/" + ns)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer f.Close()
		if _, _, errno := syscall.RawSyscall(unix.SYS_SETNS, f.Fd(), syscall.CLONE_NEWNET, 0); errno != 0 {
			done <- result{err: fmt.Errorf("setns %s: %w", ns, errno)}
			return
		}
		ln, err := net.Listen("tcp", peerAddr+":0")
		done <- result{ln, err}
	}()
	r := <-done
	require.NoError(t, r.err)
	return r.ln
}
