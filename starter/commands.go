package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/workflows"
)

// startOptions are the flags of `start`, kept apart from the client call so
// parsing is tested without a server.
type startOptions struct {
	input workflows.SessionInput
	id    string
	wait  bool
}

func parseStart(fs *flag.FlagSet, args []string) (startOptions, error) {
	var o startOptions
	sf := bindSessionFlags(fs)
	fs.StringVar(&o.id, "id", "", "session id (default session-<timestamp>-<random>)")
	fs.BoolVar(&o.wait, "wait", false, "follow the session like watch until it ends; exit non-zero unless it completed")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	o.input, err = sf.input(strings.Join(pos, " "))
	return o, err
}

// sessionFlags are the flags that shape a session's input. start and
// schedule create both bind them, so a session started by hand and one
// started by a schedule are configured the same way and cannot drift.
type sessionFlags struct {
	in                    workflows.SessionInput
	idle, approvalTimeout time.Duration
}

func bindSessionFlags(fs *flag.FlagSet) *sessionFlags {
	sf := &sessionFlags{}
	fs.StringVar(&sf.in.Model, "model", "", "model name (default: the worker's LONGRUN_MODEL)")
	fs.StringVar(&sf.in.SystemPrompt, "system", "", "the session's own system prompt, sent after Longrun's default prompt and AGENTS.md (see --system-mode)")
	fs.StringVar(&sf.in.SystemPromptMode, "system-mode", "", `"append" (default: --system follows the default prompt) or "replace" (--system is sent instead of it)`)
	fs.IntVar(&sf.in.MaxTurns, "max-turns", 0, fmt.Sprintf("most model calls before the session stops (0 = %d)", workflows.DefaultMaxTurns))
	fs.StringVar(&sf.in.WorkDir, "workdir", "", "directory relative to the worker's workspace root")
	fs.StringVar(&sf.in.Base, "base", "", "commit, branch or tag the session's own checkout starts from (default: the repository's HEAD)")
	fs.BoolVar(&sf.in.InPlace, "in-place", false, "work in the worker's workspace itself instead of a checkout of the session's own (a repository of its own on branch longrun/<session>)")
	fs.Func("idle-timeout", `how long to wait for another message once the model stops, e.g. 10m, 72h or "forever" (default 0: end then)`, func(v string) error {
		if strings.EqualFold(strings.TrimSpace(v), "forever") {
			sf.idle = time.Duration(workflows.Forever)
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf(`want a duration like 10m or "forever"`)
		}
		if d < 0 {
			return fmt.Errorf(`must not be negative (use "forever" for no limit)`)
		}
		sf.idle = d
		return nil
	})
	fs.Var(optionalBool{&sf.in.LocalReads}, "local-reads", "run read, grep, glob and list inside the workflow task (faster turns; they show as markers, not activities); on by default, --local-reads=false turns it off")
	fs.BoolVar(&sf.in.LocalModel, "local-model", false, "run model calls inside the workflow task too (fastest turns; no streamed partial text, signals wait up to ~8 s)")
	fs.Int64Var(&sf.in.TokenBudget, "token-budget", 0, "stop before a model call once the session has used this many tokens (0 = no budget)")
	fs.Float64Var(&sf.in.CostBudgetUSD, "cost-budget", 0, "stop before a model call once the estimated cost reaches this many US dollars (0 = no budget; needs the worker's price table)")
	fs.StringVar(&sf.in.Approval, "approval", "", `who decides calls that need approval: "person" (default), "guardian" (the worker's reviewer model first, a person when it does not decide) or "none" (unattended: every ask is denied)`)
	fs.StringVar(&sf.in.Profile, "profile", "", `permission profile: "build" (default), "plan" (read-only; write tools hidden) or "auto"`)
	fs.Func("allow", `allow rule TOOL or TOOL:PATTERN (repeatable), e.g. --allow 'shell:go test *'`, func(v string) error {
		return addRule(&sf.in, v, permission.Allow)
	})
	fs.Func("deny-rule", `deny rule TOOL or TOOL:PATTERN (repeatable), e.g. --deny-rule 'write:secrets/**'`, func(v string) error {
		return addRule(&sf.in, v, permission.Deny)
	})
	fs.DurationVar(&sf.approvalTimeout, "approval-timeout", 0, "how long one call waits for a decision before it times out (0 = forever)")
	fs.Func("worker-lost-after", "how long a call waits for the worker holding the session's checkout before that worker counts as lost and the checkout is restored on another from its last checkpoint (default 5m)", func(v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("want a positive duration like 5m")
		}
		sf.in.WorkerLostAfter = workflows.Duration(d)
		return nil
	})
	return sf
}

