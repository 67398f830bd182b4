package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/untrusted"
	"github.com/longrun/longrun/workflows"
)

// sessionView is `show`: what the server knows (describe) and what the
// session says about itself (queries).
type sessionView struct {
	ID       string                 `json:"session_id"`
	RunID    string                 `json:"run_id"`
	Status   string                 `json:"status"`
	Summary  string                 `json:"summary,omitempty"`
	Start    time.Time              `json:"start_time"`
	Close    *time.Time             `json:"close_time,omitempty"`
	Ended    *ending                `json:"ended,omitempty"` // how a session that did not complete ended, and why
	State    *workflows.Status      `json:"state,omitempty"`
	Total    int                    `json:"messages_total"`
	Messages []conversation.Message `json:"messages"`
}

func (a *app) cmdShow(ctx context.Context, fs *flag.FlagSet, args []string) error {
	var last int
	var full bool
	fs.IntVar(&last, "messages", 6, "how many of the last messages to show (0 = none)")
	fs.BoolVar(&full, "full", false, "show tool calls and results whole instead of cut previews")
	session, err := onlySession(fs, args)
	if err != nil {
		return err
	}
	if last < 0 {
		return usagef("--messages must not be negative")
	}
	c, err := a.connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	desc, err := c.DescribeWorkflowExecution(ctx, session, "")
	if err != nil {
		return sessionError(err, "describe", session, a.cfg.Namespace)
	}
	info := desc.GetWorkflowExecutionInfo()
	v := sessionView{
		ID:       session,
		RunID:    info.GetExecution().GetRunId(),
		Status:   statusName(info.GetStatus().String()),
		Summary:  payloadText(a.payloads(), desc.GetExecutionConfig().GetUserMetadata().GetSummary()),
		Start:    info.GetStartTime().AsTime(),
		Messages: []conversation.Message{},
	}
	if info.GetCloseTime() != nil {
		t := info.GetCloseTime().AsTime()
		v.Close = &t
	}
	v.Ended = a.ended(ctx, c, desc)
	// The queries need a worker (a closed session is replayed by one); what
	// describe said is still worth printing when they fail.
	st, qerr := a.queryStatus(ctx, c, session)
	var msgs []conversation.Message
	if qerr == nil {
		v.State = &st
		msgs, qerr = a.queryConversation(ctx, c, session)
	}
	v.Total = len(msgs)
	if last > 0 && len(msgs) > 0 {
		v.Messages = msgs[max(0, len(msgs)-last):]
	}
	if a.cfg.JSON {
		if err := a.printJSON(v); err != nil {
			return err
		}
	} else {
		renderShow(a.stdout, v, style{full: full, more: fullHint("show", session)})
	}
	return qerr
}

func renderShow(w io.Writer, v sessionView, st style) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "session\t%s\n", v.ID)
	fmt.Fprintf(tw, "run\t%s\n", v.RunID)
	fmt.Fprintf(tw, "status\t%s\n", v.Status)
	if v.Summary != "" {
		fmt.Fprintf(tw, "summary\t%s\n", oneLine(v.Summary))
	}
	fmt.Fprintf(tw, "started\t%s\n", v.Start.Local().Format(time.DateTime))
	if v.Close != nil {
		fmt.Fprintf(tw, "closed\t%s (after %s)\n", v.Close.Local().Format(time.DateTime), v.Close.Sub(v.Start).Round(time.Second))
	}
	endedRow(tw, v.Ended)
	if st := v.State; st != nil {
		statusRows(tw, *st)
	}
	tw.Flush()
	if len(v.Messages) > 0 {
		fmt.Fprintf(w, "\nlast %d of %d messages:\n", len(v.Messages), v.Total)
		renderConversation(w, v.Messages, st)
	}
	if v.State != nil && v.State.PendingApprovals > 0 {
		fmt.Fprintf(w, "\nwaiting for you: %s pending %s\n", progName, shellQuote(v.ID))
	}
}

func (a *app) cmdHistory(ctx context.Context, fs *flag.FlagSet, args []string) error {
	return a.onSession(ctx, fs, args, func(c sessionClient, session string) error {
		h := &historypb.History{}
		it := c.GetWorkflowHistory(ctx, session, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				return sessionError(err, "history", session, a.cfg.Namespace)
			}
			h.Events = append(h.Events, ev)
		}
		if a.cfg.JSON {
			// protojson, the format of `temporal workflow show --output
			// json`, so client.HistoryFromJSON and the replayer read it.
			b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(h)
			if err != nil {
				return fmt.Errorf("encode history of %s: %w", session, err)
			}
			_, err = fmt.Fprintln(a.stdout, string(untrusted.JSON(b)))
			return err
		}
		renderHistory(a.stdout, a.payloads(), h)
		return nil
	})
}

