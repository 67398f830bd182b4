package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/follow"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// defaultPollInterval is how often watch asks. Queries are cheap reads of
// worker memory; half a second feels live without loading the server.
const defaultPollInterval = 500 * time.Millisecond

// watchPollTimeout bounds one round of queries so a missing worker shows up
// as a warning instead of a frozen screen.
const watchPollTimeout = 5 * time.Second

// event is one line of `watch --json`: a script reads them as they come.
type event struct {
	Type      string                      `json:"type,omitempty"` // started, message, approval, outcome
	SessionID string                      `json:"session_id,omitempty"`
	RunID     string                      `json:"run_id,omitempty"`
	Index     *int                        `json:"index,omitempty"` // position of a message in the conversation
	Message   *conversation.Message       `json:"message,omitempty"`
	Approval  *workflows.PendingApproval  `json:"approval,omitempty"`
	Guardian  *workflows.GuardianDecision `json:"guardian,omitempty"` // type guardian: its decision on a call
	Outcome   string                      `json:"outcome,omitempty"`  // completed, cancelled, terminated, timed-out, failed
	// Event is one event of the session's stream (type event,
	// docs/EVENTS.md): the same a `longrun events` line holds.
	Event  *follow.Event            `json:"event,omitempty"`
	Result *workflows.SessionResult `json:"result,omitempty"`
	Error  string                   `json:"error,omitempty"`
}

func (a *app) printEvent(e event) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // shell commands in arguments stay readable
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("encode event: %w", err)
	}
	_, err := a.stdout.Write(untrusted.JSON(b.Bytes())) // hidden characters escaped, as printJSON
	return err
}

// watchState is what watch has already shown.
type watchState struct {
	session   string
	shownMsgs int
	shownApp  map[string]bool
	lastWarn  string
	spin      spinner
	// noPrompt is set once stdin has ended: later approvals are only
	// announced.
	noPrompt bool
	// lastText is the text of the last assistant message shown: the
	// outcome does not print it a second time as the final text.
	lastText string
	// shownGuardian are the guardian decisions shown, by turn/call id.
	shownGuardian map[string]bool
	// lostSince is when the server stopped answering; zero while it
	// answers. Once it is back every call still pending is asked again.
	lostSince time.Time
	// backoff is the pause between tries while the server is lost.
	backoff time.Duration
	// idle is set while no worker polls the session's queue: queries
	// are not sent (they would only time out).
	idle bool
	// events reads the session's event stream (package follow): with
	// --json each event is a line of type event, and on a terminal the
	// spinner shows the reply as the model writes it (partial).
	events *follow.Reader
	// eventsOff is set once the session cannot give its events (a
	// worker from before the events query): watch goes on without.
	eventsOff bool
	// eventsSaid is set once watch said it watches without the stream.
	eventsSaid bool
	// partial is the model's reply so far while a turn streams.
	partial string
}

// maxWatchBackoff is the longest pause between tries while the server is
// lost: a restart is noticed within this.
const maxWatchBackoff = 5 * time.Second

// warn reports a transient failure once, not every half second.
func (a *app) warn(w *watchState, err error) {
	if msg := err.Error(); msg != w.lastWarn {
		w.lastWarn = msg
		a.clearSpin(w)
		fmt.Fprintf(a.stderr, "%s watch: %s (still watching)\n", progName, oneLine(msg))
	}
}

