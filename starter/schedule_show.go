package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/longrun/longrun/workflows"
)

// scheduleRow is one schedule as list shows it. The last run's status is
// the session's own, asked of the server per schedule: the SDK's listing
// names the session but not how it ended.
type scheduleRow struct {
	Name        string     `json:"schedule"`
	Spec        string     `json:"spec"`
	Paused      bool       `json:"paused"`
	Note        string     `json:"note,omitempty"`
	NextRun     *time.Time `json:"next_run,omitempty"`
	LastRun     *time.Time `json:"last_run,omitempty"`
	LastSession string     `json:"last_session_id,omitempty"`
	LastStatus  string     `json:"last_status,omitempty"`
}

// scheduleAction is one session a schedule started.
type scheduleAction struct {
	ScheduledAt time.Time `json:"scheduled_at"`
	StartedAt   time.Time `json:"started_at"`
	SessionID   string    `json:"session_id"`
	Status      string    `json:"status,omitempty"`
}

// scheduleDetail is what show prints: the row plus policy, what each run
// is started with, and the recent and next runs.
type scheduleDetail struct {
	scheduleRow
	Overlap   string           `json:"overlap"`
	Prompt    string           `json:"prompt,omitempty"`
	Model     string           `json:"model,omitempty"`
	TaskQueue string           `json:"task_queue,omitempty"`
	SessionID string           `json:"session_id_prefix,omitempty"`
	Actions   int              `json:"actions"`
	Running   []string         `json:"running,omitempty"`
	Recent    []scheduleAction `json:"recent_actions"`
	Next      []time.Time      `json:"next_runs"`
}

func (a *app) cmdScheduleList(ctx context.Context, fs *flag.FlagSet, args []string) error {
	var quiet bool
	fs.BoolVar(&quiet, "quiet", false, "print only schedule names, one a line (for scripts and completion)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("schedule list takes no arguments, got %s", strings.Join(pos, " "))
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	it, err := c.ScheduleClient().List(ctx, client.ScheduleListOptions{})
	if err != nil {
		return fmt.Errorf("list schedules: %w", err)
	}
	rows := []scheduleRow{}
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return fmt.Errorf("list schedules: %w", err)
		}
		// A namespace shared with other workflows lists only the
		// schedules that start sessions.
		if e.WorkflowType.Name != workflows.WorkflowType {
			continue
		}
		r := scheduleRow{Name: e.ID, Spec: specText(a.payloads(), e.Memo, e.Spec), Paused: e.Paused, Note: e.Note}
		if len(e.NextActionTimes) > 0 {
			r.NextRun = &e.NextActionTimes[0]
		}
		if n := len(e.RecentActions); n > 0 {
			last := e.RecentActions[n-1] // sorted oldest first
			r.LastRun = &last.ActualTime
			if w := last.StartWorkflowResult; w != nil {
				r.LastSession = w.WorkflowID
				r.LastStatus = a.sessionStatus(ctx, c, w.WorkflowID)
			}
		}
		rows = append(rows, r)
	}
	switch {
	case quiet:
		for _, r := range rows {
			fmt.Fprintln(a.stdout, r.Name)
		}
		return nil
	case a.cfg.JSON:
		return a.printJSON(rows)
	case len(rows) == 0:
		fmt.Fprintf(a.stdout, "no schedules in namespace %s; create one with `%s schedule create`\n", a.cfg.Namespace, progName)
		return nil
	}
	renderScheduleList(a.stdout, rows)
	return nil
}

// sessionStatus is how a session a schedule started stands now: running,
// completed, failed...; empty when the server cannot say (it may have
// been deleted by retention).
func (a *app) sessionStatus(ctx context.Context, c sessionClient, id string) string {
	// No run id: the latest run, which is the session after a
	// continue-as-new, not the run the schedule first started.
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return ""
	}
	return statusName(d.GetWorkflowExecutionInfo().GetStatus().String())
}

func (a *app) cmdScheduleShow(ctx context.Context, fs *flag.FlagSet, args []string) error {
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
	desc, err := c.ScheduleClient().GetHandle(ctx, name).Describe(ctx)
	if err != nil {
		return scheduleError(err, "describe schedule", name, a.cfg.Namespace)
	}
	d := a.scheduleDetail(ctx, c, name, desc)
	if a.cfg.JSON {
		return a.printJSON(d)
	}
	renderScheduleDetail(a.stdout, d)
	return nil
}

