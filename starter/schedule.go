package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/workflows"
)

// scheduleSessionPrefix starts the workflow id of every session a schedule
// starts; the server appends the scheduled time, so the ids of one
// schedule's runs sort by time and never collide with `start --id`.
const scheduleSessionPrefix = "scheduled-"

// specMemo is the memo key that keeps the spec as it was typed: the server
// compiles a cron expression into calendar ranges, and "0 3 * * *" reads
// better in a listing than the ranges it became.
const specMemo = "longrun-spec"

// scheduleCommands are the subcommands of `schedule`, in the order its
// usage lists them. Their names are "schedule X" so usage, examples and
// errors name the whole command.
func scheduleCommands() []command {
	return []command{
		{"schedule create", "schedule create NAME --prompt TEXT (--cron EXPR | --every D) [--jitter D] [--overlap skip|buffer-one|allow-all|cancel-other] [--paused] [--note TEXT] [session flags of start]", "create a schedule that starts a session with the prompt on a cron or interval", (*app).cmdScheduleCreate},
		{"schedule list", "schedule list [--quiet]", "list the schedules that start sessions: spec, next run, last run, paused", (*app).cmdScheduleList},
		{"schedule show", "schedule show NAME", "show a schedule: spec, policy, prompt, next runs and the sessions it started", (*app).cmdScheduleShow},
		{"schedule delete", "schedule delete NAME", "delete a schedule (sessions it started keep running)", (*app).cmdScheduleDelete},
		{"schedule pause", "schedule pause NAME [--note TEXT]", "stop a schedule from starting sessions until unpaused", (*app).cmdSchedulePause},
		{"schedule unpause", "schedule unpause NAME [--note TEXT]", "let a paused schedule start sessions again", (*app).cmdScheduleUnpause},
		{"schedule trigger", "schedule trigger NAME [--overlap POLICY]", "start the schedule's session now, whatever the spec says", (*app).cmdScheduleTrigger},
	}
}

// cmdSchedule dispatches to a subcommand and reports its errors with the
// subcommand's own usage, so `schedule create` without --prompt shows the
// flags of create, not a list of subcommands.
func (a *app) cmdSchedule(ctx context.Context, fs *flag.FlagSet, args []string) error {
	// Global flags may come before the subcommand: `schedule --json list`.
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	rest := fs.Args()
	if len(rest) == 0 {
		return usagef("name a schedule command: %s", strings.Join(scheduleNames(), ", "))
	}
	if rest[0] == "help" {
		return flag.ErrHelp
	}
	for _, c := range scheduleCommands() {
		if c.name == "schedule "+rest[0] {
			sub := flag.NewFlagSet(c.name, flag.ContinueOnError)
			sub.SetOutput(io.Discard)
			a.globalFlags(sub)
			if code := a.exitCode(&c, sub, c.run(a, ctx, sub, rest[1:])); code != exitOK {
				return exitError{code: code}
			}
			return nil
		}
	}
	return usagef("unknown schedule command %q (have: %s)", rest[0], strings.Join(scheduleNames(), ", "))
}

func scheduleNames() []string {
	var names []string
	for _, c := range scheduleCommands() {
		names = append(names, strings.TrimPrefix(c.name, "schedule "))
	}
	return names
}

// scheduleSpec is what create takes for "when": exactly one of a cron
// expression or an interval, with optional jitter.
type scheduleSpec struct {
	cron   string
	every  time.Duration
	jitter time.Duration
}

// spec is the SDK spec for s, checked for what the server would refuse
// with a less helpful message.
func (s scheduleSpec) spec() (client.ScheduleSpec, error) {
	switch {
	case s.cron == "" && s.every == 0:
		return client.ScheduleSpec{}, usagef("say when: --cron EXPR (e.g. \"0 3 * * *\") or --every D (e.g. 6h)")
	case s.cron != "" && s.every != 0:
		return client.ScheduleSpec{}, usagef("give --cron or --every, not both")
	case s.every < 0:
		return client.ScheduleSpec{}, usagef("--every must be positive")
	case s.every > 0 && s.every < time.Second:
		return client.ScheduleSpec{}, usagef("--every must be at least 1s")
	case s.jitter < 0:
		return client.ScheduleSpec{}, usagef("--jitter must not be negative")
	}
	spec := client.ScheduleSpec{Jitter: s.jitter}
	if s.cron != "" {
		spec.CronExpressions = []string{s.cron}
	} else {
		spec.Intervals = []client.ScheduleIntervalSpec{{Every: s.every}}
	}
	return spec, nil
}

// text is the spec as typed, kept in the schedule's memo for listings.
func (s scheduleSpec) text() string {
	if s.cron != "" {
		return "cron " + s.cron
	}
	return "every " + shortDuration(s.every)
}