// watch prints the conversation and approval requests as they appear, until
// the session closes, then its outcome. Queries need a worker; describe does
// not, so closing is noticed even when no worker is up.
func (a *app) watch(ctx context.Context, c sessionClient, session string, interval time.Duration) error {
	w := &watchState{session: session, shownApp: map[string]bool{},
		events: follow.NewReader(c, session, 0, follow.Options{Timeout: watchPollTimeout, DataConverter: a.dataConverter(), SubAgents: true})}
	a.ui.more = fullHint("conversation", session)
	for {
		dctx, cancel := context.WithTimeout(ctx, watchPollTimeout)
		desc, err := c.DescribeWorkflowExecution(dctx, session, "")
		cancel()
		switch {
		case ctx.Err() != nil:
			a.clearSpin(w)
			return a.interrupted(session)
		case err != nil:
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				return sessionError(err, "describe", session, a.cfg.Namespace)
			}
			a.lost(w, err, interval)
		default:
			a.regained(w)
			info := desc.GetWorkflowExecutionInfo()
			st := info.GetStatus()
			open := st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || st == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW
			if open && a.noListener(ctx, c, w, desc.GetExecutionConfig().GetTaskQueue().GetName()) {
				break // no worker to answer a query: said once, asked again next round
			}
			// Poll after describing: once closed, this last round (answered
			// by replay) shows the final messages before the outcome.
			if open {
				a.pollEvents(ctx, w, desc)
			} else {
				a.drainEvents(ctx, w, desc)
			}
			a.poll(ctx, c, w)
			if !open {
				a.clearSpin(w)
				return a.outcome(ctx, c, session, info.GetExecution().GetRunId(), true, w.lastText)
			}
		}
		wait := interval
		if !w.lostSince.IsZero() {
			wait = w.backoff
		}
		if !a.pause(ctx, w, wait) {
			a.clearSpin(w)
			return a.interrupted(session)
		}
	}
}

// lost notes that the server did not answer: said once, with the
// address, then tried again with a growing pause.
func (a *app) lost(w *watchState, err error, interval time.Duration) {
	if w.lostSince.IsZero() {
		w.lostSince, w.backoff = time.Now(), interval
		a.clearSpin(w)
		w.lastWarn = ""
		fmt.Fprintf(a.stderr, "%s watch: lost the server at %s (%s); trying again until it is back\n", progName, a.cfg.Address, oneLine(shortErr(err)))
		return
	}
	w.backoff = min(2*w.backoff, maxWatchBackoff)
}

// regained notes that the server answers again after it was lost, and
// forgets which calls were asked: every call still pending is asked
// again, since an answer typed meanwhile may not have been recorded.
func (a *app) regained(w *watchState) {
	if w.lostSince.IsZero() {
		return
	}
	a.clearSpin(w)
	fmt.Fprintf(a.stderr, "%s watch: the server at %s is back (after %s); asking again about every call still pending\n",
		progName, a.cfg.Address, time.Since(w.lostSince).Round(time.Second))
	w.lostSince, w.lastWarn = time.Time{}, ""
	w.shownApp = map[string]bool{}
}

// noListener reports whether no worker polls the session's queue tq,
// saying so once: queries would only time out.
func (a *app) noListener(ctx context.Context, c sessionClient, w *watchState, tq string) bool {
	if tq == "" {
		tq = a.cfg.TaskQueue
	}
	pctx, cancel := context.WithTimeout(ctx, watchPollTimeout)
	defer cancel()
	if noPoller(pctx, c, tq) == "" {
		if w.idle {
			w.idle = false
			a.clearSpin(w)
			fmt.Fprintf(a.stderr, "%s watch: a worker polls task queue %s again\n", progName, tq)
		}
		return false
	}
	if !w.idle {
		w.idle = true
		a.clearSpin(w)
		fmt.Fprintf(a.stderr, "%s watch: %s; the session waits (durably), and so does watch\n", progName, a.nobodyListens(tq))
	}
	return true
}

func (a *app) interrupted(session string) error {
	return exitError{exitInterrupted, fmt.Sprintf("stopped watching; %s keeps running (%s watch %s)", session, progName, shellQuote(session))}
}

