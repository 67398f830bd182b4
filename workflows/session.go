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

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/toolsearch"
)

// a is used only for method references: the workflow never calls it.
var a *activities.Activities

// session is the state of one AgentSession run. Everything here is
// rebuilt identically on replay.
type session struct {
	in SessionInput
	// reader is the worker's transcript reader, for the conversation
	// query only: from the Sessions value the worker registered, nil if
	// it has none.
	reader   TranscriptReader
	maxTurns int
	specs    map[string]tools.Spec
	toolDefs []activities.ToolDef

	messages []conversation.Message
	inbox    []string // user messages not yet in the conversation
	batch    []*callState
	turn     int
	usage    conversation.Usage
	model    string
	phase    string
	lastErr  string
	// lastErrType is the Temporal error type of lastErr's failure, e.g.
	// ModelContextLengthExceeded, for scripts to branch on.
	lastErrType string
	rejected    []string

	workflowID   string
	defaultModel string   // the worker's LONGRUN_MODEL, from the catalog
	lastTool     string   // "shell: go test ./..." of the latest call started
	visibility   bool     // versionVisibility: keep every search attribute current
	baseline     bool     // versionBaseline: the changes it covers are in without their markers
	published    *visible // what publish last upserted
	publishedAt  time.Time
	throttle     bool // versionVisibilityThrottle: counters alone upsert at most every counterInterval

	engine *permission.Engine // nil: a session recorded before versionPermissions
	guard  GuardianState      // approval "guardian": its cache, streak and log

	planned     bool              // versionBatchPlan: calls run by the batch plan in a bounded pool
	running     int               // calls of the batch holding a pool slot
	guardWrites bool              // versionStaleWrite: tools that change files get the guard
	seen        map[string]string // path -> hash this session last read or wrote (stale-write guard)
	jobs        []jobRoute        // background jobs, in start order, and the worker holding each
	failedJobs  int               // job ids spent on starts that failed

	// The long-running session (versionTranscript): the conversation is
	// head (a transcript reference) plus messages (what came after it).
	transcript   bool
	head         string
	finalText    string // the latest assistant text, wherever it now lives
	run          int    // runs before this one (continue-as-new)
	runStartTurn int    // s.turn when this run started
	compactions  int
	todos        []Todo          // the model's plan (todo tool)
	loaded       map[string]bool // deferred tools found (tool_search) or called: sent from now on

	subagentsTotal   int                          // task calls started in this session
	subagentsRunning int                          // of them, running now
	children         map[string]bool              // sub-agents running now, by session id: only they report waiting calls
	childPending     map[string][]PendingApproval // children's waiting calls, by child session id
	toldParent       string                       // the waiting call ids last sent to the parent
	lastUsage        conversation.Usage           // of the latest model call: what the conversation weighed then
	// overflowCompacted: this turn already compacted after a context-length
	// error; a second one is reported, not compacted again.
	overflowCompacted bool

	// toolsRef names toolsSent, the tool definitions a worker stored for
	// this run (ModelResponse.ToolsRef); not carried across continue-as-new,
	// so each run's history holds the catalog once.
	toolsRef  string
	toolsSent []activities.ToolDef
	// localSetup runs the start-up steps as local activities
	// (versionLocalSetup).
	localSetup bool

	address, namespace string // Sessions.Address and Namespace, for the details' commands

	cancelTurn  workflow.CancelFunc // cancels the running turn (interrupt)
	interrupted bool                // the running turn was interrupted

	notes notifier // notifications to the worker's sinks (notify.go)
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
	s := &session{in: in, maxTurns: in.MaxTurns, model: in.Model, reader: sw.Transcript, address: sw.Address, namespace: sw.Namespace}
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
	s.baseline = workflow.GetVersion(ctx, versionBaseline, workflow.DefaultVersion, 1) >= 1
	s.visibility = s.has(ctx, versionVisibility)
	s.planned = s.has(ctx, versionBatchPlan)
	s.guardWrites = s.has(ctx, versionStaleWrite)
	s.transcript = s.has(ctx, versionTranscript)
	s.throttle = s.visibility && s.has(ctx, versionVisibilityThrottle)
	if s.maxTurns <= 0 {
		s.maxTurns = legacyMaxTurns
		if s.transcript {
			s.maxTurns = DefaultMaxTurns
		}
	}
	if in.Resume != nil {
		s.restore(in.Resume)
	}
	s.setPhase(ctx, PhaseRunning)

	if in.Resume == nil {
		if in.SystemPrompt != "" {
			s.messages = append(s.messages, conversation.Message{Role: conversation.RoleSystem, Content: in.SystemPrompt})
		}
		if strings.TrimSpace(in.Prompt) != "" {
			s.messages = append(s.messages, conversation.Message{Role: conversation.RoleUser, Content: in.Prompt})
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
	s.setPhase(ctx, PhaseDone)
	s.notifyEnd(ctx, res, err)
	return res, err
}

// errSwitch tells AgentSession to continue as new at this safe point.
var errSwitch = errors.New("continue as new")

func (s *session) runLoop(ctx workflow.Context) (SessionResult, error) {
	setupVersion := versionLocalSetupAll
	if s.in.LocalReads || s.in.LocalModel {
		setupVersion = versionLocalSetup // they had it first, under this name
	}
	s.localSetup = s.has(ctx, setupVersion)
	if err := s.loadCatalog(ctx); err != nil {
		return SessionResult{}, err
	}
	if err := s.setupPolicy(ctx); err != nil {
		return SessionResult{}, err
	}
	if r := s.in.Resume; r != nil {
		if r.Permissions != nil && s.engine != nil {
			if err := s.engine.Restore(*r.Permissions); err != nil {
				return SessionResult{}, fmt.Errorf("restore permissions after continue-as-new: %w", err)
			}
		}
		if len(r.Batch) > 0 {
			// The turn was in progress: its calls still wait for a person.
			turnCtx, cancelTurn := workflow.WithCancel(ctx)
			s.cancelTurn, s.interrupted = cancelTurn, false
			err := s.resumeBatch(turnCtx, r.Batch)
			s.cancelTurn = nil
			cancelTurn()
			if done, res, err := s.afterBatch(ctx, err); done {
				return res, err
			}
		} else if len(s.inbox) > 0 {
			s.drainInbox()
		} else if s.modelIsDone() {
			if ok, err := s.waitForInput(ctx); err != nil || !ok {
				return s.result(ResultCompleted, ""), err
			}
		}
	} else if !s.endsWithUser() {
		// No prompt: wait for the first user message like an idle session.
		if ok, err := s.waitForInput(ctx); err != nil || !ok {
			return s.result(ResultCompleted, ""), err
		}
	}
	for {
		if s.turn >= s.maxTurns {
			return s.result(ResultMaxTurns, fmt.Sprintf("stopped after %d model turns (max_turns)", s.maxTurns)), nil
		}
		if why := s.overBudget(); why != "" {
			return s.result(ResultBudget, why), nil
		}
		if s.wantSwitch(ctx) {
			return SessionResult{}, errSwitch
		}
		if err := s.compactIfNeeded(ctx); err != nil {
			return SessionResult{}, err
		}
		s.turn++
		s.logger(ctx).Info("turn", "model", s.model, "messages", len(s.messages))
		// Each turn runs under its own context so an interrupt can stop it
		// without ending the session.
		turnCtx, cancelTurn := workflow.WithCancel(ctx)
		s.cancelTurn, s.interrupted = cancelTurn, false
		resp, err := s.callModel(turnCtx)
		if err != nil {
			if ctx.Err() != nil {
				return SessionResult{}, err
			}
			if s.interrupted {
				if ok, werr := s.waitAfterInterrupt(ctx); werr != nil || !ok {
					return s.result(ResultCompleted, ""), werr
				}
				continue
			}
			if s.compactOnOverflow(ctx, err) {
				s.turn-- // the turn did not happen; it runs again on the smaller conversation
				continue
			}
			s.lastErr, s.lastErrType = modelFailure(s.turn, err)
			s.logger(ctx).Error("model call failed", "error", err)
			// The conversation is intact; an interactive session waits for
			// the person to say what to do (a new message retries).
			if ok, werr := s.waitForInput(ctx); werr != nil || !ok {
				return s.result(ResultFailed, s.lastErr), werr
			}
			continue
		}
		s.cancelTurn = nil
		s.appendReply(resp)
		if len(resp.Message.ToolCalls) > 0 {
			s.cancelTurn = cancelTurn
			err := s.runBatch(turnCtx, resp.Message.ToolCalls)
			s.cancelTurn = nil
			cancelTurn()
			if done, res, err := s.afterBatch(ctx, err); done {
				return res, err
			}
			continue
		}
		if len(s.inbox) > 0 {
			s.drainInbox()
			continue
		}
		ok, err := s.waitForInput(ctx)
		if err != nil {
			return SessionResult{}, err
		}
		if !ok {
			return s.result(ResultCompleted, ""), nil
		}
	}
}

// afterBatch handles how a batch ended: done reports that the session
// ends (or switches runs) with res and err.
func (s *session) afterBatch(ctx workflow.Context, err error) (done bool, res SessionResult, _ error) {
	if errors.Is(err, errSwitch) {
		return true, SessionResult{}, err
	}
	if err != nil && ctx.Err() != nil {
		return true, SessionResult{}, err
	}
	// An interrupt may land after every call already finished, so the
	// flag, not the error, decides.
	if s.interrupted {
		if ok, werr := s.waitAfterInterrupt(ctx); werr != nil || !ok {
			return true, s.result(ResultCompleted, ""), werr
		}
		return false, SessionResult{}, nil
	}
	if err != nil {
		return true, SessionResult{}, err
	}
	s.drainInbox()
	return false, SessionResult{}, nil
}

// appendReply adds the model's reply. With a transcript, everything the
// model was sent is now stored under resp.Head, so only the reply stays
// inline.
func (s *session) appendReply(resp activities.ModelResponse) {
	if s.transcript && resp.Head != "" {
		s.head, s.messages = resp.Head, nil
	}
	s.messages = append(s.messages, resp.Message)
	if resp.Message.Content != "" {
		s.finalText = resp.Message.Content
	}
}

// modelIsDone reports whether the conversation ends with the model's
// answer, so the next turn needs a user message; after tool results or a
// user message the model speaks next.
func (s *session) modelIsDone() bool {
	if len(s.messages) == 0 {
		return s.head == ""
	}
	last := s.messages[len(s.messages)-1]
	return last.Role == conversation.RoleAssistant && len(last.ToolCalls) == 0
}

func (s *session) endsWithUser() bool {
	return len(s.messages) > 0 && s.messages[len(s.messages)-1].Role == conversation.RoleUser
}

func (s *session) loadCatalog(ctx workflow.Context) error {
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 5},
		Summary:             "list tools",
	})
	var cat activities.Catalog
	// Both start-up steps only read the worker's configuration and may run
	// again, so they may be local (s.localSetup).
	if err := execute(actx, s.localSetup, a.ListTools).Get(ctx, &cat); err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	s.specs, s.defaultModel = map[string]tools.Spec{}, cat.DefaultModel
	specs := cat.Tools
	if s.transcript {
		// The session's own tools, answered in the workflow.
		specs = append(append([]tools.Spec(nil), specs...), todoSpec())
		if hasDeferred(specs) {
			specs = append(specs, toolsearch.SearchSpec())
		}
		if s.depth() < MaxSubagentDepth {
			specs = append(specs, taskSpec())
		}
	}
	for _, sp := range specs { // a slice, sorted by the activity: stable order
		// A catalog recorded before tools declared their call metadata
		// is read as the session read it then (tools.Declared).
		sp = tools.Declared(sp)
		s.specs[sp.Name] = sp
		s.toolDefs = append(s.toolDefs, activities.ToolDef{Name: sp.Name, Description: sp.Description, Parameters: sp.Parameters})
	}
	return nil
}