// input checks the parsed flags and returns the session input for prompt.
func (sf *sessionFlags) input(prompt string) (workflows.SessionInput, error) {
	in := sf.in
	in.Prompt = strings.TrimSpace(prompt)
	if in.Prompt == "" {
		return in, usagef("a prompt is required")
	}
	if in.MaxTurns < 0 {
		return in, usagef("--max-turns must not be negative")
	}
	if in.TokenBudget < 0 || in.CostBudgetUSD < 0 {
		return in, usagef("--token-budget and --cost-budget must not be negative")
	}
	if sf.approvalTimeout < 0 {
		return in, usagef("--approval-timeout must not be negative")
	}
	switch in.SystemPromptMode {
	case "", workflows.SystemPromptAppend, workflows.SystemPromptReplace:
	default:
		return in, usagef("--system-mode must be %q or %q, not %q", workflows.SystemPromptAppend, workflows.SystemPromptReplace, in.SystemPromptMode)
	}
	switch in.Approval {
	case "", workflows.ApproverPerson, workflows.ApproverNone, workflows.ApproverGuardian:
	default:
		return in, usagef("--approval must be %q, %q or %q, not %q", workflows.ApproverPerson, workflows.ApproverGuardian, workflows.ApproverNone, in.Approval)
	}
	in.IdleTimeout = workflows.Duration(sf.idle)
	in.ApprovalTimeout = workflows.Duration(sf.approvalTimeout)
	// Checked here, before any connection: a session that would fail at
	// once, or a rule that could never match, is never started.
	return in, checkSessionInput(in)
}

// newSessionID is unique enough for people starting sessions by hand and
// sorts by start time in listings.
func newSessionID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return fmt.Sprintf("session-%s-%s", now.UTC().Format("20060102-150405"), hex.EncodeToString(b[:]))
}

func (a *app) startWorkflowOptions(o startOptions) client.StartWorkflowOptions {
	return client.StartWorkflowOptions{
		ID:            o.id,
		TaskQueue:     a.cfg.TaskQueue,
		StaticSummary: summaryLine(o.input.Prompt),
		StaticDetails: staticDetails(o.input),
		// Without this, starting an id that is already running silently
		// returns the old run and the new prompt is lost.
		WorkflowExecutionErrorWhenAlreadyStarted: true,
	}
}

