package workflows

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
)

// PhaseCompacting: the session is summarising older turns to fit the
// model's context window.
const PhaseCompacting = "compacting"

// DefaultCompactKeepTurns is how many recent turns a compaction keeps
// as they are.
const DefaultCompactKeepTurns = 4

// compactAt is the share of the context window past which the next
// request compacts first: the reply needs room too.
const compactAt = 0.8

// estimateTokens is what the next request will weigh: the latest call's
// tokens as the API counted them, plus what came since, at four bytes a
// token (the reply is counted twice: an estimate that errs on the safe
// side).
func (s *session) estimateTokens() int {
	n := 0
	for _, m := range s.messages {
		if m.Result != nil && m.Result.ContentRef != "" {
			n += m.Result.ContentBytes // the model gets the whole text, not the preview
		} else {
			n += len(m.Content)
		}
		for _, c := range m.ToolCalls {
			n += len(c.Arguments) + len(c.Name)
		}
	}
	return int(s.lastUsage.TotalTokens) + n/4
}

// compactIfNeeded compacts before a model call that would not fit the
// configured window (SessionInput.ContextWindow; 0 = unknown, compact only
// when the model says it overflowed).
func (s *session) compactIfNeeded(ctx workflow.Context) error {
	if s.in.ContextWindow <= 0 {
		return nil
	}
	if s.estimateTokens() <= int(compactAt*float64(s.in.ContextWindow)) {
		return nil
	}
	_, err := s.compact(ctx, "the next request would exceed the context window")
	return err
}

// compactOnOverflow compacts after a context-length error, once per turn:
// true means the turn should run again on the compacted conversation.
func (s *session) compactOnOverflow(ctx workflow.Context, err error) bool {
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
func (s *session) compact(ctx workflow.Context, why string) (bool, error) {
	prev := s.phase
	s.setPhase(ctx, PhaseCompacting)
	defer s.setPhase(ctx, prev)
	keep := s.in.CompactKeepTurns
	if keep <= 0 {
		keep = DefaultCompactKeepTurns
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 5,
			NonRetryableErrorTypes: []string{
				activities.ErrTypeModelRejected, activities.ErrTypeNoModel,
				activities.ErrTypeContextLength, activities.ErrTypeModelBadReply, "TranscriptUnavailable",
			},
		},
		Summary: fmt.Sprintf("compact: keep the last %d turns (turn %d)", keep, s.turn),
	})
	req := activities.CompactRequest{Model: s.in.Model, Head: s.head, Messages: s.messages, KeepTurns: keep, Turn: s.turn}
	var res activities.CompactResult
	if err := workflow.ExecuteActivity(actx, a.Compact, req).Get(ctx, &res); err != nil {
		if ctx.Err() != nil {
			return false, err
		}
		// The conversation is unchanged; the model call will say whether
		// it still fits.
		s.lastErr, s.lastErrType = fmt.Sprintf("turn %d: compaction failed: %s", s.turn, rootMessage(err)), "CompactionFailed"
		s.logger(ctx).Warn("compaction failed", "error", err)
		return false, nil
	}
	s.usage = s.usage.Add(res.Usage)
	if res.Replaced == 0 {
		return false, nil
	}
	s.head, s.messages = res.Head, nil
	s.lastUsage = conversation.Usage{TotalTokens: int64(res.EstimatedTokens)}
	s.compactions++
	s.logger(ctx).Info("compacted", "why", why, "replaced", res.Replaced, "kept", res.Kept, "estimated_tokens", res.EstimatedTokens)
	return true, nil
}

// queryStoreTimeout bounds the store reads of one conversation query.
const queryStoreTimeout = 20 * time.Second

// fullConversation resolves the transcript reference for the queries.
func (s *session) fullConversation(original bool) ([]conversation.Message, error) {
	// A query runs on the workflow's worker while it holds the workflow:
	// a store that hangs (a bucket far away) must not hold it for long.
	ctx, cancel := context.WithTimeout(context.Background(), queryStoreTimeout)
	defer cancel()
	msgs := s.messages
	if s.head != "" {
		if s.reader == nil {
			return nil, errors.New("this worker cannot read the session's transcript (no transcript store configured)")
		}
		older, err := s.reader.Load(ctx, s.head)
		if err != nil {
			return nil, fmt.Errorf("read transcript %s: %w", s.head, err)
		}
		msgs = append(older, s.messages...)
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
