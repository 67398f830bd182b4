package workflows

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	activities "github.com/longrun/longrun/activities/contract" // the activities' contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/toolspec"
)

// driver runs one AgentSession run: the session's state (session.State,
// which is also what continue-as-new carries) and what only this run
// holds. Everything here is rebuilt identically on replay.
type driver struct {
	session.State
	in SessionInput
	// reader is the worker's transcript reader, for the conversation
	// query only: from the Sessions value the worker registered, nil if
	// it has none.
	reader TranscriptReader
	limits session.Limits
	cat    toolCatalog // the session's tools (catalog.go)

	batch *session.Batch
	pub   publisher // what the session last showed of itself (visibility.go)

	workflowID string
	lastTool   string // "shell: go test ./..." of the latest call started

	engine *permission.Engine
	guard  GuardianState // approval "guardian": its cache, streak and log (guardian.go)

	missed localMiss // the last local call that found the checkout elsewhere (here.go)

	running      int // calls of the batch holding a pool slot
	runStartTurn int // s.Turn when this run started

	kids subagents // the sub-agents running now and what they report (subagent.go)

	lastUsage conversation.Usage // of the latest model call: what the conversation weighed then
	// overflowCompacted: this turn already compacted after a context-length
	// error; a second one is reported, not compacted again.
	overflowCompacted bool

	address, namespace string // Sessions.Address and Namespace, for the details' commands

	cancelTurn  workflow.CancelFunc // cancels the running turn (interrupt)
	interrupted bool                // the running turn was interrupted

	notes notifier // notifications to the worker's sinks (notify.go)
	// loggedPhase is the phase the event stream last said (setPhase).
	loggedPhase string
	rw          rewinder // the rewind update in flight (rewind.go)
}

// Sessions is the AgentSession workflow with what it needs from the worker
// that runs it. The worker registers its method under WorkflowType; the
// dependencies live in the value, not in package variables, so two
// workers (or two tests) in one process each keep their own. The zero
// value is a worker without a transcript store.
type Sessions struct {
	// Transcript, if set, lets the conversation query show the full text of
	// a session whose older messages are held by reference. It is the one
	// place workflow code reads outside state, and it is safe: a query
	// changes nothing and issues no command, so it cannot break a replay,
	// and the store is content-addressed, so a reference always reads the
	// same bytes.
	Transcript TranscriptReader
	// Address and Namespace are how the worker reaches Temporal. The
	// details the Web UI shows put them in the commands they print when
	// they are not the defaults, so a pasted command reaches this server.
	// They are shown, never recorded: no command depends on them.
	Address, Namespace string
}

// AgentSession is the durable agent session: a loop of model turns and the
// tool calls each asks for, with approvals by signal. Register it as
// w.RegisterWorkflowWithOptions(sw.AgentSession,
// workflow.RegisterOptions{Name: WorkflowType}); the name, not the Go
// function, is what histories, children and continue-as-new refer to.
func (sw *Sessions) AgentSession(ctx workflow.Context, in SessionInput) (SessionResult, error) {
	s := &driver{in: in, reader: sw.Transcript, limits: in.limits(), address: sw.Address, namespace: sw.Namespace}
	s.Model = in.Model
	switch in.Approval {
	case "", ApproverPerson, ApproverNone, ApproverGuardian:
	default:
		return SessionResult{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("approval %q: want %q (a person decides), %q (a reviewer model first, then a person) or %q (unattended: ask becomes deny)", in.Approval, ApproverPerson, ApproverGuardian, ApproverNone),
			"InvalidSessionInput", nil)
	}
	s.workflowID = workflow.GetInfo(ctx).WorkflowExecution.ID
	if err := s.registerHandlers(ctx); err != nil {
		return SessionResult{}, err
	}
	if in.Resume != nil {
		s.restore(in.Resume)
		// A new run starts "running" for the search attributes, but
		// for the event stream the session is where it was: a batch
		// carried waiting for a person goes on waiting, and a client
		// must not see it flicker to running and back.
		s.loggedPhase = PhaseRunning
	}
	s.setPhase(ctx, PhaseRunning)
	if p := s.Events.LastPhase(); in.Resume != nil && p != "" {
		s.loggedPhase = p
	}

	if in.Resume == nil && !s.seedFork(ctx) {
		if in.SystemPrompt != "" {
			s.Messages = append(s.Messages, conversation.Message{Role: conversation.RoleSystem, Content: in.SystemPrompt})
		}
		if strings.TrimSpace(in.Prompt) != "" {
			s.Messages = append(s.Messages, conversation.Message{Role: conversation.RoleUser, Content: in.Prompt})
			s.emit(ctx, eventlog.Event{Kind: eventlog.KindUserMessage, Text: in.Prompt})
		}
	}

	res, err := s.runLoop(ctx)
	if errors.Is(err, errSwitch) {
		return SessionResult{}, s.continueAsNew(ctx)
	}
	if err != nil && temporal.IsCanceledError(err) && ctx.Err() != nil {
		return SessionResult{}, s.closeCancelled(ctx)
	}
	s.killJobs(ctx)
	s.closeCheckout(ctx, &res)
	s.setPhase(ctx, PhaseDone)
	s.emitEnded(ctx, res, err)
	s.notifyEnd(ctx, res, err)
	return res, err
}

