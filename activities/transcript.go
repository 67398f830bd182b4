package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/transcript"
)

// Error types of the transcript, as Temporal sees them.
const (
	// ErrTypeTranscriptUnavailable: the request names a transcript head
	// but this worker keeps no transcript. Not retryable on this worker;
	// the worker's configuration must change.
	ErrTypeTranscriptUnavailable = "TranscriptUnavailable"
	// ErrTypeTranscriptStore: reading or writing the store failed (a
	// missing or damaged segment, a full disk). Retried: another worker,
	// or the same after the disk is fixed, may succeed.
	ErrTypeTranscriptStore = "TranscriptStore"
)

// conversationOf resolves head plus msgs into the whole conversation and
// stores it, returning the new head. The head is stored before the model
// is called, so a retried call stores the same content under the same
// reference and the session sees one head whichever attempt succeeds.
// Without a store, msgs must be the whole conversation.
func (a *Activities) conversationOf(ctx context.Context, head string, msgs []conversation.Message) (full []conversation.Message, stored func() (string, error), err error) {
	if a.cfg.Transcript == nil {
		if transcript.HasOffloaded(msgs) {
			return nil, nil, temporal.NewNonRetryableApplicationError(
				"the conversation holds tool results kept in a transcript store, but this worker keeps no transcript (started with --transcript off): run the session's workers with the same transcript store",
				ErrTypeTranscriptUnavailable, nil)
		}
		if head != "" {
			return nil, nil, temporal.NewNonRetryableApplicationError(
				fmt.Sprintf("the request names transcript %s but this worker keeps no transcript (started with --transcript off): run the session's workers with a transcript store", head),
				ErrTypeTranscriptUnavailable, nil)
		}
		return msgs, func() (string, error) { return "", nil }, nil
	}
	prior, err := transcript.Load(ctx, a.cfg.Transcript, head)
	if err != nil {
		return nil, nil, storeError("load the conversation", err)
	}
	// The store keeps full text: a segment never holds a preview.
	msgs, err = transcript.Resolve(ctx, a.cfg.Transcript, msgs)
	if err != nil {
		return nil, nil, storeError("read offloaded tool results", err)
	}
	// Storing the new messages (a file written and synced to disk, or an
	// object put) runs while the model answers: the request needs only
	// the messages, and the write was a few milliseconds of every turn's
	// critical path. A failed write still fails the call (stored), so no
	// reply is recorded against a head the store does not hold.
	type appended struct {
		head string
		err  error
	}
	done := make(chan appended, 1)
	go func() {
		h, err := transcript.Append(ctx, a.cfg.Transcript, head, msgs)
		done <- appended{h, err}
	}()
	stored = sync.OnceValues(func() (string, error) {
		r := <-done
		if r.err != nil {
			return "", storeError("store the conversation", r.err)
		}
		return r.head, nil
	})
	return append(prior, msgs...), stored, nil
}

// storeError is a retryable transcript failure; a cancelled context stays
// itself, so a cancel is not mistaken for a broken store.
func storeError(what string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return temporal.NewApplicationErrorWithCause(fmt.Sprintf("transcript: %s: %v", what, err), ErrTypeTranscriptStore, err)
}

// toolsOf settles the request's tool definitions with the store: Tools
// given are stored (their reference is returned for the next request),
// ToolsRef alone is read back into req.Tools, from the worker's decoded
// copy when it has one (a.tools). Without a store Tools go as they are
// and no reference is made.
func (a *Activities) toolsOf(ctx context.Context, req *ModelRequest) (string, error) {
	if len(req.Tools) > 0 {
		if a.cfg.Transcript == nil {
			return "", nil
		}
		data, err := json.Marshal(req.Tools)
		if err != nil {
			return "", fmt.Errorf("encode tool definitions: %w", err)
		}
		ref, err := a.cfg.Transcript.Put(ctx, data)
		if err != nil {
			return "", storeError("store the tool definitions", err)
		}
		a.tools.put(ref, req.Tools)
		return ref, nil
	}
	if req.ToolsRef == "" {
		return "", nil
	}
	if a.cfg.Transcript == nil {
		return "", temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("the request names tool definitions %s but this worker keeps no transcript (started with --transcript off): run the session's workers with the same transcript store", req.ToolsRef),
			ErrTypeTranscriptUnavailable, nil)
	}
	if defs, ok := a.tools.get(req.ToolsRef); ok {
		req.Tools = defs
		return req.ToolsRef, nil
	}
	data, err := a.cfg.Transcript.Get(ctx, req.ToolsRef)
	if err != nil {
		return "", storeError("read the tool definitions", err)
	}
	if err := json.Unmarshal(data, &req.Tools); err != nil {
		return "", temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("tool definitions %s: %v", req.ToolsRef, err), ErrTypeTranscriptStore, err)
	}
	a.tools.put(req.ToolsRef, req.Tools)
	return req.ToolsRef, nil
}
