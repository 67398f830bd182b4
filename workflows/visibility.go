package workflows

import (
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/eventlog"
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

// publisher is what the session last showed of itself: its phase (the
// status query's too) and the search attributes it last upserted, which
// publish compares against.
type publisher struct {
	phase       string
	published   *visible // what publish last upserted
	publishedAt time.Time
}

// shown is what the session shows of itself at one moment. One place
// computes it (driver.shown), and everything that shows the session reads
// it: the search attributes, the current details, the parent (a child's
// waiting calls) and the notifications. None of them asks the batch on
// its own, so they cannot show two different moments.
type shown struct {
	visible                   // the search attributes' values
	pending []PendingApproval // the calls waiting for a person, the children's among them
}

// shown is the session as it stands now.
func (s *driver) shown() shown {
	p := s.pending()
	return shown{pending: p, visible: visible{
		phase: s.pub.phase, model: s.Model, workspace: s.workspaceLabel(),
		pending: int64(len(p)), turns: int64(s.Turn), tokens: s.Usage.TotalTokens,
	}}
}

// setPhase records the phase and shows the session in it. The event
// stream hears of a change from the phase it last logged (carried across
// continue-as-new: see restore).
func (s *driver) setPhase(ctx workflow.Context, phase string) {
	if phase != s.loggedPhase {
		s.emit(ctx, eventlog.Event{Kind: eventlog.KindPhase, Phase: phase})
		s.loggedPhase = phase
	}
	s.pub.phase = phase
	s.show(ctx)
}

// show publishes the session as it stands (shown) to everyone who shows
// it: the search attributes, the Web UI's current details, the parent
// and the notifications.
func (s *driver) show(ctx workflow.Context) {
	st := s.shown()
	s.publish(ctx, st.visible)
	workflow.SetCurrentDetails(ctx, s.render(st))
	s.tellParent(ctx, st.pending)
	s.notifyWaiting(ctx, st.pending)
}

func (s *driver) status() Status {
	return Status{
		Phase: s.pub.phase, Turn: s.Turn, MaxTurns: s.limits.Turns(), Model: s.Model, Usage: s.Usage,
		PendingApprovals: len(s.pending()), LastError: s.LastError, LastErrorType: s.LastErrorType, Rejected: s.Rejected,
		Guardian: s.guard.Log, Changes: s.Changes, PullRequest: s.PullRequest, PushError: s.PushError,
	}
}

// visible is the last published value of each attribute.
type visible struct {
	phase, model, workspace string
	pending, turns, tokens  int64
}

// publish upserts the attributes whose values changed, in one command.
func (s *driver) publish(ctx workflow.Context, now visible) {
	if s.pub.published != nil && *s.pub.published == now {
		return
	}
	if s.pub.published != nil && onlyCounters(*s.pub.published, now) &&
		workflow.Now(ctx).Sub(s.pub.publishedAt) < counterInterval {
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
	s.pub.published = &now
	s.pub.publishedAt = workflow.Now(ctx)
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
func (s *driver) details() string { return s.render(s.shown()) }

// render is the current details of the session as st shows it.
func (s *driver) render(st shown) string {
	var b strings.Builder
	if p := st.pending; len(p) > 0 {
		s.waitingDetails(&b, p)
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "**phase:** %s · **turn:** %d/%d · **tokens:** %d", st.phase, s.Turn, s.limits.Turns(), s.Usage.TotalTokens)
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
	b.WriteString(s.pullRequestDetails())
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
