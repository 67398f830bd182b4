package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/transcript"
)

// withTranscript returns a with a fresh store, cached as the worker does.
func withTranscript(t *testing.T, a *Activities) (*Activities, *transcript.Cache) {
	t.Helper()
	d, err := transcript.NewDir(t.TempDir())
	require.NoError(t, err)
	c := transcript.NewCache(d, 1<<20)
	return a.with(func(cfg *Config) { cfg.Transcript = c }), c
}

func requireAppErr(t *testing.T, err error, typ string, nonRetryable bool) *temporal.ApplicationError {
	t.Helper()
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "got %v", err)
	require.Equal(t, typ, appErr.Type())
	require.Equal(t, nonRetryable, appErr.NonRetryable())
	return appErr
}

func TestCallModelByReference(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sm.New(sm.Text("first"), sm.Text("again"), sm.Text("next"))
	defer srv.Close()
	a, _ := newActs(t, srv)
	a, store := withTranscript(t, a)

	earlier := []conversation.Message{
		{Role: conversation.RoleSystem, Content: "sys"},
		{Role: conversation.RoleUser, Content: "hi"},
	}
	head, err := transcript.Append(ctx, store, "", earlier)
	require.NoError(t, err)
	since := []conversation.Message{
		{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{{ID: "c0", Name: "list", Arguments: "{}"}}},
		conversation.ToolMessage(conversation.ToolResult{CallID: "c0", Name: "list", Content: "a\n", Reason: conversation.ReasonRan}),
	}
	req := ModelRequest{Head: head, Messages: since}
	resp, err := a.CallModel(ctx, req)
	require.NoError(t, err)
	require.Equal(t, "first", resp.Message.Content)
	require.NotEqual(t, head, resp.Head)

	// The model got the whole conversation, not the reference.
	sent := srv.Requests()[0].Messages
	require.Len(t, sent, 4)
	require.Equal(t, "sys", sent[0].Content)
	require.Equal(t, "hi", sent[1].Content)
	require.Equal(t, "c0", sent[2].ToolCalls[0].ID)
	require.Equal(t, "c0", sent[3].ToolCallID)
	require.NotContains(t, string(srv.Requests()[0].Raw), "sha256:")

	// The returned head holds exactly what was sent.
	full, err := transcript.Load(ctx, store, resp.Head)
	require.NoError(t, err)
	require.Equal(t, append(append([]conversation.Message{}, earlier...), since...), full)

	// A retry of the same request stores nothing new and gives the same
	// head, whatever the model answers this time.
	retry, err := a.CallModel(ctx, req)
	require.NoError(t, err)
	require.Equal(t, "again", retry.Message.Content)
	require.Equal(t, resp.Head, retry.Head)
	require.Equal(t, srv.Requests()[0].Messages, srv.Requests()[1].Messages)

	// The next turn sends the reply and a result after the new head.
	reply := resp.Message
	next, err := a.CallModel(ctx, ModelRequest{Head: resp.Head, Messages: []conversation.Message{reply, {Role: conversation.RoleUser, Content: "more"}}})
	require.NoError(t, err)
	require.Len(t, srv.Requests()[2].Messages, 6)
	require.Equal(t, "more", srv.Requests()[2].Messages[5].Content)
	full, err = transcript.Load(ctx, store, next.Head)
	require.NoError(t, err)
	require.Len(t, full, 6)
}

func TestCallModelWithStoreAndNoHead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sm.New(sm.Text("ok"))
	defer srv.Close()
	a, _ := newActs(t, srv)
	a, store := withTranscript(t, a)
	resp, err := a.CallModel(ctx, hello)
	require.NoError(t, err)
	want, err := transcript.Append(ctx, store, "", hello.Messages)
	require.NoError(t, err)
	require.Equal(t, want, resp.Head)
}

func TestCallModelTranscriptFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sm.New()
	defer srv.Close()

	// No store: a request by reference cannot be served by this worker.
	a, _ := newActs(t, srv)
	_, err := a.CallModel(ctx, ModelRequest{Head: transcript.Ref([]byte("x")), Messages: hello.Messages})
	appErr := requireAppErr(t, err, ErrTypeTranscriptUnavailable, true)
	require.Contains(t, appErr.Message(), "keeps no transcript")

	// A head the store does not have is a store fault, retried.
	b, _ := newActs(t, srv)
	b, _ = withTranscript(t, b)
	_, err = b.CallModel(ctx, ModelRequest{Head: transcript.Ref([]byte("x")), Messages: hello.Messages})
	appErr = requireAppErr(t, err, ErrTypeTranscriptStore, false)
	require.Contains(t, appErr.Message(), transcript.Ref([]byte("x")))
	require.Empty(t, srv.Requests(), "the model is not called without the conversation")

	// A cancelled context stays a cancel, not a store fault.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = b.CallModel(cctx, ModelRequest{Head: transcript.Ref([]byte("x")), Messages: hello.Messages})
	require.ErrorIs(t, err, context.Canceled)
}

// gatedStore is a transcript store whose Put waits for a gate, or fails.
type gatedStore struct {
	transcript.Store
	gate func() bool // Put waits until it says true (at most 10 s)
	fail error
}

func (g gatedStore) Put(ctx context.Context, data []byte) (string, error) {
	deadline := time.Now().Add(10 * time.Second)
	for g.gate != nil && !g.gate() {
		if time.Now().After(deadline) {
			return "", errors.New("the write was not let through: it waited for the model's request, which never came")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if g.fail != nil {
		return "", g.fail
	}
	return g.Store.Put(ctx, data)
}

// The store's write of the request's new messages runs while the model
// answers, so it is on no turn's critical path; a write that fails still
// fails the call, so no reply is recorded against a head the store lacks.
func TestCallModelStoresWhileTheModelAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sm.New(sm.Text("ok"), sm.Text("again"))
	defer srv.Close()
	d, err := transcript.NewDir(t.TempDir())
	require.NoError(t, err)

	a, _ := newActs(t, srv)
	a = a.with(func(cfg *Config) {
		cfg.Transcript = gatedStore{Store: d, gate: func() bool { return len(srv.Requests()) > 0 }}
	})
	resp, err := a.CallModel(ctx, hello)
	require.NoError(t, err, "the write waits for the model's request: it must not come before it")
	full, err := transcript.Load(ctx, d, resp.Head)
	require.NoError(t, err)
	require.Equal(t, hello.Messages, full)

	b, _ := newActs(t, srv)
	b = b.with(func(cfg *Config) { cfg.Transcript = gatedStore{Store: d, fail: errors.New("disk full")} })
	_, err = b.CallModel(ctx, hello)
	appErr := requireAppErr(t, err, ErrTypeTranscriptStore, false)
	require.Contains(t, appErr.Message(), "disk full")
	require.Len(t, srv.Requests(), 2, "the model answered; the failed write fails the call all the same")
}