// poll shows what is new since the last round, prompts for new approvals
// when interactive, and on a terminal sets the spinner to what the session
// is busy with.
func (a *app) poll(ctx context.Context, c sessionClient, w *watchState) {
	qctx, cancel := context.WithTimeout(ctx, watchPollTimeout)
	defer cancel()
	// Pending first: the message asking for a call is in the conversation
	// before the call waits, so reading in this order never announces an
	// approval ahead of the call it is for.
	pending, err := a.queryPending(qctx, c, w.session)
	if err != nil {
		if ctx.Err() == nil {
			a.warn(w, err)
		}
		return
	}
	msgs, err := a.queryConversation(qctx, c, w.session)
	if err != nil {
		if ctx.Err() == nil {
			a.warn(w, err)
		}
		return
	}
	if len(msgs) < w.shownMsgs {
		// A new run after continue-as-new may carry a shorter history;
		// keep following from where it is rather than repeating it.
		w.shownMsgs = len(msgs)
	}
	printed := len(msgs) > w.shownMsgs
	if printed && !a.cfg.JSON {
		a.clearSpin(w)
	}
	results := false // a tool result is new: the guardian may have decided
	for i := w.shownMsgs; i < len(msgs); i++ {
		results = results || msgs[i].Result != nil
		if a.cfg.JSON {
			_ = a.printEvent(event{Type: "message", SessionID: w.session, Index: &i, Message: &msgs[i]})
			continue
		}
		for _, l := range a.ui.message(msgs[i]) {
			fmt.Fprintln(a.stdout, l)
		}
		if m := msgs[i]; m.Role == conversation.RoleAssistant && strings.TrimSpace(m.Content) != "" {
			w.lastText = m.Content
		}
	}
	w.shownMsgs = len(msgs)
	if !a.ui.live && results {
		a.showGuardian(ctx, c, w) // live: from the spinner's status below
	}

	w.lastWarn = ""
	for i := range pending {
		p := pending[i]
		if w.shownApp[p.ID+"@"+p.Digest] {
			continue
		}
		w.shownApp[p.ID+"@"+p.Digest] = true
		if a.cfg.JSON {
			_ = a.printEvent(event{Type: "approval", SessionID: w.session, Approval: &p})
			continue
		}
		printed = true
		a.clearSpin(w)
		if !a.ui.interactive || w.noPrompt {
			a.ui.approvalRequest(a.stdout, w.session, p)
			continue
		}
		switch err := a.prompt(ctx, c, w.session, p); {
		case errors.Is(err, errStopPrompting):
			w.noPrompt = true
		case errors.Is(err, errNotRecorded):
			delete(w.shownApp, p.ID+"@"+p.Digest) // asked again once the server answers
			return
		case err != nil:
			return // watching stops; the loop reports it
		}
	}
	if a.ui.live {
		var text string
		// A fresh deadline: answering a prompt may have outlasted qctx.
		sctx, cancel := context.WithTimeout(ctx, watchPollTimeout)
		st, err := a.queryStatus(sctx, c, w.session)
		cancel()
		if err == nil {
			text = activity(msgs, len(pending), st.Phase)
			if text != "" && w.partial != "" && w.events.Streaming() {
				text = "writing: " + partialTail(w.partial)
			}
			a.printGuardian(w, st)
		}
		a.setSpin(w, text, printed)
	}
}

// outcome waits for the session's result and reports how it ended. Only a
// session that completed with status "completed" exits 0. With --json,
// watch writes an outcome event line (asEvent); result writes the raw
// SessionResult. shown is the last assistant text watch already printed:
// a final text equal to it is not printed again.
func (a *app) outcome(ctx context.Context, c sessionClient, session, runID string, asEvent bool, shown string) error {
	var res workflows.SessionResult
	err := c.GetWorkflow(ctx, session, runID).Get(ctx, &res)
	if err == nil {
		switch {
		case a.cfg.JSON && asEvent:
			if err := a.printEvent(event{Type: "outcome", SessionID: session, Outcome: workflows.ResultCompleted, Result: &res}); err != nil {
				return err
			}
		case a.cfg.JSON:
			if err := a.printJSON(res); err != nil {
				return err
			}
		default:
			fmt.Fprintf(a.stdout, "── session %s finished ──\n", session)
			if shown != "" && strings.TrimSpace(shown) == strings.TrimSpace(res.FinalText) {
				res.FinalText = "" // watch has just printed it
			}
			renderResult(a.stdout, res)
		}
		if res.Status != workflows.ResultCompleted {
			return exitError{code: exitFailure}
		}
		return nil
	}
	if ctx.Err() != nil {
		return a.interrupted(session)
	}
	name, detail := closeReason(err)
	if name == "" {
		return sessionError(err, "get result of", session, a.cfg.Namespace)
	}
	if a.cfg.JSON {
		e := event{Type: "outcome", SessionID: session, Outcome: name, Error: detail}
		if !asEvent {
			e.Type = ""
		}
		if err := a.printEvent(e); err != nil {
			return err
		}
		return exitError{code: exitFailure}
	}
	msg := fmt.Sprintf("session %s ended: %s", session, name)
	if detail != "" {
		msg += ": " + detail
	}
	return exitError{exitFailure, msg}
}

