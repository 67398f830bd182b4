package workflows

import (
	"cmp"
	"fmt"
	"strings"

	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/toolspec"
	"github.com/longrun/longrun/untrusted"
)

// notifier is the session's side of notifications: whether to send them
// and the state that makes their idempotency keys deterministic.
type notifier struct {
	// on: the worker that loaded this run's configuration has sinks
	// (WorkspaceConfig.Notify, recorded in history), and the session is
	// not a sub-agent, whose waiting calls its parent reports.
	on bool
	// told: the current approval wait was notified; cleared when nothing
	// waits any more, so the next wait is notified once.
	told bool
	// turn and seq number this turn's notifications: the key's sequence
	// is "<turn>.<seq>". A batch carried across continue-as-new is
	// notified again under the same key, which the sinks' records drop.
	turn, seq int
	inflight  int // notifications posted and not yet finished
}

// Bounds of what one notification records in history: the inbox and the
// pending query show the whole call.
const (
	notifyMaxArgs  = 4000
	notifyMaxFinal = 2000
)

// notifyWaiting posts a waiting notification when calls start waiting
// for a person: once per wait, with every waiting call (a sub-agent's
// too), p as the shown state has them (driver.show).
func (s *driver) notifyWaiting(ctx workflow.Context, p []PendingApproval) {
	if !s.notes.on {
		return
	}
	if len(p) == 0 {
		s.notes.told = false
		return
	}
	if s.notes.told {
		return
	}
	s.notes.told = true
	ev := s.notifyEvent(ctx, activities.EventWaiting)
	for _, c := range p {
		// Cut where recorded, and the cut said: every rendering of the
		// event shows how much of the call it does not hold.
		args, cut := untrusted.Head(c.Arguments, notifyMaxArgs, 0)
		call := activities.NotifyCall{CallID: c.CallID, ID: c.ID, Digest: c.Digest, Tool: c.Tool, Arguments: args, Reason: c.Reason, Session: c.Session}
		if !cut.None() {
			call.Cut = &cut
		}
		ev.Pending = append(ev.Pending, call)
	}
	// Not awaited: the session goes on waiting while it is posted, and a
	// post that fails after its retries is logged, never fatal. A
	// disconnected context, so an interrupt does not cancel it.
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	f := notifyCall(dctx, ev)
	s.notes.inflight++
	workflow.GoNamed(dctx, "notify:"+ev.Key, func(gctx workflow.Context) {
		defer func() { s.notes.inflight-- }()
		if err := f.Get(gctx, nil); err != nil {
			s.logger(gctx).Warn("notification not delivered", "key", ev.Key, "error", err)
		}
	})
}

// notifyEnd posts how the session ended (err is what it returns) and
// waits until every notification of this run is done, so the last one
// goes out before the workflow closes. A cancelled session, or one that
// continues as new, is not notified here.
func (s *driver) notifyEnd(ctx workflow.Context, res SessionResult, err error) {
	if !s.notes.on {
		return
	}
	event, status, why := activities.EventFailed, res.Status, res.Error
	switch {
	case err != nil:
		status, why = ResultFailed, rootMessage(err)
	case res.Status == ResultCompleted:
		event = activities.EventCompleted
	case res.Status == ResultBudget, res.Status == ResultMaxTurns:
		event = activities.EventBudget
	}
	ev := s.notifyEvent(ctx, event)
	ev.Status, ev.Error = status, why
	ev.FinalText = toolspec.TruncateLabel(res.FinalText, notifyMaxFinal)
	ev.Branch, ev.Changes = res.Branch, res.Changes
	ev.PullRequest, ev.PushError = res.PullRequest, res.PushError
	if werr := notifyCall(ctx, ev).Get(ctx, nil); werr != nil {
		s.logger(ctx).Warn("notification not delivered", "key", ev.Key, "error", werr)
	}
	if werr := workflow.Await(ctx, func() bool { return s.notes.inflight == 0 }); werr != nil {
		s.logger(ctx).Warn("notifications still in flight", "error", werr)
	}
}

// notifyEvent starts an event of this session and gives it its key:
// the workflow id, the first run's id (the same across continue-as-new,
// new when a finished session's id is used again), the event, and its
// sequence number.
func (s *driver) notifyEvent(ctx workflow.Context, event string) activities.NotifyEvent {
	if s.notes.turn != s.Turn {
		s.notes.turn, s.notes.seq = s.Turn, 0
	}
	s.notes.seq++
	info := workflow.GetInfo(ctx)
	// The test environment leaves FirstRunID empty; a server never does.
	first := cmp.Or(info.FirstRunID, info.WorkflowExecution.RunID)
	key := fmt.Sprintf("%s/%s/%s/%d.%d", s.workflowID, first, event, s.Turn, s.notes.seq)
	ev := activities.NotifyEvent{Key: key, Event: event, Session: s.workflowID, Turn: s.Turn, Pending: []activities.NotifyCall{}, Task: s.task()}
	switch {
	case s.isolated() && s.Checkout.Origin != "":
		ev.Repo = s.Checkout.Origin
	case s.isolated():
		ev.Repo = s.Checkout.Repo
	default:
		ev.Workspace = s.workspaceLabel()
	}
	return ev
}

// notifyMaxTask bounds the task a notification carries: its first line,
// enough to tell one session from another.
const notifyMaxTask = 200

// task is what the session was asked, for a person to tell it from
// others: the prompt's first line, or after continue-as-new (which
// carries the prompt in the conversation only) the first user message's.
func (s *driver) task() string {
	prompt := s.in.Prompt
	if strings.TrimSpace(prompt) == "" {
		for _, m := range s.Messages {
			if m.Role == conversation.RoleUser {
				prompt = m.Content
				break
			}
		}
	}
	for _, l := range strings.Split(prompt, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return toolspec.TruncateLabel(l, notifyMaxTask)
		}
	}
	return ""
}