func (s *session) callModel(ctx workflow.Context) (activities.ModelResponse, error) {
	label := s.model
	if label == "" {
		label = "default model"
	}
	actx := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		// CallModel heartbeats every second from a ticker, streaming or
		// not (the workflow cannot know which the worker does), so this
		// bounds how long a lost worker holds the turn, not how long the
		// model may think before its first token. It also sets how often
		// the SDK sends the partial text to the server (80% of it), so a
		// person watching sees the reply grow every eight seconds.
		HeartbeatTimeout: 10 * activities.HeartbeatEvery,
		RetryPolicy:      modelRetryPolicy(),
		Summary:          fmt.Sprintf("model: %s (turn %d)", label, s.turn),
	})
	defs := s.toolDefs
	if s.transcript {
		defs = s.exposedDefs()
	}
	req := activities.ModelRequest{Model: s.in.Model, Head: s.head, Messages: s.messages, Tools: defs, Turn: s.turn}
	if s.toolsRef != "" && slices.EqualFunc(defs, s.toolsSent, sameDef) {
		// The worker stored these very definitions for an earlier turn of
		// this run: name them instead of copying them into the history.
		req.Tools, req.ToolsRef = nil, s.toolsRef
	}
	if r := s.planReminder(); r != nil {
		req.Reminders = []conversation.Message{*r}
	}
	var resp activities.ModelResponse
	if err := execute(actx, s.in.LocalModel, a.CallModel, req).Get(ctx, &resp); err != nil {
		return resp, err
	}
	if resp.ToolsRef != "" && req.ToolsRef == "" {
		s.toolsRef, s.toolsSent = resp.ToolsRef, defs
	}
	s.usage = s.usage.Add(resp.Usage)
	s.lastUsage, s.overflowCompacted = resp.Usage, false
	if resp.Model != "" {
		s.model = resp.Model
	}
	return resp, nil
}

