package e2e

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// Two workers on two "machines" (each its own workspace, holding copies of
// the same files) share a transcript store in an S3 bucket: a session runs
// its first turns on worker 1, worker 1 dies, and worker 2 continues the
// conversation worker 1 stored and answers the conversation query with
// worker 1's turns in full. Neither keeps anything on its own disk, and a
// worker given a bucket that does not exist refuses to start. The bucket
// is gofakes3 in this process, a real S3-protocol server.
func TestTranscriptInS3SharedByTwoWorkers(t *testing.T) {
	t.Parallel()
	backend := s3mem.New()
	require.NoError(t, backend.CreateBucket("longrun-transcripts"))
	var puts atomic.Int64 // object uploads
	fake := gofakes3.New(backend).Server()
	s3srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			puts.Add(1)
		}
		fake.ServeHTTP(w, r)
	}))
	t.Cleanup(s3srv.Close)
	spec := "s3://longrun-transcripts/sessions?insecure=1&endpoint=" + strings.TrimPrefix(s3srv.URL, "http://")
	creds := []string{"AWS_ACCESS_KEY_ID=e2e-key", "AWS_SECRET_ACCESS_KEY=e2e-secret"}

	// A worker pointed at a bucket that is not there refuses to start,
	// saying which and what to do.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	bad := exec.CommandContext(ctx, filepath.Join(binDir, "worker"), "--workspace", t.TempDir(), "--state-dir", t.TempDir(), "--config", t.TempDir(),
		"--transcript", strings.Replace(spec, "longrun-transcripts", "no-such-bucket", 1))
	bad.Env = append(os.Environ(), append([]string{"TEMPORAL_ADDRESS=" + temporalAddr, "LONGRUN_TASK_QUEUE=e2e-" + randHex(6)}, creds...)...)
	msg, err := bad.CombinedOutput()
	require.Error(t, err, "the worker must exit")
	require.Contains(t, string(msg), `--transcript: transcript store s3://no-such-bucket/sessions/ at http://`+strings.TrimPrefix(s3srv.URL, "http://")+`: bucket "no-such-bucket" does not exist (create it, or check the bucket name and the endpoint)`)

	const readText = "Let me look at a.txt before changing it."
	e := &env{
		t:         t,
		model:     sm.New(),
		workspace: t.TempDir(),
		taskQueue: "e2e-" + randHex(6),
		apiKey:    "sk-test-" + randHex(16),
		// Worker 1 names the bucket with the flag, worker 2 with the
		// environment: both forms reach the same store.
		workerArgs: []string{"--transcript", spec},
		workerEnv:  creds,
	}
	t.Cleanup(e.model.Close)
	e.model.Enqueue(
		sm.Reply{Text: readText, ToolCalls: []sm.Call{{ID: "c_read", Name: "read", Arguments: `{"path": "a.txt"}`}}},
		sm.Reply{Text: "Now the edit.", ToolCalls: []sm.Call{{ID: "c_edit", Name: "edit", Arguments: `{"path": "a.txt", "old_string": "alpha", "new_string": "ALPHA"}`}}},
		sm.Text("done: a.txt says ALPHA"),
	)
	files := map[string]string{"a.txt": "alpha\nsecond line of machine one's file\n"}
	writeFiles(t, e.workspace, files)
	machine1 := e.workspace
	e.startWorker()

	id := e.start(workflows.SessionInput{Prompt: "capitalise alpha in a.txt"})
	waitPending(t, id, 1) // turn 1 read the file; turn 2's edit waits for a person
	require.Len(t, e.model.Requests(), 2)
	require.GreaterOrEqual(t, puts.Load(), int64(2), "worker 1 stored its conversation in the bucket")
	require.Contains(t, e.logs.String(), "s3://longrun-transcripts/sessions/ at http://", "worker 1 logs the store it uses")

	// Machine one dies without a goodbye; machine two, with a copy of the
	// files, takes the session over.
	require.NoError(t, e.worker.Process.Kill())
	_ = e.worker.Wait()
	stored := puts.Load()
	e.workspace = t.TempDir()
	writeFiles(t, e.workspace, files)
	e.workerArgs = nil
	e.workerEnv = append(creds, "LONGRUN_TRANSCRIPT_DIR="+spec)
	e.startWorker()

	out, err := e.starter("approve", "--all", id)
	require.NoError(t, err, out)
	res := result(t, id)
	require.Equal(t, workflows.ResultCompleted, res.Status, res.Error)
	require.Equal(t, "done: a.txt says ALPHA", res.FinalText)
	require.Greater(t, puts.Load(), stored, "worker 2 stored its turn in the bucket too")

	// Worker 2's model call carried worker 1's turns, read from the bucket.
	reqs := e.model.Requests()
	require.Len(t, reqs, 3)
	sent, ok := reqs[2].LastToolResult("c_read")
	require.True(t, ok, "worker 2 sent worker 1's tool result")
	require.Contains(t, sent, "second line of machine one's file")

	// The conversation query, answered by worker 2 (worker 1 is gone),
	// shows worker 1's turns in full.
	msgs := e.checkSession(id)
	require.Equal(t, readText, assistantText(msgs, "c_read"))
	read := resultFor(msgs, "c_read")
	require.NotNil(t, read)
	require.Equal(t, conversation.ReasonRan, read.Reason)
	require.Contains(t, read.Content, "second line of machine one's file")
	edit := resultFor(msgs, "c_edit")
	require.NotNil(t, edit)
	require.Equal(t, conversation.ReasonRan, edit.Reason, edit.Content)
	require.Equal(t, conversation.RoleAssistant, msgs[len(msgs)-1].Role)
	require.Equal(t, "done: a.txt says ALPHA", msgs[len(msgs)-1].Content)

	// The edit ran on machine two; neither machine kept a transcript of
	// its own.
	require.Equal(t, "ALPHA\nsecond line of machine one's file\n", readFile(t, filepath.Join(e.workspace, "a.txt")))
	require.Equal(t, files["a.txt"], readFile(t, filepath.Join(machine1, "a.txt")))
	for _, ws := range []string{machine1, e.workspace} {
		require.NoDirExists(t, filepath.Join(ws, ".longrun", "transcript"))
	}
	require.NoDirExists(t, filepath.Join(e.stateDir, "transcript"), "nor in the state directory")
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644))
	}
}

// assistantText is the text of the assistant message that made callID.
func assistantText(msgs []conversation.Message, callID string) string {
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if tc.ID == callID {
				return m.Content
			}
		}
	}
	return ""
}