// overlapPolicies are the overlap policies create and trigger accept. A
// scheduled agent run can take longer than its interval; skip (the
// default) never starts a second session on the same work meanwhile.
// terminate-other is left out on purpose: terminating a session skips the
// cancellation that gives its pending calls results.
var overlapPolicies = map[string]enumspb.ScheduleOverlapPolicy{
	"skip":         enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	"buffer-one":   enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	"allow-all":    enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
	"cancel-other": enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER,
}

func parseOverlap(s string) (enumspb.ScheduleOverlapPolicy, error) {
	if s == "" {
		return enumspb.SCHEDULE_OVERLAP_POLICY_UNSPECIFIED, nil
	}
	if p, ok := overlapPolicies[s]; ok {
		return p, nil
	}
	return 0, usagef("--overlap must be skip, buffer-one, allow-all or cancel-other, not %q", s)
}

// overlapName is the spelling --overlap takes for p; unspecified is the
// server's default, skip.
func overlapName(p enumspb.ScheduleOverlapPolicy) string {
	if p == enumspb.SCHEDULE_OVERLAP_POLICY_UNSPECIFIED {
		return "skip"
	}
	for name, q := range overlapPolicies {
		if q == p {
			return name
		}
	}
	return strings.ToLower(p.String()) // one create does not offer, set elsewhere
}

// scheduleCreate is everything create parsed, apart from the client call.
type scheduleCreate struct {
	name    string
	when    scheduleSpec
	overlap enumspb.ScheduleOverlapPolicy
	paused  bool
	note    string
	input   workflows.SessionInput
}

func parseScheduleCreate(fs *flag.FlagSet, args []string) (scheduleCreate, error) {
	var o scheduleCreate
	var prompt, overlap string
	sf := bindSessionFlags(fs)
	fs.StringVar(&prompt, "prompt", "", "the prompt each scheduled session starts with (required)")
	fs.StringVar(&o.when.cron, "cron", "", `when, as a cron expression in UTC, e.g. "0 3 * * *" (also @daily, @hourly)`)
	fs.DurationVar(&o.when.every, "every", 0, "when, as an interval, e.g. 6h")
	fs.DurationVar(&o.when.jitter, "jitter", 0, "start each run up to this much later, at random, e.g. 10m (spreads load)")
	fs.StringVar(&overlap, "overlap", "", "when a run is due while the last session still runs: skip (default), buffer-one, allow-all, cancel-other")
	fs.BoolVar(&o.paused, "paused", false, "create the schedule paused")
	fs.StringVar(&o.note, "note", "", "note shown with the schedule, e.g. why it exists")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return o, err
	}
	if o.name, err = scheduleName(pos); err != nil {
		return o, err
	}
	if _, err := o.when.spec(); err != nil {
		return o, err
	}
	if o.overlap, err = parseOverlap(overlap); err != nil {
		return o, err
	}
	if strings.TrimSpace(prompt) == "" {
		return o, usagef("--prompt is required: what each scheduled session is asked to do")
	}
	o.input, err = sf.input(prompt)
	return o, err
}

// scheduleName is the one positional argument of most subcommands. Spaces
// are refused because the name is also part of every session id.
func scheduleName(pos []string) (string, error) {
	if len(pos) == 0 || pos[0] == "" {
		return "", usagef("a schedule name is required")
	}
	if len(pos) > 1 {
		return "", usagef("unexpected arguments after the schedule name: %s", strings.Join(pos[1:], " "))
	}
	if strings.ContainsAny(pos[0], " \t\n") {
		return "", usagef("schedule name %q must not contain spaces", pos[0])
	}
	return pos[0], nil
}

// scheduleOptions is the schedule create makes: its action starts
// AgentSession by name on the task queue, as `start` would, with the same
// summary and details so scheduled sessions read the same in the UI.
func (a *app) scheduleOptions(o scheduleCreate) (client.ScheduleOptions, error) {
	spec, err := o.when.spec()
	if err != nil {
		return client.ScheduleOptions{}, err
	}
	details := staticDetails(o.input) + fmt.Sprintf("  \n**schedule:** %s (%s)", o.name, o.when.text())
	return client.ScheduleOptions{
		ID:      o.name,
		Spec:    spec,
		Overlap: o.overlap,
		Paused:  o.paused,
		Note:    o.note,
		Memo:    map[string]any{specMemo: o.when.text()},
		Action: &client.ScheduleWorkflowAction{
			ID:            scheduleSessionPrefix + o.name,
			Workflow:      workflows.WorkflowType,
			Args:          []any{o.input},
			TaskQueue:     a.cfg.TaskQueue,
			StaticSummary: summaryLine(o.input.Prompt),
			StaticDetails: details,
		},
	}, nil
}