// limits are the input's bounds for the session core.
func (in SessionInput) limits() session.Limits {
	return session.Limits{
		MaxTurns: in.MaxTurns, TokenBudget: in.TokenBudget, CostBudgetUSD: in.CostBudgetUSD,
		MaxParallelTools: in.MaxParallelTools, ContinueAsNewTurns: in.ContinueAsNewTurns,
		ContextWindow: in.ContextWindow, CompactKeepTurns: in.CompactKeepTurns,
	}
}

// errSwitch tells AgentSession to continue as new at this safe point.
var errSwitch = errors.New("continue as new")

// appendReply adds the model's reply. With a transcript, everything the
// model was sent is now stored under resp.Head, so only the reply stays
// inline.
func (s *driver) appendReply(resp activities.ModelResponse) {
	if resp.Head != "" {
		s.Head, s.Messages = resp.Head, nil
	}
	s.Messages = append(s.Messages, resp.Message)
	if resp.Message.Content != "" {
		s.FinalText = resp.Message.Content
	}
}

// modelIsDone reports whether the conversation ends with the model's
// answer, so the next turn needs a user message; after tool results or a
// user message the model speaks next.
func (s *driver) modelIsDone() bool {
	if len(s.Messages) == 0 {
		return s.Head == ""
	}
	last := s.Messages[len(s.Messages)-1]
	return last.Role == conversation.RoleAssistant && len(last.ToolCalls) == 0
}

func (s *driver) endsWithUser() bool {
	return len(s.Messages) > 0 && s.Messages[len(s.Messages)-1].Role == conversation.RoleUser
}

// loadCatalog reads the worker's tools and adds the session's own
// (selfTools) that it offers; those and the job tools are answered by the
// session (driver.self).
func (s *driver) loadCatalog(ctx workflow.Context) error {
	cat, err := s.listTools(ctx)
	if err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	s.cat.specs, s.cat.self, s.cat.defaultModel = map[string]toolspec.Spec{}, map[string]answerer{}, cat.DefaultModel
	specs := append([]toolspec.Spec(nil), cat.Tools...)
	for _, t := range selfTools {
		if t.offer(s, specs) {
			sp := t.spec()
			specs = append(specs, sp)
			s.cat.self[sp.Name] = t
		}
	}
	for _, sp := range specs { // a slice, sorted by the activity: stable order
		if sp.Job != "" {
			s.cat.self[sp.Name] = jobTool{}
		}
		s.cat.specs[sp.Name] = sp
		s.cat.toolDefs = append(s.cat.toolDefs, activities.ToolDef{Name: sp.Name, Description: sp.Description, Parameters: sp.Parameters})
	}
	return nil
}

// callModel sends the conversation and the tools the model may see, and
// counts what the reply cost.
func (s *driver) callModel(ctx workflow.Context) (activities.ModelResponse, error) {
	defs := s.exposedDefs()
	req := activities.ModelRequest{Model: s.in.Model, Head: s.Head, Messages: s.Messages, Tools: defs, Turn: s.Turn}
	if s.cat.toolsRef != "" && slices.EqualFunc(defs, s.cat.toolsSent, sameDef) {
		// The worker stored these very definitions for an earlier turn of
		// this run: name them instead of copying them into the history.
		req.Tools, req.ToolsRef = nil, s.cat.toolsRef
	}
	if r := session.PlanReminder(s.Todos); r != nil {
		req.Reminders = []conversation.Message{*r}
	}
	resp, err := s.modelCall(ctx, req)
	if err != nil {
		return resp, err
	}
	if resp.ToolsRef != "" && req.ToolsRef == "" {
		s.cat.toolsRef, s.cat.toolsSent = resp.ToolsRef, defs
	}
	s.Usage = s.Usage.Add(resp.Usage)
	s.lastUsage, s.overflowCompacted = resp.Usage, false
	if resp.Model != "" {
		s.Model = resp.Model
	}
	return resp, nil
}

// sameDef compares two tool definitions, parameters byte for byte.
func sameDef(x, y activities.ToolDef) bool {
	return x.Name == y.Name && x.Description == y.Description && bytes.Equal(x.Parameters, y.Parameters)
}