// versionLocalSetup marks sessions with local_reads or local_model whose
// start-up steps (the tool catalog, the workspace's permissions) run as
// local activities: the run's first model call then goes out with the
// first workflow task instead of the third. Asked only when an option is
// set, so other sessions' histories are unchanged.
const versionLocalSetup = "local-setup-v1"

// versionLocalSetupAll extends it to every new session: the two steps only
// read the worker's configuration, so running them inside the first
// workflow task is safe for all, and saves two round trips at the start
// of every run (continue-as-new, sub-agents).
const versionLocalSetupAll = "local-setup-all-v1"

// execute runs fn with actx's activity options: as an activity, or, when
// local, as a local activity with the same timeout, retry policy and
// summary (a local activity has no heartbeat). The start-up steps, the
// model call and the read-only tools choose with it.
func execute(actx workflow.Context, local bool, fn any, args ...any) workflow.Future {
	if !local {
		return workflow.ExecuteActivity(actx, fn, args...)
	}
	o := workflow.GetActivityOptions(actx)
	lctx := workflow.WithLocalActivityOptions(actx, workflow.LocalActivityOptions{
		StartToCloseTimeout: o.StartToCloseTimeout, RetryPolicy: o.RetryPolicy, Summary: o.Summary,
	})
	return workflow.ExecuteLocalActivity(lctx, fn, args...)
}

