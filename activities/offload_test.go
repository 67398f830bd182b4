package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/transcript"
)

func runTool(t *testing.T, a *Activities, req ToolRequest) tools.Result {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	val, err := env.ExecuteActivity(a.RunTool, req)
	require.NoError(t, err)
	var res tools.Result
	require.NoError(t, val.Get(&res))
	return res
}

// A long result asked for by reference goes to the store; the result holds
// its reference, its length and a preview. A short one, one not asked for
// by reference, or one on a worker without a store stays inline.
func TestRunToolKeepsLongResultsByReference(t *testing.T) {
	t.Parallel()
	a, root := newActs(t, nil)
	a, store := withTranscript(t, a)
	var b strings.Builder
	for i := 0; i < 400; i++ {
		b.WriteString("a line of the big file, ünïcode too\n")
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "big.txt"), []byte(b.String()), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "small.txt"), []byte("tiny\n"), 0o644))
	read := func(path string, byRef bool) tools.Result {
		return runTool(t, a, ToolRequest{CallID: "c_" + path, Name: "read", Arguments: json.RawMessage(`{"path":"` + path + `"}`), ByReference: byRef})
	}

	full := read("big.txt", false)
	require.Empty(t, full.ContentRef)
	require.Greater(t, len(full.Content), transcript.OffloadBytes)

	res := read("big.txt", true)
	require.Equal(t, transcript.Ref([]byte(full.Content)), res.ContentRef)
	require.Equal(t, len(full.Content), res.ContentBytes)
	require.Less(t, len(res.Content), 1200, "only a preview goes into the history")
	require.True(t, strings.HasPrefix(full.Content, strings.SplitN(res.Content, "\n[… preview", 2)[0]))
	require.Contains(t, res.Content, "kept in the transcript store")
	require.NotEmpty(t, res.Files, "the stale-write record still comes back")
	stored, err := store.Get(context.Background(), res.ContentRef)
	require.NoError(t, err)
	require.Equal(t, full.Content, string(stored))

	require.Empty(t, read("small.txt", true).ContentRef)

	noStore, _ := newActs(t, nil)
	require.NoError(t, os.WriteFile(filepath.Join(root, "x"), nil, 0o644))
	r := runTool(t, noStore, ToolRequest{CallID: "c", Name: "list", Arguments: json.RawMessage(`{}`), ByReference: true})
	require.Empty(t, r.ContentRef)
}

// failingStore refuses every write.
type failingStore struct{ transcript.Store }

func (failingStore) Put(context.Context, []byte) (string, error) {
	return "", errors.New("disk full")
}

// A store that fails does not fail the call (a command that ran must not
// be reported as not run): the text stays inline.
func TestRunToolStoreFailureKeepsTheResultInline(t *testing.T) {
	t.Parallel()
	a, root := newActs(t, nil)
	a = a.with(func(c *Config) { c.Transcript = failingStore{} })
	require.NoError(t, os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("x\n", 3000)), 0o644))
	res := runTool(t, a, ToolRequest{CallID: "c", Name: "read", Arguments: json.RawMessage(`{"path":"big.txt"}`), ByReference: true})
	require.Empty(t, res.ContentRef)
	require.Greater(t, len(res.Content), 6000)
}

// The model gets the full text of a result held by reference, the stored
// segment holds it too (never the preview), and a worker without a store
// refuses such a conversation instead of sending previews.
func TestCallModelResolvesOffloadedResults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sm.New(sm.Text("seen"))
	defer srv.Close()
	a, _ := newActs(t, srv)
	a, store := withTranscript(t, a)
	big := strings.Repeat("0123456789abcdef", 300)
	ref, preview, err := transcript.Offload(ctx, store, big)
	require.NoError(t, err)
	msgs := []conversation.Message{
		{Role: conversation.RoleUser, Content: "read it"},
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c1", Name: "read", Arguments: `{"path":"big"}`}}},
		conversation.ToolMessage(conversation.ToolResult{CallID: "c1", Name: "read", Content: preview, Reason: conversation.ReasonRan, ContentRef: ref, ContentBytes: len(big)}),
	}
	resp, err := a.CallModel(ctx, ModelRequest{Messages: msgs})
	require.NoError(t, err)
	sent := srv.Requests()[0].Messages
	require.Equal(t, big, sent[2].Content)
	require.NotContains(t, string(srv.Requests()[0].Raw), "preview")
	saved, err := transcript.Load(ctx, store, resp.Head)
	require.NoError(t, err)
	require.Equal(t, big, saved[2].Result.Content)
	require.Empty(t, saved[2].Result.ContentRef)
	require.Equal(t, preview, msgs[2].Result.Content, "the caller's messages are not changed")

	bare, _ := newActs(t, srv)
	_, err = bare.CallModel(ctx, ModelRequest{Messages: msgs})
	requireAppErr(t, err, ErrTypeTranscriptUnavailable, true)
}