// renderHistory is one line per event with what the UI would label it:
// activity summaries, signal and update names, timer summaries.
func renderHistory(w io.Writer, dc converter.DataConverter, h *historypb.History) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, ev := range h.GetEvents() {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", ev.GetEventId(), ev.GetEventTime().AsTime().Local().Format("15:04:05.000"),
			eventName(ev.GetEventType()), preview(eventDetail(dc, ev), maxArgsPreview, "see all: "+progName+" history --json"))
	}
	tw.Flush()
}

// eventName turns EVENT_TYPE_ACTIVITY_TASK_SCHEDULED into
// ActivityTaskScheduled, as the UI and the temporal CLI name events.
// The API's String already does so; the conversion is for an older one.
func eventName(t enumspb.EventType) string {
	s := t.String()
	if !strings.HasPrefix(s, "EVENT_TYPE_") {
		return s
	}
	var b strings.Builder
	for _, part := range strings.Split(strings.TrimPrefix(s, "EVENT_TYPE_"), "_") {
		if part != "" {
			b.WriteString(part[:1] + strings.ToLower(part[1:]))
		}
	}
	return b.String()
}

func eventDetail(dc converter.DataConverter, ev *historypb.HistoryEvent) string {
	summary := payloadText(dc, ev.GetUserMetadata().GetSummary())
	switch {
	case ev.GetActivityTaskScheduledEventAttributes() != nil:
		return ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() + ": " + summary
	case ev.GetWorkflowExecutionSignaledEventAttributes() != nil:
		at := ev.GetWorkflowExecutionSignaledEventAttributes()
		if at.GetSignalName() == workflows.SignalApproval {
			return at.GetSignalName() + " signal: " + approvalText(dc, at.GetInput().GetPayloads())
		}
		return at.GetSignalName()
	case ev.GetWorkflowExecutionUpdateAcceptedEventAttributes() != nil:
		in := ev.GetWorkflowExecutionUpdateAcceptedEventAttributes().GetAcceptedRequest().GetInput()
		if in.GetName() == workflows.UpdateApprove {
			return in.GetName() + " update: " + approvalText(dc, in.GetArgs().GetPayloads())
		}
		return in.GetName()
	case ev.GetWorkflowExecutionUpdateCompletedEventAttributes() != nil:
		out := ev.GetWorkflowExecutionUpdateCompletedEventAttributes().GetOutcome()
		if f := out.GetFailure(); f != nil {
			return "refused: " + f.GetMessage()
		}
		var o workflows.ApprovalOutcome
		if ps := out.GetSuccess().GetPayloads(); len(ps) == 1 && dc.FromPayload(ps[0], &o) == nil && o.Decision != "" {
			ids := o.IDs
			if len(ids) == 0 {
				ids = o.CallIDs // a sub-agent's forward, or a history from before ids
			}
			return fmt.Sprintf("decided %s for %s", o.Decision, strings.Join(ids, ", "))
		}
		return ""
	case ev.GetActivityTaskFailedEventAttributes() != nil:
		return ev.GetActivityTaskFailedEventAttributes().GetFailure().GetMessage()
	case ev.GetWorkflowTaskFailedEventAttributes() != nil:
		return ev.GetWorkflowTaskFailedEventAttributes().GetFailure().GetMessage()
	}
	return summary
}

// approvalText is an approval's call id and decision as history shows
// them: `call c_1, decision approve`, `call c_2, decision deny, feedback "..."`.
func approvalText(dc converter.DataConverter, ps []*commonpb.Payload) string {
	var ap workflows.Approval
	if len(ps) != 1 || dc.FromPayload(ps[0], &ap) != nil {
		return "(payload does not decode)"
	}
	s := "call " + ap.ID
	if ap.ID == "" {
		s = "call " + ap.CallID // named by the model's id
	}
	if ap.All {
		s = "all waiting calls"
	}
	s += ", decision " + ap.Decision
	if ap.Remember != "" {
		s += ", remember " + ap.Remember
	}
	if ap.Feedback != "" {
		s += fmt.Sprintf(", feedback %q", ap.Feedback)
	}
	return s
}

// payloadText decodes a string payload (summaries are JSON strings); a
// missing one is empty.
func payloadText(dc converter.DataConverter, p *commonpb.Payload) string {
	if p == nil {
		return ""
	}
	var s string
	if err := dc.FromPayload(p, &s); err != nil {
		return ""
	}
	return s
}
