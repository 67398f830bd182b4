package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
)

// compactIfNeeded compacts before a model call that would not fit the
// configured window (SessionInput.ContextWindow; 0 = unknown, compact only
// when the model says it overflowed).
func (s *driver) compactIfNeeded(ctx workflow.Context) error {
	if !s.limits.ShouldCompact(session.EstimateTokens(s.lastUsage, s.Messages)) {
		return nil
	}
	_, err := s.compact(ctx, "the next request would exceed the context window")
	return err
}

// compactOnOverflow compacts after a context-length error, once per turn:
// true means the turn should run again on the compacted conversation.
func (s *driver) compactOnOverflow(ctx workflow.Context, err error) bool {
	var appErr *temporal.ApplicationError
	if s.overflowCompacted || !errors.As(err, &appErr) || appErr.Type() != activities.ErrTypeContextLength {
		return false
	}
	s.overflowCompacted = true
	ok, cerr := s.compact(ctx, "the model said the conversation exceeds its context window")
	return cerr == nil && ok
}

// compact runs a compaction turn: the worker summarises the older turns
// into one message, keeps the recent ones and stores the result in the
// transcript; the originals stay there too (conversation-original query).
// It reports whether anything was compacted.
func (s *driver) compact(ctx workflow.Context, why string) (bool, error) {
	prev := s.pub.phase
	s.setPhase(ctx, PhaseCompacting)
	defer s.setPhase(ctx, prev)
	keep := s.limits.KeepTurns()
	req := activities.CompactRequest{Model: s.in.Model, Head: s.Head, Messages: s.Messages, KeepTurns: keep, Turn: s.Turn}
	res, err := s.compactCall(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		// The conversation is unchanged; the model call will say whether
		// it still fits.
		s.LastError, s.LastErrorType = fmt.Sprintf("turn %d: compaction failed: %s", s.Turn, rootMessage(err)), "CompactionFailed"
		s.logger(ctx).Warn("compaction failed", "error", err)
		return false, nil
	}
	s.Usage = s.Usage.Add(res.Usage)
	if res.Replaced == 0 {
		return false, nil
	}
	s.Head, s.Messages = res.Head, nil
	s.lastUsage = conversation.Usage{TotalTokens: int64(res.EstimatedTokens)}
	s.Compactions++
	s.logger(ctx).Info("compacted", "why", why, "replaced", res.Replaced, "kept", res.Kept, "estimated_tokens", res.EstimatedTokens)
	return true, nil
}

// queryStoreTimeout bounds the store reads of one conversation query.
const queryStoreTimeout = 20 * time.Second

// fullConversation resolves the transcript reference for the queries.
func (s *driver) fullConversation(original bool) ([]conversation.Message, error) {
	// A query runs on the workflow's worker while it holds the workflow:
	// a store that hangs (a bucket far away) must not hold it for long.
	ctx, cancel := context.WithTimeout(context.Background(), queryStoreTimeout)
	defer cancel()
	msgs := s.Messages
	if s.Head != "" {
		if s.reader == nil {
			return nil, errors.New("this worker cannot read the session's transcript (no transcript store configured)")
		}
		older, err := s.reader.Load(ctx, s.Head)
		if err != nil {
			return nil, fmt.Errorf("read transcript %s: %w", s.Head, err)
		}
		msgs = append(older, s.Messages...)
	}
	if s.reader != nil {
		var err error
		if msgs, err = s.reader.Resolve(ctx, msgs); err != nil {
			return nil, fmt.Errorf("read offloaded tool results: %w", err)
		}
	}
	if original && s.reader != nil {
		return s.reader.Expand(ctx, msgs)
	}
	return msgs, nil
}
