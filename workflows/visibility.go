package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/untrusted"
)

// counterInterval is the least workflow time between two upserts that only
// move the counters (LongrunTurns, LongrunTokens): each upsert is a history
// event and a visibility write on the server, and one per turn cost a fast
// session a third of its steps/s (docs/BENCHMARKS.md). A change of phase,
// pending approvals, model or workspace, which is what people filter and
// wait on, is still published at once, with the counters as they are then. A turn slower than this (any real model) still
// publishes every turn; a fast loop publishes every few seconds, so the
// list's turn count may lag the status query by the turns of the last
// interval until the next upsert.
const counterInterval = 5 * time.Second

// setPhase records the phase for the status query, the search attribute
// and the UI's current details.
func (s *driver) setPhase(ctx workflow.Context, phase string) {
	s.phase = phase
	s.publish(ctx)
	workflow.SetCurrentDetails(ctx, s.details())
	s.tellParent(ctx)
	s.notifyWaiting(ctx)
}

func (s *driver) status() Status {
	return Status{
		Phase: s.phase, Turn: s.Turn, MaxTurns: s.limits.Turns(), Model: s.Model, Usage: s.Usage,
		PendingApprovals: len(s.pending()), LastError: s.LastError, LastErrorType: s.LastErrorType, Rejected: s.Rejected,
		Guardian: s.guard.Log, Changes: s.Changes,
	}
}

// publishPending shows a change of the waiting calls (a sub-agent's among
// them) in the search attributes, the current details and to the parent.
func (s *driver) publishPending(ctx workflow.Context) {
	s.publish(ctx)
	workflow.SetCurrentDetails(ctx, s.details())
	s.tellParent(ctx)
	s.notifyWaiting(ctx)
}

// visible is the last published value of each attribute.
type visible struct {
	phase, model, workspace string
	pending, turns, tokens  int64
}

// publish upserts the attributes whose values changed, in one command.
func (s *driver) publish(ctx workflow.Context) {
	now := visible{
		phase: s.phase, model: s.Model, workspace: s.workspaceLabel(),
		pending: int64(len(s.pending())), turns: int64(s.Turn), tokens: s.Usage.TotalTokens,
	}
	if s.published != nil && *s.published == now {
		return
	}
	if s.published != nil && onlyCounters(*s.published, now) &&
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

func (s *driver) workspaceLabel() string {
	if s.in.WorkDir == "" {
		return "."
	}
	return s.in.WorkDir
}

// details is the markdown the Web UI shows as the session's current
// details: for each waiting call the exact command that decides it, then
// where the session is. The waiting calls come first: the UI shows the
// details in a frame of its own height, and what a person must act on
// must not be the part cut off below the plan.
func (s *driver) details() string {
	var b strings.Builder
	if p := s.pending(); len(p) > 0 {
		s.waitingDetails(&b, p)
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "**phase:** %s · **turn:** %d/%d · **tokens:** %d", s.phase, s.Turn, s.limits.Turns(), s.Usage.TotalTokens)
	if s.Usage.CostUSD > 0 {
		fmt.Fprintf(&b, " · **cost:** ~$%.4f", s.Usage.CostUSD)
	}
	if s.Model != "" {
		fmt.Fprintf(&b, " · **model:** %s", s.Model)
	}
	b.WriteString("\n")
	if s.lastTool != "" {
		fmt.Fprintf(&b, "\n**last tool:** %s\n", untrusted.MarkdownText(s.lastTool))
	}
	b.WriteString(s.changesDetails())
	b.WriteString(s.guardianDetails())
	if len(s.Todos) > 0 {
		b.WriteString("\n**plan:**\n")
		for _, line := range strings.Split(strings.TrimRight(session.TodoText(s.Todos), "\n"), "\n") {
			// "- [x] " is the list's, the rest the model's.
			mark, text, _ := strings.Cut(line, "] ")
			fmt.Fprintf(&b, "%s] %s\n", mark, untrusted.MarkdownText(text))
		}
	}
	if s.LastError != "" {
		fmt.Fprintf(&b, "\n**last error:** %s\n", untrusted.MarkdownText(s.LastError))
	}
	return b.String()
}
