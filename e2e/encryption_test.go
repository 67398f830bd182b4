package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/proxy"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/longrun/longrun/codec"
	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// keyLine is one line of a key file: id and a fresh random 32-byte key.
func keyLine(t *testing.T, id string) string {
	t.Helper()
	k := make([]byte, codec.KeySize)
	_, err := rand.Read(k)
	require.NoError(t, err)
	return id + "=" + base64.StdEncoding.EncodeToString(k) + "\n"
}

func writeKeys(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "keys")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600))
	return path
}

// keyClient is the test server's client with the codec of the key file at
// path, as the starter and the worker use it.
func keyClient(t *testing.T, path string) (client.Client, *codec.Keys) {
	t.Helper()
	keys, err := codec.LoadKeys(path)
	require.NoError(t, err)
	c, err := client.NewClientFromExisting(tc, client.Options{DataConverter: codec.DataConverter(keys)})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c, keys
}

// decodeHistory is h with every payload decrypted by keys (payloads that
// are not encrypted, such as search attributes, stay as they are).
func decodeHistory(t *testing.T, h *historypb.History, keys *codec.Keys) *historypb.History {
	t.Helper()
	out := proto.Clone(h).(*historypb.History)
	c := codec.New(keys)
	require.NoError(t, proxy.VisitPayloads(context.Background(), out, proxy.VisitPayloadsOptions{
		Visitor: func(_ *proxy.VisitPayloadsContext, p []*commonpb.Payload) ([]*commonpb.Payload, error) {
			return c.Decode(p)
		},
	}))
	return out
}

// keyIDs counts the payloads of h encrypted under each key id.
func keyIDs(t *testing.T, h *historypb.History) map[string]int {
	t.Helper()
	ids := map[string]int{}
	require.NoError(t, proxy.VisitPayloads(context.Background(), proto.Clone(h), proxy.VisitPayloadsOptions{
		SkipSearchAttributes: true,
		Visitor: func(_ *proxy.VisitPayloadsContext, ps []*commonpb.Payload) ([]*commonpb.Payload, error) {
			for _, p := range ps {
				if string(p.GetMetadata()["encoding"]) == codec.EncodingEncrypted {
					ids[string(p.GetMetadata()[codec.MetadataKeyID])]++
				} else {
					ids["(plain)"]++
				}
			}
			return ps, nil
		},
	}))
	return ids
}

// replay replays h with the codec of keys, as a worker with those keys
// would after a restart.
func replay(t *testing.T, id string, h *historypb.History, keys *codec.Keys) error {
	t.Helper()
	rep, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{DataConverter: codec.DataConverter(keys)})
	require.NoError(t, err)
	rep.RegisterWorkflowWithOptions((&workflows.Sessions{}).AgentSession, workflow.RegisterOptions{Name: workflows.WorkflowType})
	return rep.ReplayWorkflowHistoryWithOptions(nil, h, worker.ReplayWorkflowHistoryOptions{OriginalExecution: workflow.Execution{ID: id}})
}

// readSecretEncrypted runs a session, on a worker with a fresh key keyID,
// whose model reads secret.txt holding a new marker; it returns the
// marker, the key file and the session id once the session completed.
func readSecretEncrypted(t *testing.T, markerPrefix, keyID, idPrefix string) (marker, keysFile, id string) {
	t.Helper()
	marker = markerPrefix + randHex(6)
	keysFile = writeKeys(t, keyLine(t, keyID))
	e := newEnvWorkerEnv(t, []string{codec.EnvKeysFile + "=" + keysFile},
		sm.Tools(sm.Call{ID: "c_read", Name: "read", Arguments: `{"path": "secret.txt"}`}),
		sm.Text("Read it."))
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "secret.txt"), []byte("the secret is "+marker+"\n"), 0o644))
	ec, _ := keyClient(t, keysFile)
	id = idPrefix + randHex(4)
	run, err := ec.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: e.taskQueue},
		// local_reads off: the read's result is then an activity result,
		// which the Web UI's history table shows inline (a local read's is
		// in a marker's details).
		workflows.WorkflowType, workflows.SessionInput{Prompt: "read secret.txt", Approval: workflows.ApproverNone, LocalReads: workflows.Flag(false)})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	require.NoError(t, run.Get(ctx, nil))
	return marker, keysFile, id
}