// modelRetryPolicy is how a model call is retried, as an activity or a
// local one.
func modelRetryPolicy() *temporal.RetryPolicy {
	return &temporal.RetryPolicy{
		InitialInterval:    time.Second,
		BackoffCoefficient: 2,
		MaximumInterval:    time.Minute,
		// About five minutes of a provider's 429s and 5xx before the
		// turn gives up: a background session should ride out a short
		// outage, not end on the first blip.
		MaximumAttempts: 10,
		NonRetryableErrorTypes: []string{
			activities.ErrTypeModelRejected, activities.ErrTypeNoModel,
			activities.ErrTypeContextLength, activities.ErrTypeModelBadReply,
		},
	}
}

// sameDef compares two tool definitions, parameters byte for byte.
func sameDef(x, y activities.ToolDef) bool {
	return x.Name == y.Name && x.Description == y.Description && bytes.Equal(x.Parameters, y.Parameters)
}

// waitForInput waits for a user message, up to the idle timeout. It
// returns false when the session should end (no idle timeout, or it
// expired).
func (s *session) waitForInput(ctx workflow.Context) (bool, error) {
	if len(s.inbox) > 0 {
		s.drainInbox()
		return true, nil
	}
	idle := time.Duration(s.in.IdleTimeout)
	if idle < 0 && s.has(ctx, versionIdleForever) {
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
	}, func() bool { return len(s.inbox) > 0 })
	if err != nil {
		return false, err
	}
	if !ok {
		return false, nil
	}
	s.setPhase(ctx, PhaseRunning)
	s.drainInbox()
	return true, nil
}

