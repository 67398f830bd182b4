package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Search attributes a session keeps up to date, so the Web UI's list can
// filter sessions ("LongrunPhase = 'waiting-approval'") and show their
// progress. devserver and the docker-compose stack register them.
var (
	PhaseKey            = temporal.NewSearchAttributeKeyKeyword("LongrunPhase")
	ModelKey            = temporal.NewSearchAttributeKeyKeyword("LongrunModel")
	WorkspaceKey        = temporal.NewSearchAttributeKeyKeyword("LongrunWorkspace")
	PendingApprovalsKey = temporal.NewSearchAttributeKeyInt64("LongrunPendingApprovals")
	TurnsKey            = temporal.NewSearchAttributeKeyInt64("LongrunTurns")
	TokensKey           = temporal.NewSearchAttributeKeyInt64("LongrunTokens")
)

// versionVisibility gates the full set of search attributes: sessions
// recorded before it upserted only LongrunPhase, and must replay so.
const versionVisibility = "visibility-v1"

// versionVisibilityThrottle limits how often a running session upserts
// when only its counters (LongrunTurns, LongrunTokens) changed: each
// upsert is a history event and a visibility write on the server, and one
// per turn cost a fast session a third of its steps/s (docs/BENCHMARKS.md).
// A change of phase, pending approvals, model or workspace, which is what
// people filter and wait on, is still published at once, with the
// counters as they are then.
const versionVisibilityThrottle = "visibility-throttle-v1"

// counterInterval is the least workflow time between two upserts that only
// move the counters. A turn slower than this (any real model) still
// publishes every turn; a fast loop publishes every few seconds, so the
// list's turn count may lag the status query by the turns of the last
// interval until the next upsert.
const counterInterval = 5 * time.Second

// visible is the last published value of each attribute.
type visible struct {
	phase, model, workspace string
	pending, turns, tokens  int64
}

// publish upserts the attributes whose values changed, in one command.
func (s *session) publish(ctx workflow.Context) {
	now := visible{
		phase: s.phase, model: s.model, workspace: s.workspaceLabel(),
		pending: int64(len(s.pending())), turns: int64(s.turn), tokens: s.usage.TotalTokens,
	}
	if s.published != nil && *s.published == now {
		return
	}
	if s.throttle && s.published != nil && onlyCounters(*s.published, now) &&
		workflow.Now(ctx).Sub(s.publishedAt) < counterInterval {
		return
	}
	updates := []temporal.SearchAttributeUpdate{
		PhaseKey.ValueSet(now.phase),
		WorkspaceKey.ValueSet(now.workspace),
		PendingApprovalsKey.ValueSet(now.pending),
		TurnsKey.ValueSet(now.turns),
		TokensKey.ValueSet(now.tokens),
	}
	if now.model != "" {
		updates = append(updates, ModelKey.ValueSet(now.model))
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, updates...); err != nil {
		s.logger(ctx).Warn("upsert search attributes", "error", err)
		return
	}
	s.published = &now
	s.publishedAt = workflow.Now(ctx)
}

// onlyCounters reports whether a and b differ in the counters alone.
func onlyCounters(a, b visible) bool {
	a.turns, a.tokens = b.turns, b.tokens
	return a == b
}

func (s *session) workspaceLabel() string {
	if s.in.WorkDir == "" {
		return "."
	}
	return s.in.WorkDir
}

// details is the markdown the Web UI shows as the session's current
// details: where it is, and for each waiting call the exact command that
// decides it.
func (s *session) details() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**phase:** %s · **turn:** %d/%d · **tokens:** %d", s.phase, s.turn, s.maxTurns, s.usage.TotalTokens)
	if s.usage.CostUSD > 0 {
		fmt.Fprintf(&b, " · **cost:** ~$%.4f", s.usage.CostUSD)
	}
	if s.model != "" {
		fmt.Fprintf(&b, " · **model:** %s", s.model)
	}
	b.WriteString("\n")
	if s.lastTool != "" {
		fmt.Fprintf(&b, "\n**last tool:** %s\n", s.lastTool)
	}
	if p := s.pending(); len(p) > 0 {
		s.waitingDetails(&b, p)
	}
	b.WriteString(s.guardianDetails())
	if len(s.todos) > 0 {
		fmt.Fprintf(&b, "\n**plan:**\n%s", todoText(s.todos))
	}
	if s.lastErr != "" {
		fmt.Fprintf(&b, "\n**last error:** %s\n", s.lastErr)
	}
	return b.String()
}