// TestEncryptedPayloads (must-show 2): a session reads a file holding a
// marker secret with a worker that has an encryption key. The history the
// server hands out holds the marker in no payload, raw or base64-decoded,
// and neither does the transcript store on disk; decrypting the payloads
// with the codec finds it, and so does the starter given the same keys.
func TestEncryptedPayloads(t *testing.T) {
	t.Parallel()
	marker := "MARKER-SECRET-" + randHex(8)
	keysFile := writeKeys(t, keyLine(t, "k1"))
	e := newEnvWorkerEnv(t, []string{codec.EnvKeysFile + "=" + keysFile},
		sm.Tools(sm.Call{ID: "c_read", Name: "read", Arguments: `{"path": "secret.txt"}`}),
		sm.Text("The file holds the marker."))
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "secret.txt"), []byte("the secret is "+marker+"\n"), 0o644))
	ec, keys := keyClient(t, keysFile)

	id := "e2e-encrypted-" + randHex(4)
	run, err := ec.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: e.taskQueue},
		// local_reads off: the read's result is then an activity result,
		// which the Web UI's history table shows inline (a local read's is
		// in a marker's details).
		workflows.WorkflowType, workflows.SessionInput{Prompt: "read secret.txt", Approval: workflows.ApproverNone, LocalReads: workflows.Flag(false)})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var res workflows.SessionResult
	require.NoError(t, run.Get(ctx, &res))
	require.Equal(t, workflows.ResultCompleted, res.Status)
	content, _ := e.model.Requests()[1].LastToolResult("c_read")
	require.Contains(t, content, marker, "the model got the file")
	require.Contains(t, e.logs.String(), "payloads and transcripts encrypted")

	h := history(t, id)
	raw, err := protojson.Marshal(h)
	require.NoError(t, err)
	require.NotContains(t, string(raw), marker, "marker in the history's JSON")
	require.False(t, bytes.Contains(decodedPayloads(h), []byte(marker)), "marker in a base64-decoded payload")
	ids := keyIDs(t, h)
	require.Positive(t, ids["k1"], "payloads encrypted with k1: %v", ids)
	require.Zero(t, ids["(plain)"], "every payload but search attributes is encrypted: %v", ids)
	filepath.WalkDir(e.stateDir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.Contains(path, "transcript") {
			b, _ := os.ReadFile(path)
			require.NotContains(t, string(b), marker, "marker in the transcript store at rest: %s", path)
		}
		return nil
	})

	dec := decodeHistory(t, h, keys)
	require.True(t, bytes.Contains(decodedPayloads(dec), []byte(marker)), "the codec decodes the payloads and finds the marker")
	require.Contains(t, queryConversation(t, ec, id), marker, "the conversation, decrypted, holds the tool result")

	out, err := e.starter("--encryption-keys", keysFile, "conversation", id)
	require.NoError(t, err, out)
	require.Contains(t, out, marker, "the starter decrypts with the same keys")
	out, err = e.starter("conversation", id)
	require.Error(t, err, "without the keys the starter cannot read the conversation: %s", out)
	require.NotContains(t, out, marker)
	require.NoError(t, replay(t, id, h, keys))
}

func queryConversation(t *testing.T, c client.Client, id string) string {
	t.Helper()
	v, err := c.QueryWorkflow(context.Background(), id, "", workflows.QueryConversation)
	require.NoError(t, err)
	var msgs []conversation.Message
	require.NoError(t, v.Get(&msgs))
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Content)
		if m.Result != nil {
			b.WriteString(m.Result.Content)
		}
	}
	return b.String()
}