func (a *app) cmdStart(ctx context.Context, fs *flag.FlagSet, args []string) error {
	uf := a.uiFlags(fs) // --wait follows the session like watch
	o, err := parseStart(fs, args)
	if err != nil {
		return err
	}
	if o.wait {
		if a.ui, err = a.resolveUI(uf); err != nil {
			return err
		}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	workdirSet := false
	fs.Visit(func(f *flag.Flag) { workdirSet = workdirSet || f.Name == "workdir" })
	run, p, err := a.launch(ctx, c, &o, workdirSet)
	if err != nil {
		return err
	}
	if a.cfg.JSON {
		if o.wait {
			// Watch prints JSON lines; the start record is the first of them.
			if err := a.printEvent(event{Type: "started", SessionID: run.GetID(), RunID: run.GetRunID()}); err != nil {
				return err
			}
		} else if err := a.printJSON(map[string]string{"session_id": run.GetID(), "run_id": run.GetRunID()}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(a.stdout, run.GetID())
	}
	a.describeStart(ctx, run.GetID(), o, p)
	if !o.wait {
		return nil
	}
	return a.watch(ctx, c, run.GetID(), a.interval())
}

// launch starts the session o describes, on the worker serving the
// directory the command runs in (place): the one way start and chat
// start a session.
func (a *app) launch(ctx context.Context, c sessionClient, o *startOptions, workdirSet bool) (client.WorkflowRun, placement, error) {
	if o.id == "" {
		o.id = newSessionID(time.Now())
	}
	p, err := a.place(ctx, c, o, workdirSet)
	if err != nil {
		return nil, p, err
	}
	opts := a.startWorkflowOptions(*o)
	opts.TaskQueue = p.queue
	// By name, not by function: the starter does not link the workflow code.
	run, err := c.ExecuteWorkflow(ctx, opts, workflows.WorkflowType, o.input)
	if err != nil {
		return nil, p, sessionError(err, "start", o.id, a.cfg.Namespace)
	}
	return run, p, nil
}

// sessionArgs parses a command that takes SESSION and optional words after.
func sessionArgs(fs *flag.FlagSet, args []string) (string, []string, error) {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return "", nil, err
	}
	if len(pos) == 0 || pos[0] == "" {
		return "", nil, usagef("a session id is required")
	}
	return pos[0], pos[1:], nil
}

// onlySession parses a command whose only argument is SESSION.
func onlySession(fs *flag.FlagSet, args []string) (string, error) {
	s, rest, err := sessionArgs(fs, args)
	if err != nil {
		return "", err
	}
	if len(rest) > 0 {
		return "", usagef("unexpected arguments after the session id: %s", strings.Join(rest, " "))
	}
	return s, nil
}

func (a *app) cmdSend(ctx context.Context, fs *flag.FlagSet, args []string) error {
	session, words, err := sessionArgs(fs, args)
	if err != nil {
		return err
	}
	text := strings.TrimSpace(strings.Join(words, " "))
	if text == "" {
		return usagef("message text is required")
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	err = c.SignalWorkflow(ctx, session, "", workflows.SignalUserMessage, workflows.UserMessage{Text: text})
	if err != nil {
		return a.signalError(ctx, c, err, workflows.SignalUserMessage, session, "nothing was sent")
	}
	if a.cfg.JSON {
		return a.printJSON(map[string]string{"session_id": session, "sent": text})
	}
	fmt.Fprintf(a.stdout, "sent to %s\n", session)
	return nil
}

func (a *app) cmdApprove(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.decide(ctx, fs, args, workflows.DecisionApprove)
}

func (a *app) cmdDeny(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.decide(ctx, fs, args, workflows.DecisionDeny)
}

// decide sends one approval signal per selected call, after checking the
// calls are really pending: the workflow cannot answer a signal, so a typo
// would otherwise vanish.
func (a *app) decide(ctx context.Context, fs *flag.FlagSet, args []string, decision string) error {
	var all bool
	var feedback string
	fs.BoolVar(&all, "all", false, "answer every pending call")
	help := "note for the model about the decision"
	if decision == workflows.DecisionDeny {
		help = "why the call is denied; the model reads it (required)"
	}
	fs.StringVar(&feedback, "feedback", "", help)
	var remember bool
	var pattern string
	if decision == workflows.DecisionApprove {
		fs.BoolVar(&remember, "remember", false, "also allow this tool and pattern for the rest of the session")
		fs.StringVar(&pattern, "pattern", "", "with --remember: a wider pattern to allow, a glob such as 'go test *' (default: exactly this call's command line or path, glob characters in it taken literally)")
	}
	var digest string
	var full bool
	fs.StringVar(&digest, "digest", "", "the digest of the arguments you read (pending, the console, watch): nothing is sent unless the call waiting now has exactly those arguments")
	fs.BoolVar(&full, "full", false, "print the decided call's arguments whole instead of a cut preview")
	session, ids, err := sessionArgs(fs, args)
	if err != nil {
		return err
	}
	if decision == workflows.DecisionDeny && strings.TrimSpace(feedback) == "" {
		return usagef("--feedback is required: tell the model why, so it can try something else")
	}
	if all && len(ids) > 0 {
		return usagef("give call ids or --all, not both")
	}
	if digest != "" {
		if err := checkDigestFlag(digest, ids, all); err != nil {
			return err
		}
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	proto := workflows.Approval{Decision: decision, Feedback: feedback, Pattern: pattern, Digest: digest, Author: localAuthor()}
	if remember {
		proto.Remember = workflows.RememberSession
	}
	// The update and the pending query need a worker; the approval
	// signal does not. With none running, the decision goes as the
	// signal, which waits in the session's history for the next worker.
	why, err := a.workerGone(ctx, c, session)
	if err != nil {
		return err
	}
	var pending []workflows.PendingApproval
	if why == "" {
		pctx, cancel := context.WithTimeout(ctx, probeTimeout)
		pending, err = a.queryPending(pctx, c, session)
		cancel()
		if err != nil && ctx.Err() == nil && noWorker(err) {
			why = fmt.Sprintf("no worker answered within %s", probeTimeout)
		} else if err != nil {
			return err
		}
	}
	if why != "" {
		return a.decideBySignal(ctx, c, session, why, proto, ids, all)
	}
	picked, err := selectCallIDs(pending, ids, all)
	if errors.Is(err, errNoPending) && len(ids) == 0 {
		return fmt.Errorf("session %s: %w", session, err)
	}
	if err != nil {
		return a.explainNotWaiting(ctx, c, session, pending, ids, err)
	}
	if digest != "" {
		if err := digestMismatch(session, picked[0], digest, decision); err != nil {
			return err
		}
	}
	type sent struct {
		CallID   string `json:"call_id"`
		ID       string `json:"id"`
		Tool     string `json:"tool"`
		Decision string `json:"decision"`
		Via      string `json:"via,omitempty"`    // "signal" when no worker took the update
		Digest   string `json:"digest,omitempty"` // of the arguments decided on
	}
	var done []sent
	noted := false
	for _, p := range picked {
		// Only the calls of the listing just read, each with the digest
		// of the arguments read there: a call that changed since (or one
		// that appeared) is not decided unseen, --all included.
		ap := p.approval(proto)
		out, err := a.sendDecision(ctx, c, session, p.ID, ap)
		if err != nil {
			return err
		}
		via := ""
		switch out {
		case notTaken:
			if !noted {
				a.fallbackNote(session, fmt.Sprintf("no worker took the update within %s", decisionWait))
				noted = true
			}
			if err := a.signalDecision(ctx, c, session, ap); err != nil {
				return err
			}
			via = "signal"
		case decidedUnanswered:
			if !a.cfg.JSON {
				fmt.Fprintf(a.stdout, "the reply was lost, but the session's history shows it took the decision:\n")
			}
		}
		done = append(done, sent{p.CallID, p.ID, p.Tool, decision, via, callref.Short(p.Digest)})
		if !a.cfg.JSON && via == "" {
			fmt.Fprintf(a.stdout, "%s %s (%s)\n", pastTense(decision), showID(p.ID), oneLine(p.Tool))
		}
		if !a.cfg.JSON {
			renderDecided(a.stdout, session, p.PendingApproval, full)
		}
	}
	if a.cfg.JSON {
		return a.printJSON(done)
	}
	return nil
}

// pastTense is "approved" or "denied".
func pastTense(decision string) string {
	if decision == workflows.DecisionDeny {
		return "denied"
	}
	return "approved"
}

// decideBySignal sends the decision as the approval signal when no worker
// can take the update. Without a worker the pending calls cannot be
// listed, so the person names them or passes --all.
func (a *app) decideBySignal(ctx context.Context, c sessionClient, session, why string, proto workflows.Approval, ids []string, all bool) error {
	if len(ids) == 0 && !all {
		return fmt.Errorf("%s, so the waiting calls cannot be listed: name the call ids (from watch, the Web UI's session page or the notification) or pass --all", why)
	}
	if all && proto.Decision == workflows.DecisionApprove {
		// --all approves only calls whose arguments the CLI read and
		// showed; without a worker it can read none.
		return fmt.Errorf("%s, so the waiting calls cannot be listed, and approve --all would approve calls nobody here has seen: "+
			"name the call ids (from watch, the Web UI's session page or the notification), or try again once a worker runs", why)
	}
	a.fallbackNote(session, why)
	var aps []workflows.Approval
	if all {
		ap := proto
		ap.All = true
		aps = append(aps, ap)
	}
	for _, id := range ids {
		// Sent as call_id, which the session takes as its own id or the
		// model's, and refuses when it names more than one call.
		ap := proto
		ap.CallID = id
		aps = append(aps, ap)
	}
	for _, ap := range aps {
		if err := a.signalDecision(ctx, c, session, ap); err != nil {
			return err
		}
	}
	if a.cfg.JSON {
		return a.printJSON(map[string]any{"session_id": session, "via": "signal", "reason": why, "decision": proto.Decision, "call_ids": ids, "all": all})
	}
	return nil
}

// explainNotWaiting turns "unknown call id" into what became of the call
// when the conversation knows it: already approved, denied or running. An
// id is the session's, or the model's when it names one call there.
func (a *app) explainNotWaiting(ctx context.Context, c sessionClient, session string, pending []workflows.PendingApproval, ids []string, err error) error {
	msgs, qerr := a.queryConversation(ctx, c, session)
	if qerr != nil {
		return err
	}
	waiting := map[string]bool{}
	for _, p := range pending {
		waiting[p.ID] = true
		waiting[p.CallID] = true
	}
	for _, id := range ids {
		if waiting[id] {
			continue
		}
		refs := refsOf(msgs, id)
		if len(refs) > 1 {
			return fmt.Errorf("the model used the call id %q for %d calls (%s): nothing sent; name the call by its id", id, len(refs), strings.Join(refs, ", "))
		}
		if len(refs) == 1 {
			if fate := conversation.Fate(msgs, refs[0]); fate != "" {
				return fmt.Errorf("call %q is already decided (%s); nothing sent", id, fate)
			}
		}
	}
	return err
}

// refsOf are the session's ids of the calls id names in msgs: the call
// with that session id, else every call the model gave that id.
func refsOf(msgs []conversation.Message, id string) []string {
	var byModel []string
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			if tc.Ref == id {
				return []string{id}
			}
			if tc.ID == id {
				byModel = append(byModel, tc.Ref)
			}
		}
	}
	return byModel
}

func (a *app) cmdPending(ctx context.Context, fs *flag.FlagSet, args []string) error {
	var all, full bool
	fs.BoolVar(&all, "all", false, "every session in the namespace waiting for approval (via the LongrunPhase search attribute)")
	fs.BoolVar(&full, "full", false, "show every call's arguments whole, one field a line, instead of a cut preview")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if all {
		if len(pos) > 0 {
			return usagef("pending --all takes no session")
		}
		return a.pendingAll(ctx, full)
	}
	session, err := onlySession(fs, pos)
	if err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := a.requireListener(ctx, c, session); err != nil {
		return err
	}
	pending, err := a.queryPending(ctx, c, session)
	if err != nil {
		return err
	}
	if a.cfg.JSON {
		if pending == nil {
			pending = []workflows.PendingApproval{}
		}
		return a.printJSON(pending)
	}
	renderPending(a.stdout, a.cfg, session, pending, full)
	return nil
}

func (a *app) cmdStatus(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.onSession(ctx, fs, args, func(c sessionClient, session string) error {
		// Describe needs no worker: a session that failed says why even
		// when the status query cannot be answered.
		var e *ending
		if desc, err := c.DescribeWorkflowExecution(ctx, session, ""); err == nil {
			e = a.ended(ctx, c, desc)
		}
		if e == nil {
			if err := a.requireListener(ctx, c, session); err != nil {
				return err
			}
		}
		st, err := a.queryStatus(ctx, c, session)
		if err != nil {
			if e != nil {
				return fmt.Errorf("%w (the session %s: %s)", err, e.How, e.Reason)
			}
			return err
		}
		if a.cfg.JSON {
			return a.printJSON(struct {
				workflows.Status
				Ended *ending `json:"ended,omitempty"`
			}{st, e})
		}
		renderStatus(a.stdout, session, st, e)
		return nil
	})
}

func (a *app) cmdConversation(ctx context.Context, fs *flag.FlagSet, args []string) error {
	full := fs.Bool("full", false, "show tool calls and results whole instead of cut previews")
	return a.onSession(ctx, fs, args, func(c sessionClient, session string) error {
		msgs, err := a.queryConversation(ctx, c, session)
		if err != nil {
			return err
		}
		if a.cfg.JSON {
			if msgs == nil {
				return a.printJSON([]any{})
			}
			return a.printJSON(msgs)
		}
		renderConversation(a.stdout, msgs, style{full: *full, more: fullHint("conversation", session)})
		return nil
	})
}

func (a *app) cmdWatch(ctx context.Context, fs *flag.FlagSet, args []string) error {
	uf := a.uiFlags(fs)
	session, err := onlySession(fs, args)
	if err != nil {
		return err
	}
	if a.ui, err = a.resolveUI(uf); err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return a.watch(ctx, c, session, a.interval())
}

func (a *app) cmdCancel(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.onSession(ctx, fs, args, func(c sessionClient, session string) error {
		// A session that already ended cannot be cancelled: say how it
		// ended and exit 1, since nothing was cancelled (a script that
		// runs cancel && ... must not think it stopped something).
		if err := a.alreadyEnded(ctx, c, session); err != nil {
			return err
		}
		if err := c.CancelWorkflow(ctx, session, ""); err != nil {
			var nf *serviceerror.NotFound
			if errors.As(err, &nf) {
				// It may have ended between describe and cancel.
				if err := a.alreadyEnded(ctx, c, session); err != nil {
					return err
				}
			}
			var again *serviceerror.CancellationAlreadyRequested
			if errors.As(err, &again) {
				return exitError{exitFailure, fmt.Sprintf("a cancel of %s was already requested; it is finishing (%s watch %s)", session, progName, shellQuote(session))}
			}
			return sessionError(err, "cancel", session, a.cfg.Namespace)
		}
		if a.cfg.JSON {
			return a.printJSON(map[string]string{"session_id": session, "cancel": "requested"})
		}
		fmt.Fprintf(a.stdout, "cancel requested for %s; pending tool calls get cancelled results\n", session)
		return nil
	})
}

func (a *app) cmdInterrupt(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.onSession(ctx, fs, args, func(c sessionClient, session string) error {
		if err := c.SignalWorkflow(ctx, session, "", workflows.SignalInterrupt, struct{}{}); err != nil {
			return a.signalError(ctx, c, err, workflows.SignalInterrupt, session, "nothing to interrupt")
		}
		if a.cfg.JSON {
			return a.printJSON(map[string]string{"session_id": session, "interrupt": "sent"})
		}
		fmt.Fprintf(a.stdout, "interrupt sent to %s; the current turn stops and the session waits for your next message\n", session)
		return nil
	})
}

func (a *app) cmdResult(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.onSession(ctx, fs, args, func(c sessionClient, session string) error {
		return a.outcome(ctx, c, session, "", false, "")
	})
}

// signalError explains a signal the server refused. The server answers a
// signal to a session that has ended as it answers one to a session that
// never was, "not found"; the person meant a session they know, so it
// says how and when that one ended, and what was not done.
func (a *app) signalError(ctx context.Context, c sessionClient, err error, signal, session, notDone string) error {
	var nf *serviceerror.NotFound
	if !errors.As(err, &nf) {
		return sessionError(err, "signal "+signal, session, a.cfg.Namespace)
	}
	desc, derr := c.DescribeWorkflowExecution(ctx, session, "")
	info := desc.GetWorkflowExecutionInfo()
	if derr != nil || info == nil || isOpen(info.GetStatus()) {
		return sessionError(err, "signal "+signal, session, a.cfg.Namespace)
	}
	how := statusName(info.GetStatus().String())
	if e := a.ended(ctx, c, desc); e != nil {
		how = e.How
	}
	return exitError{exitFailure, fmt.Sprintf("session %s has ended (%s at %s); %s",
		session, how, info.GetCloseTime().AsTime().Local().Format(time.DateTime), notDone)}
}

// alreadyEnded returns an exitError naming how session ended when it is
// closed, nil while it runs.
func (a *app) alreadyEnded(ctx context.Context, c sessionClient, session string) error {
	desc, err := c.DescribeWorkflowExecution(ctx, session, "")
	if err != nil {
		return sessionError(err, "describe", session, a.cfg.Namespace)
	}
	info := desc.GetWorkflowExecutionInfo()
	if isOpen(info.GetStatus()) {
		return nil
	}
	how := statusName(info.GetStatus().String())
	if e := a.ended(ctx, c, desc); e != nil {
		how = e.How
	}
	if a.cfg.JSON {
		_ = a.printJSON(map[string]string{"session_id": session, "cancel": "not-sent", "ended": how})
	}
	return exitError{exitFailure, fmt.Sprintf("session %s already ended (%s, at %s); nothing to cancel",
		session, how, info.GetCloseTime().AsTime().Local().Format(time.DateTime))}
}

// waitingQuery finds every open session waiting for a person.
const waitingQuery = `LongrunPhase = "waiting-approval" AND ExecutionStatus = "Running"`

// pendingAll lists the pending approvals of every session waiting for
// one, found through the search attribute, so one command shows everything
// waiting for a person across the namespace.
func (a *app) pendingAll(ctx context.Context, full bool) error {
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	type entry struct {
		Session string                      `json:"session_id"`
		Pending []workflows.PendingApproval `json:"pending"`
	}
	out := []entry{}
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Namespace: a.cfg.Namespace, Query: waitingQuery, NextPageToken: token,
		})
		if err != nil {
			return fmt.Errorf("list sessions waiting for approval: %w", err)
		}
		for _, ex := range resp.GetExecutions() {
			id := ex.GetExecution().GetWorkflowId()
			p, err := a.queryPending(ctx, c, id)
			if err != nil {
				fmt.Fprintf(a.stderr, "%s: %v\n", id, err)
				continue
			}
			if len(p) > 0 {
				out = append(out, entry{id, p})
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			break
		}
	}
	if a.cfg.JSON {
		return a.printJSON(out)
	}
	if len(out) == 0 {
		fmt.Fprintln(a.stdout, "no session is waiting for approval")
		return nil
	}
	for i, e := range out {
		if i > 0 {
			fmt.Fprintln(a.stdout)
		}
		fmt.Fprintf(a.stdout, "== %s ==\n", e.Session)
		renderPending(a.stdout, a.cfg, e.Session, e.Pending, full)
	}
	return nil
}

// addRule parses TOOL or TOOL:PATTERN into a session rule.
func addRule(in *workflows.SessionInput, v string, action permission.Action) error {
	tool, pattern, _ := strings.Cut(v, ":")
	if strings.TrimSpace(tool) == "" {
		return fmt.Errorf("want TOOL or TOOL:PATTERN, got %q", v)
	}
	in.Rules = append(in.Rules, permission.Rule{Tool: tool, Pattern: pattern, Action: action})
	return nil
}

// onSession runs a command whose only argument is SESSION with a
// connected client.
func (a *app) onSession(ctx context.Context, fs *flag.FlagSet, args []string, run func(c sessionClient, session string) error) error {
	session, err := onlySession(fs, args)
	if err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return run(c, session)
}
