package workflows

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/session"
)

// Rewind and fork (issue 33). Each finished turn leaves a mark in the
// session's state (session.TurnMark: the conversation then and the
// checkpoint of its files). The rewind update takes a waiting session
// back to one in place: its checkout's files go back to the mark's
// checkpoint on the worker holding it, the conversation to the mark's,
// and the model is told. The fork-input query composes the input of a
// new session that starts from a mark: the same conversation, and a
// checkout of its own made from the checkpoint on the worker that holds
// the original's (starter fork starts it). A session that never rewinds
// or forks issues no command of these.

// Rewind and fork names, part of the contract (docs/CONTRACT.md).
const (
	// UpdateRewind takes the session back to a turn: RewindRequest in,
	// RewindOutcome out.
	UpdateRewind = "rewind"
	// QueryTurns lists the turns the session can go back to (TurnInfo).
	QueryTurns = "turns"
	// QueryForkInput, with a turn number as its argument, returns the
	// SessionInput of a new session forked from that turn.
	QueryForkInput = "fork-input"
)

// RewindRequest is the rewind update's payload: {"turn": 3, "message":
// "..."}. Message, if any, is the person's next message, sent once the
// session is back at the turn; without one the session waits for it.
type RewindRequest struct {
	Turn    int    `json:"turn"`
	Message string `json:"message,omitempty"`
}

// RewindOutcome is what the rewind update returns.
type RewindOutcome struct {
	Turn int `json:"turn"`
	// From is the turn the session was at.
	From int `json:"from"`
	// Checkpoint is the commit the files went back to ("" the base's).
	Checkpoint string `json:"checkpoint,omitempty"`
}

// TurnInfo is one turn the session can go back to (QueryTurns).
type TurnInfo struct {
	Turn       int    `json:"turn"`
	Checkpoint string `json:"checkpoint,omitempty"`
	// Files is false when the turn's files are not known (its checkpoint
	// failed): it can be neither rewound to nor forked from.
	Files bool `json:"files"`
	// Summary is the turn's reply: its text's first line, or its calls.
	Summary string `json:"summary,omitempty"`
}

// ForkFrom is SessionInput.Fork: the session and turn a fork starts from,
// the conversation there, and where the checkpoint of its files is.
type ForkFrom struct {
	Session    string                 `json:"session"`
	Turn       int                    `json:"turn"`
	Head       string                 `json:"head,omitempty"`
	Messages   []conversation.Message `json:"messages,omitempty"`
	Checkpoint string                 `json:"checkpoint,omitempty"`
	// Checkout is the original's: its worker's queue is where the fork's
	// checkout is made, from its repository.
	Checkout *session.Checkout `json:"checkout,omitempty"`
}

// rewinder is the rewind update in flight: the handler hands the request
// to the main loop, which rewinds at its safe point (waiting for input),
// and waits for its outcome.
type rewinder struct {
	req  *RewindRequest
	done bool
	out  RewindOutcome
	err  error
}

// registerRewind registers the turns and fork-input queries and the
// rewind update.
func (s *driver) registerRewind(ctx workflow.Context) error {
	if err := workflow.SetQueryHandler(ctx, QueryTurns, func() ([]TurnInfo, error) {
		return s.turns(), nil
	}); err != nil {
		return fmt.Errorf("register %s query: %w", QueryTurns, err)
	}
	if err := workflow.SetQueryHandler(ctx, QueryForkInput, s.forkInput); err != nil {
		return fmt.Errorf("register %s query: %w", QueryForkInput, err)
	}
	if err := workflow.SetUpdateHandlerWithOptions(ctx, UpdateRewind, s.rewindUpdate, workflow.UpdateHandlerOptions{
		Validator:   s.checkRewind,
		Description: "take the session back to a turn, files included: {\"turn\": N, \"message\": \"...\"}",
	}); err != nil {
		return fmt.Errorf("register %s update: %w", UpdateRewind, err)
	}
	return nil
}

func (s *driver) turns() []TurnInfo {
	out := []TurnInfo{}
	for _, m := range s.Marks {
		out = append(out, TurnInfo{Turn: m.Turn, Checkpoint: m.Checkpoint, Files: !m.Unsaved, Summary: s.TurnSummary(m)})
	}
	return out
}

// checkRewind is the update's validator: a rewind is refused, leaving no
// trace, unless the session waits for a person's message (no call runs
// or waits) and the turn can be gone back to.
func (s *driver) checkRewind(req RewindRequest) error {
	switch {
	case s.rw.req != nil:
		return errors.New("a rewind is already in progress")
	case s.pub.phase != PhaseWaitingInput:
		return fmt.Errorf("the session is %s: a rewind waits until it waits for your message (interrupt it first, then rewind)", s.pub.phase)
	case s.runningJobs():
		return errors.New("background jobs are running in the checkout and could write to it after the rewind: stop them first (ask the model, or interrupt), then rewind")
	}
	_, err := s.Mark(req.Turn, s.in.Checkout != nil)
	return err
}