// TestKeyRotation (must-show 4): a session starts under key a and waits
// for an approval; the worker is restarted with keys b,a (b encrypts, a
// still decrypts); the person approves through a client with the new
// keys, the session continues and completes, its history holds payloads
// under both keys, and it replays with the new key file.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	a, b := keyLine(t, "a"), keyLine(t, "b")
	oldKeys := writeKeys(t, a)
	newKeys := writeKeys(t, b, a)
	e := newEnvWorkerEnv(t, []string{codec.EnvKeysFile + "=" + oldKeys},
		sm.Tools(sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "rotated.txt", "content": "written after rotation"}`}),
		sm.Text("done"))
	oc, _ := keyClient(t, oldKeys)

	id := "e2e-rotation-" + randHex(4)
	_, err := oc.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: id, TaskQueue: e.taskQueue},
		// In place, as the harness's env.start: the test reads rotated.txt
		// in the workspace, and its history has no OpenCheckout activity.
		workflows.WorkflowType, workflows.SessionInput{Prompt: "write rotated.txt", InPlace: true})
	require.NoError(t, err)
	waitFor(t, "the write to wait for approval", 30*time.Second, func() bool {
		v, err := oc.QueryWorkflow(context.Background(), id, "", workflows.QueryPendingApprovals)
		var p []workflows.PendingApproval
		return err == nil && v.Get(&p) == nil && len(p) == 1
	})
	before := keyIDs(t, history(t, id))
	require.Positive(t, before["a"])
	require.Zero(t, before["b"])

	e.stopWorker()
	// The flag wins over the variable, which still names the old file.
	e.workerArgs = []string{"--encryption-keys", newKeys}
	e.startWorker()
	nc, keys := keyClient(t, newKeys)
	out, err := e.starter("--encryption-keys", newKeys, "approve", id, "c_w")
	require.NoError(t, err, out)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var res workflows.SessionResult
	require.NoError(t, nc.GetWorkflow(ctx, id, "").Get(ctx, &res))
	require.Equal(t, workflows.ResultCompleted, res.Status)
	got, err := os.ReadFile(filepath.Join(e.workspace, "rotated.txt"))
	require.NoError(t, err)
	require.Equal(t, "written after rotation", string(got))

	h := history(t, id)
	after := keyIDs(t, h)
	require.Positive(t, after["a"], "%v", after)
	require.Positive(t, after["b"], "payloads written after the rotation use b: %v", after)
	require.Zero(t, after["(plain)"], "%v", after)
	require.NoError(t, replay(t, id, h, keys), "the history replays with keys b,a")
	onlyB, err := codec.LoadKeys(writeKeys(t, b))
	require.NoError(t, err)
	require.ErrorContains(t, replay(t, id, h, onlyB), `key id "a"`, "without a the old payloads cannot be read")
}

// TestTemporalCLIDecodesThroughCodecServer (must-show 3, CLI part): the
// temporal CLI (v1.5.1: `go install github.com/temporalio/cli/cmd/temporal@v1.5.1`)
// shows an encrypted session's history decrypted through `starter
// codec-server` with its bearer token, and without the token it does not.
func TestTemporalCLIDecodesThroughCodecServer(t *testing.T) {
	t.Parallel()
	cli := os.Getenv("LONGRUN_TEMPORAL_CLI")
	if cli == "" {
		cli, _ = exec.LookPath("temporal")
	}
	if cli == "" {
		t.Skip("temporal CLI not found (set LONGRUN_TEMPORAL_CLI or `go install github.com/temporalio/cli/cmd/temporal@v1.5.1`)")
	}
	marker, keysFile, id := readSecretEncrypted(t, "MARKER-CLI-", "cli1", "e2e-cli-codec-")

	token := "tok-" + randHex(8)
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
	codecURL := startCodecServer(t, keysFile, "--token-file", tokenFile)
	show := func(extra ...string) (string, error) {
		args := append([]string{"workflow", "show", "--workflow-id", id, "--address", temporalAddr,
			"--output", "json", "--codec-endpoint", codecURL}, extra...)
		cmd := exec.Command(cli, args...)
		cmd.Env = append(os.Environ(), "TEMPORAL_CONFIG_FILE=/nonexistent")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// --output json keeps payload data base64, as the history API does:
	// read it back as a history and look at the payloads decoded.
	decoded := func(out string) []byte {
		var h historypb.History
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal([]byte(out), &h); err != nil {
			return nil
		}
		return decodedPayloads(&h)
	}
	out, err := show("--codec-auth", "Bearer "+token)
	require.NoError(t, err, cutText(out, 2000))
	require.True(t, bytes.Contains(decoded(out), []byte(marker)), "temporal workflow show decodes through the codec server")
	out, err = show()
	require.False(t, err == nil && bytes.Contains(decoded(out), []byte(marker)), "without the token the codec server decodes nothing")
	require.NotContains(t, out, marker)
}