// waitForInput waits for a user message, up to the idle timeout. It
// returns false when the session should end (no idle timeout, or it
// expired).
func (s *driver) waitForInput(ctx workflow.Context) (bool, error) {
	if len(s.Inbox) > 0 {
		s.drainInbox(ctx)
		return true, nil
	}
	idle := time.Duration(s.in.IdleTimeout)
	if idle < 0 {
		// "forever": a background agent's person may answer in a week.
		return s.awaitMessage(ctx)
	}
	if idle <= 0 {
		return false, nil
	}
	s.setPhase(ctx, PhaseWaitingInput)
	ok, err := workflow.AwaitWithOptions(ctx, workflow.AwaitOptions{
		Timeout:      idle,
		TimerOptions: workflow.TimerOptions{Summary: fmt.Sprintf("idle: waiting %s for a user message", idle)},
	}, s.woken)
	if err != nil {
		return false, err
	}
	if !ok {
		return false, nil
	}
	if s.rewinding() {
		s.rewindNow(ctx)
		return s.waitForInput(ctx)
	}
	s.setPhase(ctx, PhaseRunning)
	s.drainInbox(ctx)
	return true, nil
}

// waitAfterInterrupt returns the session to waiting for input after the
// user stopped a turn. The person is there, so with no idle timeout it
// waits until they speak or cancel.
func (s *driver) waitAfterInterrupt(ctx workflow.Context) (bool, error) {
	if len(s.Inbox) > 0 {
		s.drainInbox(ctx)
		return true, nil
	}
	if s.in.IdleTimeout > 0 {
		return s.waitForInput(ctx)
	}
	return s.awaitMessage(ctx)
}

// awaitMessage waits, with no timer, until a user message arrives (or the
// session is cancelled) and takes it in.
func (s *driver) awaitMessage(ctx workflow.Context) (bool, error) {
	s.setPhase(ctx, PhaseWaitingInput)
	if err := workflow.Await(ctx, s.woken); err != nil {
		return false, err
	}
	if s.rewinding() {
		s.rewindNow(ctx)
		return s.awaitMessage(ctx)
	}
	s.setPhase(ctx, PhaseRunning)
	s.drainInbox(ctx)
	return true, nil
}

func (s *driver) drainInbox(ctx workflow.Context) {
	for _, t := range s.Inbox {
		s.Messages = append(s.Messages, conversation.Message{Role: conversation.RoleUser, Content: t})
		s.emit(ctx, eventlog.Event{Kind: eventlog.KindUserMessage, Text: t})
	}
	s.Inbox = nil
}

func (s *driver) result(status, errText string) SessionResult {
	final := s.FinalText
	for i := len(s.Messages) - 1; i >= 0 && final == ""; i-- {
		if m := s.Messages[i]; m.Role == conversation.RoleAssistant && m.Content != "" {
			final = m.Content
		}
	}
	return SessionResult{Status: status, FinalText: final, Turns: s.Turn, Usage: s.Usage, Error: errText}
}

// logger is the replay-safe workflow logger (it drops lines while
// replaying) with the session and turn on every line, so an operator can
// follow one session through a worker's JSON logs.
func (s *driver) logger(ctx workflow.Context) log.Logger {
	return log.With(workflow.GetLogger(ctx), "session", s.workflowID, "turn", s.Turn)
}

// modelFailure words a failed model call for status and the result, and
// gives its error type. A context-length error says what a person can do,
// since retrying the same conversation cannot help.
func modelFailure(turn int, err error) (msg, typ string) {
	var appErr *temporal.ApplicationError
	if errors.As(err, &appErr) {
		typ = appErr.Type()
	}
	switch typ {
	case activities.ErrTypeContextLength:
		return fmt.Sprintf("turn %d: the conversation no longer fits the model's context window (%s): %s. "+
			"Send a shorter message, or start a new session with a model that has a larger window.", turn, typ, rootMessage(err)), typ
	case activities.ErrTypeModelRejected, activities.ErrTypeModelBadReply, activities.ErrTypeNoModel, activities.ErrTypeModelReplyTooLarge:
		return fmt.Sprintf("turn %d: model call failed (%s, not retried): %s", turn, typ, rootMessage(err)), typ
	}
	return fmt.Sprintf("turn %d: model call failed after retries: %s", turn, rootMessage(err)), typ
}

func rootMessage(err error) string {
	var appErr *temporal.ApplicationError
	for e := err; e != nil; {
		if ae, ok := e.(*temporal.ApplicationError); ok {
			appErr = ae
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			break
		}
		e = u.Unwrap()
	}
	if appErr != nil {
		return appErr.Message()
	}
	return err.Error()
}

// truncate cuts s to n bytes on a rune boundary (toolspec.TruncateLabel).
func truncate(s string, n int) string { return toolspec.TruncateLabel(s, n) }