func (a *app) scheduleDetail(ctx context.Context, c sessionClient, name string, desc *client.ScheduleDescription) scheduleDetail {
	s := desc.Schedule
	d := scheduleDetail{
		scheduleRow: scheduleRow{Name: name, Spec: specText(a.payloads(), desc.Memo, s.Spec)},
		Actions:     desc.Info.NumActions,
		Recent:      []scheduleAction{},
		Next:        desc.Info.NextActionTimes,
	}
	if d.Next == nil {
		d.Next = []time.Time{}
	}
	if s.State != nil {
		d.Paused, d.Note = s.State.Paused, s.State.Note
	}
	if s.Policy != nil {
		d.Overlap = overlapName(s.Policy.Overlap)
	}
	if len(d.Next) > 0 {
		d.NextRun = &d.Next[0]
	}
	if act, ok := s.Action.(*client.ScheduleWorkflowAction); ok {
		d.TaskQueue, d.SessionID = act.TaskQueue, act.ID+"-"
		// Described actions carry their arguments still encoded.
		if len(act.Args) > 0 {
			if p, ok := act.Args[0].(*commonpb.Payload); ok {
				var in workflows.SessionInput
				if a.payloads().FromPayload(p, &in) == nil {
					d.Prompt, d.Model = in.Prompt, in.Model
				}
			}
		}
	}
	for _, w := range desc.Info.RunningWorkflows {
		d.Running = append(d.Running, w.WorkflowID)
	}
	for _, r := range desc.Info.RecentActions {
		ra := scheduleAction{ScheduledAt: r.ScheduleTime, StartedAt: r.ActualTime}
		if r.StartWorkflowResult != nil {
			ra.SessionID = r.StartWorkflowResult.WorkflowID
			ra.Status = a.sessionStatus(ctx, c, ra.SessionID)
		}
		d.Recent = append(d.Recent, ra)
	}
	if n := len(d.Recent); n > 0 {
		last := d.Recent[n-1]
		d.LastRun, d.LastSession, d.LastStatus = &last.StartedAt, last.SessionID, last.Status
	}
	return d
}

// specText is the schedule's spec for people: as it was typed, from the
// memo create writes, else worked out from the spec the server returns
// (for schedules made with another tool).
func specText(dc converter.DataConverter, memo *commonpb.Memo, spec *client.ScheduleSpec) string {
	if p, ok := memo.GetFields()[specMemo]; ok {
		var s string
		if dc.FromPayload(p, &s) == nil && s != "" {
			return s + jitterText(spec)
		}
	}
	if spec == nil {
		return "-"
	}
	var parts []string
	for _, iv := range spec.Intervals {
		parts = append(parts, "every "+shortDuration(iv.Every))
	}
	parts = append(parts, spec.CronExpressions...)
	if n := len(spec.Calendars); n > 0 {
		parts = append(parts, fmt.Sprintf("%d calendar spec(s)", n))
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ") + jitterText(spec)
}

func jitterText(spec *client.ScheduleSpec) string {
	if spec == nil || spec.Jitter == 0 {
		return ""
	}
	return " (jitter " + shortDuration(spec.Jitter) + ")"
}

// when prints a time as list does, or "-" for none.
func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

func renderScheduleList(w io.Writer, rows []scheduleRow) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCHEDULE\tSPEC\tNEXT RUN\tLAST RUN\tLAST STATUS\tPAUSED")
	for _, r := range rows {
		next := when(r.NextRun)
		if r.Paused {
			next = "-" // the server still computes times a paused schedule skips
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Spec, next, when(r.LastRun), dash(r.LastStatus), yesNo(r.Paused))
	}
	tw.Flush()
}

func renderScheduleDetail(w io.Writer, d scheduleDetail) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "schedule\t%s\n", d.Name)
	fmt.Fprintf(tw, "spec\t%s\n", d.Spec)
	fmt.Fprintf(tw, "overlap\t%s\n", d.Overlap)
	fmt.Fprintf(tw, "paused\t%s\n", yesNo(d.Paused))
	if d.Note != "" {
		fmt.Fprintf(tw, "note\t%s\n", oneLine(d.Note))
	}
	fmt.Fprintf(tw, "prompt\t%s\n", cut(oneLine(d.Prompt), maxArgsPreview))
	fmt.Fprintf(tw, "model\t%s\n", cmp.Or(d.Model, "(worker default)"))
	fmt.Fprintf(tw, "task queue\t%s\n", d.TaskQueue)
	fmt.Fprintf(tw, "sessions\t%s<time>\n", d.SessionID)
	fmt.Fprintf(tw, "actions\t%d\n", d.Actions)
	if !d.Paused && len(d.Next) > 0 {
		fmt.Fprintf(tw, "next run\t%s\n", when(&d.Next[0]))
	}
	tw.Flush()
	if len(d.Recent) == 0 {
		fmt.Fprintln(w, "\nno runs yet")
		return
	}
	fmt.Fprintln(w, "\nrecent runs:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  STARTED\tSESSION\tSTATUS")
	for i := len(d.Recent) - 1; i >= 0; i-- { // newest first
		r := d.Recent[i]
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", when(&r.StartedAt), dash(r.SessionID), dash(r.Status))
	}
	tw.Flush()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