// versionIdleForever marks sessions that read a negative idle_timeout
// ("forever") as waiting with no timer; before it, a negative one
// completed the session like 0. Asked only when the timeout is negative,
// so other sessions' histories do not change.
const versionIdleForever = "idle-forever-v1"

// overBudget says why the session must not call the model again, or ""
// while it is within token_budget and cost_budget_usd. The check runs
// before a call, so a session stops at the first call past its budget,
// never in the middle of a turn's tool calls.
func (s *session) overBudget() string {
	if b := s.in.TokenBudget; b > 0 && s.usage.TotalTokens >= b {
		return fmt.Sprintf("stopped after %d model turns: %d tokens used, token_budget is %d", s.turn, s.usage.TotalTokens, b)
	}
	if b := s.in.CostBudgetUSD; b > 0 && s.usage.CostUSD >= b {
		return fmt.Sprintf("stopped after %d model turns: $%.4f spent, cost_budget_usd is $%.4f", s.turn, s.usage.CostUSD, b)
	}
	return ""
}

// waitAfterInterrupt returns the session to waiting for input after the
// user stopped a turn. The person is there, so with no idle timeout it
// waits until they speak or cancel.
func (s *session) waitAfterInterrupt(ctx workflow.Context) (bool, error) {
	if len(s.inbox) > 0 {
		s.drainInbox()
		return true, nil
	}
	if s.in.IdleTimeout > 0 {
		return s.waitForInput(ctx)
	}
	return s.awaitMessage(ctx)
}

// awaitMessage waits, with no timer, until a user message arrives (or the
// session is cancelled) and takes it in.
func (s *session) awaitMessage(ctx workflow.Context) (bool, error) {
	s.setPhase(ctx, PhaseWaitingInput)
	if err := workflow.Await(ctx, func() bool { return len(s.inbox) > 0 }); err != nil {
		return false, err
	}
	s.setPhase(ctx, PhaseRunning)
	s.drainInbox()
	return true, nil
}

func (s *session) drainInbox() {
	for _, t := range s.inbox {
		s.messages = append(s.messages, conversation.Message{Role: conversation.RoleUser, Content: t})
	}
	s.inbox = nil
}

func (s *session) result(status, errText string) SessionResult {
	final := s.finalText
	for i := len(s.messages) - 1; i >= 0 && final == ""; i-- {
		if m := s.messages[i]; m.Role == conversation.RoleAssistant && m.Content != "" {
			final = m.Content
		}
	}
	return SessionResult{Status: status, FinalText: final, Turns: s.turn, Usage: s.usage, Error: errText}
}

// setPhase records the phase for the status query, the search attribute
// and the UI's current details.
func (s *session) setPhase(ctx workflow.Context, phase string) {
	changed := phase != s.phase
	s.phase = phase
	switch {
	case s.visibility:
		s.publish(ctx)
	case changed:
		if err := workflow.UpsertTypedSearchAttributes(ctx, PhaseKey.ValueSet(phase)); err != nil {
			s.logger(ctx).Warn("upsert LongrunPhase", "error", err)
		}
	}
	workflow.SetCurrentDetails(ctx, s.details())
	s.tellParent(ctx)
	s.notifyWaiting(ctx)
}

func (s *session) status() Status {
	return Status{
		Phase: s.phase, Turn: s.turn, MaxTurns: s.maxTurns, Model: s.model, Usage: s.usage,
		PendingApprovals: len(s.pending()), LastError: s.lastErr, LastErrorType: s.lastErrType, Rejected: s.rejected,
		Guardian: s.guard.Log,
	}
}

// logger is the replay-safe workflow logger (it drops lines while
// replaying) with the session and turn on every line, so an operator can
// follow one session through a worker's JSON logs.
func (s *session) logger(ctx workflow.Context) log.Logger {
	return log.With(workflow.GetLogger(ctx), "session", s.workflowID, "turn", s.turn)
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

// truncate cuts s to n bytes on a rune boundary (tools.TruncateLabel).
func truncate(s string, n int) string { return tools.TruncateLabel(s, n) }
