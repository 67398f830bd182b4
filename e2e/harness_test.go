// Package e2e runs Longrun end to end: the real embedded Temporal server
// (the devserver binary, built once per run), real worker processes, the
// real starter CLI, and a scripted model over real HTTP.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

var (
	temporalAddr  string
	uiURL         string // the devserver's Web UI, for the browser test
	devserverPath string
	binDir        string
	tc            client.Client
)

func TestMain(m *testing.M) {
	os.Exit(mainRun(m))
}

func mainRun(m *testing.M) int {
	root, _ := filepath.Abs("..")
	dir, err := os.MkdirTemp("", "longrun-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binDir = dir

	devserver := os.Getenv("LONGRUN_DEVSERVER")
	if devserver == "" {
		// Building the server cold takes minutes; `make test` builds it
		// once and passes its path.
		devserver = filepath.Join(root, ".longrun-bin", "devserver")
		if _, err := os.Stat(devserver); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: building devserver (slow when cold; `make test` builds it once)")
			if out, err := exec.Command("go", "-C", filepath.Join(root, "devserver"), "build", "-o", devserver, ".").CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "e2e: build devserver: %v\n%s", err, out)
				return 1
			}
		}
	}
	for _, b := range []string{"worker", "starter"} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b), filepath.Join(root, b)).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: build %s: %v\n%s", b, err, out)
			return 1
		}
	}

	devserverPath = devserver
	// The Web UI is for the browser test. The devserver reads --ui-port 0
	// as "no UI", so pick a free port here.
	uiPort, err := freeLoopbackPort()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: free port for the UI:", err)
		return 1
	}
	store, err := devserverStoreArgs("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	srv := exec.Command(devserver, append(store, "--port", "0", "--ui-port", strconv.Itoa(uiPort))...)
	stdout, _ := srv.StdoutPipe()
	srv.Stderr = io.Discard
	if err := srv.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: start devserver:", err)
		return 1
	}
	defer func() {
		_ = srv.Process.Signal(os.Interrupt)
		_ = srv.Wait()
	}()
	ready := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`devserver ready: temporal=(\S+) ui=(\S+) namespace=\S+ db=(\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m
			}
		}
	}()
	select {
	case m := <-ready:
		temporalAddr, uiURL, devserverDB = m[1], m[2], m[3]
	case <-time.After(90 * time.Second):
		fmt.Fprintln(os.Stderr, "e2e: devserver not ready after 90s")
		return 1
	}
	tc, err = client.Dial(client.Options{HostPort: temporalAddr})
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: dial:", err)
		return 1
	}
	defer tc.Close()
	return m.Run()
}

// env is one test's world: a scripted model, a workspace, a worker process
// on its own task queue, and a secret API key that must never reach history.
type env struct {
	t         *testing.T
	model     *scriptedmodel.Server
	workspace string
	taskQueue string
	apiKey    string
	worker    *exec.Cmd
	logs      *syncBuffer
	workerEnv []string // extra environment for every worker this env starts
	// starterEnv is extra environment for the starter CLI.
	starterEnv []string
	// starterDir is where the starter CLI runs; "" is the workspace.
	starterDir string

	// workerArgs are extra flags for every worker this env starts.
	workerArgs []string
	// stateDir and configDir are the worker's --state-dir and --config,
	// outside the workspace and never the developer's own.
	stateDir, configDir string
}

func newEnv(t *testing.T, script ...scriptedmodel.Reply) *env {
	t.Helper()
	return newEnvWorkerEnv(t, nil, script...)
}

// newEnvResponder is newEnv with a model that answers from each request
// (a scriptedmodel.Responder) once the script, if any, is used up.
func newEnvResponder(t *testing.T, r scriptedmodel.Responder) *env {
	t.Helper()
	e := &env{
		t:         t,
		model:     scriptedmodel.NewResponder(r),
		workspace: t.TempDir(),
		stateDir:  t.TempDir(),
		configDir: t.TempDir(),
		taskQueue: "e2e-" + randHex(6),
		apiKey:    "sk-test-" + randHex(16),
	}
	t.Cleanup(e.model.Close)
	e.startWorker()
	return e
}

// newEnvWorkerEnv is newEnv with extra environment for the worker, e.g.
// LONGRUN_MODEL_TIMEOUT=1s.
func newEnvWorkerEnv(t *testing.T, workerEnv []string, script ...scriptedmodel.Reply) *env {
	t.Helper()
	e := &env{
		workerEnv: workerEnv,
		t:         t,
		model:     scriptedmodel.New(script...),
		workspace: t.TempDir(),
		stateDir:  t.TempDir(),
		configDir: t.TempDir(),
		taskQueue: "e2e-" + randHex(6),
		apiKey:    "sk-test-" + randHex(16),
	}
	t.Cleanup(e.model.Close)
	e.startWorker()
	return e
}

func (e *env) startWorker() {
	e.t.Helper()
	if e.stateDir == "" {
		e.stateDir = e.t.TempDir()
	}
	if e.configDir == "" {
		e.configDir = e.t.TempDir()
	}
	args := []string{"--workspace", e.workspace, "--state-dir", e.stateDir, "--config", e.configDir}
	cmd := exec.Command(filepath.Join(binDir, "worker"), append(args, e.workerArgs...)...)
	cmd.Env = append(os.Environ(),
		"TEMPORAL_ADDRESS="+temporalAddr,
		"LONGRUN_TASK_QUEUE="+e.taskQueue,
		"OPENAI_BASE_URL="+e.model.URL(),
		"OPENAI_API_KEY="+e.apiKey,
		"LONGRUN_MODEL=scripted-test",
		// Not the developer's own ~/.agents/skills: a test that wants
		// user skills sets its own directory in workerEnv.
		"LONGRUN_SKILLS_DIRS=off",
	)
	cmd.Env = append(cmd.Env, e.workerEnv...)
	e.logs = &syncBuffer{}
	cmd.Stdout, cmd.Stderr = e.logs, e.logs
	require.NoError(e.t, cmd.Start())
	e.worker = cmd
	logs := e.logs
	e.t.Cleanup(func() {
		stopProcess(cmd)
		if e.t.Failed() {
			e.t.Logf("worker log:\n%s", logs.String())
		}
	})
}

// trustWorkspace restarts the worker with --trust-workspace, so the
// workspace's .longrun/permissions.json and .longrun/mcp.json count.
func (e *env) trustWorkspace() {
	e.t.Helper()
	e.stopWorker()
	e.workerArgs = append(e.workerArgs, "--trust-workspace")
	e.startWorker()
}

// stopWorker shuts the current worker process down as an operator would
// (SIGINT, then SIGKILL after 10 s), so a test can start another.
func (e *env) stopWorker() {
	e.t.Helper()
	stopProcess(e.worker)
}

func stopProcess(cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return // already waited for
	}
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// start starts a session through the SDK client and returns its id. It
// runs in place (in_place): the tests written before isolation inspect
// files in the worker's workspace itself. startIsolated does not.
func (e *env) start(in workflows.SessionInput) string {
	e.t.Helper()
	in.InPlace = true
	return e.startIsolated(in)
}

// startIsolated starts a session as the starter does by default: on a git
// repository it gets a checkout of its own.
func (e *env) startIsolated(in workflows.SessionInput) string {
	e.t.Helper()
	id := "e2e-" + strings.ReplaceAll(e.t.Name(), "/", "-") + "-" + randHex(4)
	_, err := tc.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{
		ID: id, TaskQueue: e.taskQueue,
	}, workflows.WorkflowType, in)
	require.NoError(e.t, err)
	return id
}

// starter runs the starter CLI against the test server.
func (e *env) starter(args ...string) (string, error) {
	cmd := exec.Command(filepath.Join(binDir, "starter"), args...)
	cmd.Env = append(append(os.Environ(), "TEMPORAL_ADDRESS="+temporalAddr, "LONGRUN_TASK_QUEUE="+e.taskQueue), e.starterEnv...)
	// Run where a person would: in the workspace (start works on the
	// directory it runs in; starterDir picks another).
	cmd.Dir = e.workspace
	if e.starterDir != "" {
		cmd.Dir = e.starterDir
	}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func query[T any](t *testing.T, id, name string) T {
	t.Helper()
	var v T
	val, err := tc.QueryWorkflow(context.Background(), id, "", name)
	require.NoError(t, err, "query %s", name)
	require.NoError(t, val.Get(&v))
	return v
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", d, what)
}

func waitPending(t *testing.T, id string, n int) []workflows.PendingApproval {
	t.Helper()
	var p []workflows.PendingApproval
	waitFor(t, fmt.Sprintf("%d pending approvals", n), 30*time.Second, func() bool {
		val, err := tc.QueryWorkflow(context.Background(), id, "", workflows.QueryPendingApprovals)
		if err != nil {
			return false
		}
		p = nil
		return val.Get(&p) == nil && len(p) == n
	})
	return p
}

func result(t *testing.T, id string) workflows.SessionResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var r workflows.SessionResult
	require.NoError(t, tc.GetWorkflow(ctx, id, "").Get(ctx, &r))
	return r
}

// history fetches the full history of a closed or running session.
func history(t *testing.T, id string) *historypb.History {
	t.Helper()
	it := tc.GetWorkflowHistory(context.Background(), id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	return h
}

// recordHistory saves the session's history as
// $LONGRUN_RECORD_HISTORIES/name.json when that is set (make
// record-histories), for the replay corpus in workflows/testdata.
func recordHistory(t *testing.T, id, name string) {
	t.Helper()
	dir := os.Getenv("LONGRUN_RECORD_HISTORIES")
	if dir == "" {
		return
	}
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(history(t, id))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), raw, 0o644))
	// The replay needs the workflow id when commands depend on it (a
	// sub-agent's id is its parent's plus a suffix).
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".id"), []byte(id+"\n"), 0o644))
}

// checkSession asserts what must hold for every session: every tool call
// paired, and the API key nowhere in the history.
func (e *env) checkSession(id string) []conversation.Message {
	e.t.Helper()
	msgs := query[[]conversation.Message](e.t, id, workflows.QueryConversation)
	require.NoError(e.t, conversation.CheckPairing(msgs))
	h := history(e.t, id)
	for _, ev := range h.Events {
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED {
			e.t.Fatalf("workflow task failed in history: %s", ev.GetWorkflowTaskFailedEventAttributes().GetFailure().GetMessage())
		}
	}
	raw, err := protojson.Marshal(h)
	require.NoError(e.t, err)
	require.NotContains(e.t, string(raw), e.apiKey, "the model API key leaked into workflow history")
	// Payloads are base64 in protojson; check the decoded form too.
	require.False(e.t, bytes.Contains(decodedPayloads(h), []byte(e.apiKey)), "API key in a payload")
	return msgs
}

var payloadData = regexp.MustCompile(`"data":"([^"]+)"`)

// decodedPayloads is every event's JSON followed by its base64 payloads
// decoded, so a secret cannot hide in an encoding.
func decodedPayloads(h *historypb.History) []byte {
	var b bytes.Buffer
	for _, ev := range h.Events {
		raw, _ := protojson.Marshal(ev)
		b.Write(raw)
		for _, m := range payloadData.FindAllSubmatch(raw, -1) {
			if d, err := decodeB64(string(m[1])); err == nil {
				b.Write(d)
			}
		}
	}
	return b.Bytes()
}

func resultFor(msgs []conversation.Message, callID string) *conversation.ToolResult {
	for _, m := range msgs {
		if m.Result != nil && m.Result.CallID == callID {
			return m.Result
		}
	}
	return nil
}

// freeLoopbackPort asks the kernel for a free port, outside any test.
func freeLoopbackPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func decodeB64(s string) ([]byte, error) { return base64.StdEncoding.DecodeString(s) }

func jsonEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}