func (a *app) cmdScheduleCreate(ctx context.Context, fs *flag.FlagSet, args []string) error {
	o, err := parseScheduleCreate(fs, args)
	if err != nil {
		return err
	}
	opts, err := a.scheduleOptions(o)
	if err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.ScheduleClient().Create(ctx, opts); err != nil {
		return a.createError(err, o)
	}
	if a.cfg.JSON {
		return a.printJSON(map[string]any{"schedule": o.name, "spec": o.when.text(), "paused": o.paused,
			"session_id_prefix": scheduleSessionPrefix + o.name + "-"})
	}
	state := ""
	if o.paused {
		state = " (paused)"
	}
	fmt.Fprintf(a.stdout, "created schedule %s%s: %s; sessions are %s%s-<time>\n", o.name, state, o.when.text(), scheduleSessionPrefix, o.name)
	return nil
}

// createError explains the two refusals a person can fix: a name in use,
// and a cron expression the server cannot parse (its message names the
// field; the hint says what shape it wants).
func (a *app) createError(err error, o scheduleCreate) error {
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return fmt.Errorf("schedule %q already exists in namespace %s; delete it first or pick another name", o.name, a.cfg.Namespace)
	}
	var bad *serviceerror.InvalidArgument
	if errors.As(err, &bad) && o.when.cron != "" {
		return fmt.Errorf("the server refused --cron %q: %s\n(want 5 fields, MINUTE HOUR DAY-OF-MONTH MONTH DAY-OF-WEEK, e.g. \"0 3 * * *\" for 03:00 UTC daily, or @daily, @hourly)", o.when.cron, bad.Message)
	}
	return scheduleError(err, "create schedule", o.name, a.cfg.Namespace)
}

// scheduleError turns the server's errors about a schedule into sentences,
// as sessionError does for sessions.
func scheduleError(err error, what, name, namespace string) error {
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("schedule %q not found in namespace %s (see `%s schedule list`)", name, namespace, progName)
	}
	var nsnf *serviceerror.NamespaceNotFound
	if errors.As(err, &nsnf) {
		return fmt.Errorf("namespace %s does not exist", namespace)
	}
	return fmt.Errorf("%s %s: %w", what, name, err)
}

// onSchedule runs a subcommand whose only argument is NAME with a handle.
func (a *app) onSchedule(ctx context.Context, fs *flag.FlagSet, args []string, run func(h client.ScheduleHandle) error) error {
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	name, err := scheduleName(pos)
	if err != nil {
		return err
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return run(c.ScheduleClient().GetHandle(ctx, name))
}

// done prints what a subcommand did, as a sentence or as JSON.
func (a *app) done(name, what, sentence string) error {
	if a.cfg.JSON {
		return a.printJSON(map[string]string{"schedule": name, "done": what})
	}
	fmt.Fprintln(a.stdout, sentence)
	return nil
}

func (a *app) cmdScheduleDelete(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.onSchedule(ctx, fs, args, func(h client.ScheduleHandle) error {
		if err := h.Delete(ctx); err != nil {
			return scheduleError(err, "delete schedule", h.GetID(), a.cfg.Namespace)
		}
		return a.done(h.GetID(), "deleted", fmt.Sprintf("deleted schedule %s; sessions it started are not affected", h.GetID()))
	})
}

func (a *app) cmdSchedulePause(ctx context.Context, fs *flag.FlagSet, args []string) error {
	var note string
	fs.StringVar(&note, "note", "", "why it is paused, shown with the schedule")
	return a.onSchedule(ctx, fs, args, func(h client.ScheduleHandle) error {
		if err := h.Pause(ctx, client.SchedulePauseOptions{Note: note}); err != nil {
			return scheduleError(err, "pause schedule", h.GetID(), a.cfg.Namespace)
		}
		return a.done(h.GetID(), "paused", fmt.Sprintf("paused schedule %s", h.GetID()))
	})
}

func (a *app) cmdScheduleUnpause(ctx context.Context, fs *flag.FlagSet, args []string) error {
	var note string
	fs.StringVar(&note, "note", "", "note shown with the schedule")
	return a.onSchedule(ctx, fs, args, func(h client.ScheduleHandle) error {
		if err := h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: note}); err != nil {
			return scheduleError(err, "unpause schedule", h.GetID(), a.cfg.Namespace)
		}
		return a.done(h.GetID(), "unpaused", fmt.Sprintf("unpaused schedule %s", h.GetID()))
	})
}

func (a *app) cmdScheduleTrigger(ctx context.Context, fs *flag.FlagSet, args []string) error {
	var overlap string
	fs.StringVar(&overlap, "overlap", "", "overlap policy for this run (default: the schedule's; allow-all starts one even while a session runs)")
	return a.onSchedule(ctx, fs, args, func(h client.ScheduleHandle) error {
		p, err := parseOverlap(overlap)
		if err != nil {
			return err
		}
		if err := h.Trigger(ctx, client.ScheduleTriggerOptions{Overlap: p}); err != nil {
			return scheduleError(err, "trigger schedule", h.GetID(), a.cfg.Namespace)
		}
		return a.done(h.GetID(), "triggered", fmt.Sprintf("triggered schedule %s; `%s schedule show %s` names the session once it starts", h.GetID(), progName, h.GetID()))
	})
}

// shortDuration prints 6h rather than 6h0m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