// pollEvents reads what is new in the session's event stream, its
// sub-agents' merged in: with --json each event is written as a line of
// type event; as text, what its sub-agents do (the conversation watch
// prints is the session's own: subAgentLine); on a terminal the model's
// reply so far is kept for the spinner. A read that fails is tried
// again next round (the rest of watch says when the server is lost); a
// session that cannot give events at all is said once and left alone.
func (a *app) pollEvents(ctx context.Context, w *watchState, desc *workflowservice.DescribeWorkflowExecutionResponse) (read bool) {
	if w.eventsOff {
		return false
	}
	for {
		evs, more, err := w.events.Read(ctx)
		if err != nil {
			if follow.Permanent(err) && ctx.Err() == nil {
				w.eventsOff = true
				if !w.eventsSaid {
					w.eventsSaid = true
					a.clearSpin(w)
					fmt.Fprintf(a.stderr, "%s watch: no event stream from %s (%s); watching without it\n", progName, w.session, oneLine(shortErr(err)))
				}
			}
			return false
		}
		for i := range evs {
			if a.cfg.JSON {
				// A sub-agent's event is of its session: the watched
				// session's lines are what they were.
				_ = a.printEvent(event{Type: "event", SessionID: cmp.Or(evs[i].SubAgent, w.session), Event: &evs[i]})
			} else if line, ok := subAgentLine(evs[i]); ok {
				a.clearSpin(w)
				fmt.Fprintln(a.stdout, line)
			}
		}
		if !more {
			break
		}
	}
	if !w.events.Streaming() {
		w.partial = ""
		return true
	}
	if p, ok := w.events.Partial(desc); ok {
		w.partial = p.Text
		if a.cfg.JSON {
			_ = a.printEvent(event{Type: "event", SessionID: w.session, Event: &p})
		}
	}
	return true
}

// subAgentLine is how watch shows e when it is about a sub-agent: its
// start, and its calls and its end, one line each through follow.Line;
// ok is false for the rest (the session's own events, which watch
// shows from its conversation, and a sub-agent's turns and text).
func subAgentLine(e follow.Event) (string, bool) {
	switch {
	case e.Kind == eventlog.KindSubagentStarted:
	case e.SubAgent == "":
		return "", false
	case e.Kind == eventlog.KindCallProposed, e.Kind == eventlog.KindCallDecided, e.Kind == eventlog.KindCallFinished,
		e.Kind == eventlog.KindEnded, e.Kind == follow.KindError, e.Kind == follow.KindMissed:
	default:
		return "", false
	}
	return "  ⤷ " + follow.Line(e, fullHint("conversation", cmp.Or(e.SubAgent, e.Session))), true
}

// drainEvents is pollEvents for the round that found the session closed:
// there is no next round to try a failed read again, so it is tried
// again for a moment, and once more even when the stream was given up on
// earlier (a query refused while a run switched), so every event the
// session logged is written before its outcome.
func (a *app) drainEvents(ctx context.Context, w *watchState, desc *workflowservice.DescribeWorkflowExecutionResponse) {
	w.eventsOff = false
	deadline := time.Now().Add(drainFor)
	for !a.pollEvents(ctx, w, desc) && !w.eventsOff && ctx.Err() == nil && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
		case <-time.After(drainPause):
		}
	}
}

// drainFor and drainPause bound how long a closed session's last events
// are asked for again (a worker replays the closed run to answer).
const (
	drainFor   = 2 * time.Second
	drainPause = 250 * time.Millisecond
)

// partialTail is the end of the reply being written, on one line, made
// visible: what fits beside the spinner.
func partialTail(s string) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > 60 {
		s = "…" + string(r[len(r)-60:])
	}
	return s
}