// Tool definitions sent once are stored; a request naming them by
// reference reaches the model with the same tools; a worker without a
// store refuses such a request.
func TestCallModelToolsByReference(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sm.New(sm.Text("one"), sm.Text("two"), sm.Text("three"))
	defer srv.Close()
	a, _ := newActs(t, srv)
	a, store := withTranscript(t, a)
	defs := []ToolDef{{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	msgs := []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}}
	first, err := a.CallModel(ctx, ModelRequest{Messages: msgs, Tools: defs})
	require.NoError(t, err)
	require.NotEmpty(t, first.ToolsRef)
	raw, err := store.Get(ctx, first.ToolsRef)
	require.NoError(t, err)
	require.JSONEq(t, `[{"name":"read","description":"Read a file.","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}]`, string(raw))

	second, err := a.CallModel(ctx, ModelRequest{Head: first.Head, Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "again"}}, ToolsRef: first.ToolsRef})
	require.NoError(t, err)
	require.Equal(t, first.ToolsRef, second.ToolsRef)
	reqs := srv.Requests()
	require.Len(t, reqs[1].Tools, 1)
	require.Equal(t, reqs[0].Tools, reqs[1].Tools)

	bare, _ := newActs(t, srv)
	_, err = bare.CallModel(ctx, ModelRequest{Messages: msgs, ToolsRef: first.ToolsRef})
	requireAppErr(t, err, ErrTypeTranscriptUnavailable, true)
	noRef, err := bare.CallModel(ctx, ModelRequest{Messages: msgs, Tools: defs})
	require.NoError(t, err)
	require.Empty(t, noRef.ToolsRef, "a worker without a store makes no reference")
}

// countingStore counts the reads of each reference.
type countingStore struct {
	transcript.Store
	mu   sync.Mutex
	gets map[string]int
}

func (s *countingStore) Get(ctx context.Context, ref string) ([]byte, error) {
	s.mu.Lock()
	s.gets[ref]++
	s.mu.Unlock()
	return s.Store.Get(ctx, ref)
}

func (s *countingStore) count(ref string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets[ref]
}

// A worker reads tool definitions it stored or read once from its own
// decoded copy: a call naming them by reference reads nothing from the
// store (a file, an S3 object, a decryption), and the model gets the same
// tools. Another worker, which never saw them, reads them once.
func TestToolDefinitionsAreReadOncePerWorker(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sm.New(sm.Text("one"), sm.Text("two"), sm.Text("three"), sm.Text("four"), sm.Text("five"))
	defer srv.Close()
	d, err := transcript.NewDir(t.TempDir())
	require.NoError(t, err)
	store := &countingStore{Store: d, gets: map[string]int{}}
	a, _ := newActs(t, srv)
	a = a.with(func(cfg *Config) { cfg.Transcript = transcript.NewCache(store, 1<<20) })
	defs := []ToolDef{{Name: "read", Description: "Read a file.", Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)}}
	msgs := []conversation.Message{{Role: conversation.RoleUser, Content: "hi"}}
	first, err := a.CallModel(ctx, ModelRequest{Messages: msgs, Tools: defs})
	require.NoError(t, err)
	ref := first.ToolsRef
	require.NotEmpty(t, ref)
	head := first.Head
	for range 2 {
		next, err := a.CallModel(ctx, ModelRequest{Head: head, Messages: []conversation.Message{{Role: conversation.RoleUser, Content: "again"}}, ToolsRef: ref})
		require.NoError(t, err)
		require.Equal(t, ref, next.ToolsRef)
		head = next.Head
	}
	require.Zero(t, store.count(ref), "the worker that stored the definitions read them back")

	other, _ := newActs(t, srv)
	other = other.with(func(cfg *Config) { cfg.Transcript = transcript.NewCache(store, 1<<20) })
	for range 2 {
		_, err := other.CallModel(ctx, ModelRequest{Messages: msgs, ToolsRef: ref})
		require.NoError(t, err)
	}
	require.Equal(t, 1, store.count(ref), "another worker reads the definitions once")
	reqs := srv.Requests()
	require.Len(t, reqs, 5)
	for i := range reqs {
		require.Equal(t, reqs[0].Tools, reqs[i].Tools, "request %d", i)
	}
}

// The decoded copy keeps toolDefsKept sets, the oldest going first, and
// hands out copies: a caller changing its slice changes no one else's.
func TestToolDefsCacheBound(t *testing.T) {
	t.Parallel()
	var c toolDefsCache
	for i := range toolDefsKept + 1 {
		c.put(fmt.Sprint("ref", i), []ToolDef{{Name: fmt.Sprint("t", i)}})
	}
	_, ok := c.get("ref0")
	require.False(t, ok, "the oldest set was dropped")
	got, ok := c.get(fmt.Sprint("ref", toolDefsKept))
	require.True(t, ok)
	got[0].Name = "changed"
	again, _ := c.get(fmt.Sprint("ref", toolDefsKept))
	require.Equal(t, fmt.Sprint("t", toolDefsKept), again[0].Name)
}