// runningJobs reports whether a background job may still write to the
// checkout.
func (s *driver) runningJobs() bool {
	for _, j := range s.Jobs {
		if !j.Gone {
			return true
		}
	}
	return false
}

func (s *driver) rewindUpdate(ctx workflow.Context, req RewindRequest) (RewindOutcome, error) {
	if err := s.checkRewind(req); err != nil {
		return RewindOutcome{}, err
	}
	s.rw = rewinder{req: &req}
	if err := workflow.Await(ctx, func() bool { return s.rw.done }); err != nil {
		return RewindOutcome{}, err
	}
	out, err := s.rw.out, s.rw.err
	s.rw = rewinder{}
	return out, err
}

// woken is what a wait for the person's message waits for: the message,
// or a rewind to carry out.
func (s *driver) woken() bool { return len(s.Inbox) > 0 || s.rewinding() }

func (s *driver) rewinding() bool { return s.rw.req != nil && !s.rw.done }

// rewindNow carries out the rewind the update handed over, in the main
// loop: the files first (on the worker holding the checkout), then, once
// they are back, the conversation. A failure changes nothing and is the
// update's error.
func (s *driver) rewindNow(ctx workflow.Context) {
	req := *s.rw.req
	from := s.Turn
	m, err := s.Mark(req.Turn, s.in.Checkout != nil)
	if err == nil {
		err = s.rewindCheckoutCall(ctx, m.Checkpoint)
	}
	if err != nil {
		s.rw.done, s.rw.err = true, fmt.Errorf("rewind to turn %d: %s", req.Turn, rootMessage(err))
		return
	}
	s.RewindTo(m)
	s.Changes = nil // measured again by the next checkpoint
	if req.Message != "" {
		s.Inbox = append(s.Inbox, req.Message)
	}
	s.logger(ctx).Info("rewound", "to", m.Turn, "from", from, "checkpoint", m.Checkpoint)
	s.emit(ctx, eventlog.Event{Kind: eventlog.KindRewound, Turn: m.Turn, Outcome: fmt.Sprintf("from turn %d", from)})
	s.rw.done, s.rw.out = true, RewindOutcome{Turn: m.Turn, From: from, Checkpoint: m.Checkpoint}
	st := s.shown()
	s.publish(ctx, st.visible)
	workflow.SetCurrentDetails(ctx, s.render(st))
}

func orBase(commit string) string {
	if commit == "" {
		return "(the base)"
	}
	return commit
}

// forkInput is the input of a session forked from turn: the original's
// settings, the conversation of the turn's mark, and its checkpoint, in a
// checkout made from the original's repository.
func (s *driver) forkInput(turn int) (SessionInput, error) {
	m, err := s.Mark(turn, s.in.Checkout != nil)
	if err != nil {
		return SessionInput{}, err
	}
	if s.Checkout.Copy {
		return SessionInput{}, errors.New("the session works in a copy of a directory outside git: a fork needs a git repository to make its checkout in")
	}
	in := s.in
	in.Resume, in.Prompt, in.Parent, in.Checkout, in.InPlace = nil, "", nil, nil, false
	in.Base = s.Checkout.Base
	head, msgs := s.Conversation(m)
	from := *s.Checkout
	in.Fork = &ForkFrom{Session: s.workflowID, Turn: turn, Head: head, Messages: msgs, Checkpoint: m.Checkpoint, Checkout: &from}
	return in, nil
}

// seedFork starts a forked session's conversation at the original's
// turn (and its turn count there), its prompt, if any, the next message,
// streamed as a person's message as a new session's prompt is; false
// when the session is no fork.
func (s *driver) seedFork(ctx workflow.Context) bool {
	f := s.in.Fork
	if f == nil {
		return false
	}
	s.Head, s.Messages, s.Turn = f.Head, append([]conversation.Message(nil), f.Messages...), f.Turn
	s.runStartTurn = f.Turn
	if p := s.in.Prompt; p != "" {
		s.Messages = append(s.Messages, conversation.Message{Role: conversation.RoleUser, Content: p})
		s.emit(ctx, eventlog.Event{Kind: eventlog.KindUserMessage, Text: p})
	}
	return true
}

// openCheckoutFor makes the session's checkout: a fork's from the
// original's checkpoint (forkCheckoutCall), any other on any worker.
func (s *driver) openCheckoutFor(ctx workflow.Context) (activities.CheckoutResult, error) {
	if f := s.in.Fork; f != nil && f.Checkout.Isolated() {
		return s.forkCheckoutCall(ctx, f)
	}
	return s.openCheckoutCall(ctx)
}

// carried is the fork's record a continued run keeps: where it came from,
// without the conversation, which the state holds now.
func (f *ForkFrom) carried() *ForkFrom {
	if f == nil {
		return nil
	}
	c := *f
	c.Head, c.Messages = "", nil
	return &c
}
