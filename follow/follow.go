// Package follow reads a session's event stream (docs/EVENTS.md) the one
// way every client does: `longrun watch`, `longrun events --follow`, the
// console and the chat. Follow asks the session's `events` query for what
// is new, merges in the text the model is writing (the model activity's
// heartbeat, which the workflow does not see), follows the session across
// continue-as-new (its id never changes, and sequence numbers go on), says
// when it lost the server (or the server answers but no worker does) and
// when it is back, and ends when the session has closed and its last
// events are out.
//
// Every string in an Event that the model or a tool controls is data: a
// client shows it through package untrusted.
package follow

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"

	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/workflows"
)

// Kinds Follow adds to the session's own (eventlog.Kind*). These are
// product too (docs/EVENTS.md).
const (
	// KindPartial is the reply the model is writing, as its heartbeat
	// carries it: the last 1,000 bytes of its text (or of its reasoning,
	// prefixed "thinking: "), or what it waits for. Each replaces the
	// previous one; the turn's text event replaces them all.
	KindPartial = "partial"
	// KindMissed says Missed events are no longer kept: the reader was
	// further behind than the log's bounded tail.
	KindMissed = "missed"
	// KindLost says the server stopped answering (Text: why); Follow
	// keeps trying. KindBack says it answers again, and the events
	// query with it.
	KindLost = "lost"
	KindBack = "back"
	// KindNoWorker says the server answers but the session's events
	// query does not: a query is answered by a worker, and none did in
	// time (all stopped, or none polls the session's task queue). The
	// session itself waits, nothing is lost; Follow keeps trying, and
	// KindBack says a worker answers again.
	KindNoWorker = "no_worker"
	// KindClosed is the last event: the session's execution closed
	// (Outcome: completed, failed, canceled, terminated, timed-out).
	KindClosed = "closed"
	// KindError ends the stream with an error that trying again cannot
	// mend (Text): no such session, a negative or future "after", a
	// worker too old to answer the events query.
	KindError = "error"
)

// Event is one item of the stream: a session event (Seq > 0) or one of
// the kinds Follow adds (Seq 0).
type Event struct {
	eventlog.Event
	// Missed is set on KindMissed: how many events were lost to the
	// log's bound.
	Missed int64 `json:"missed,omitempty"`
	// SubAgent is set on an event merged from a sub-agent
	// (Options.SubAgents): that sub-agent's session id, the session the
	// event is of (its Seq is that session's). Empty on the followed
	// session's own events.
	SubAgent string `json:"sub_agent,omitempty"`
}

// Client is the part of the Temporal client Follow uses.
type Client interface {
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error)
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
}

// Options tune Follow; the zero value is the defaults.
type Options struct {
	// Interval is the pause between two reads when nothing was new
	// (default 500 ms). Reads cost the session no history.
	Interval time.Duration
	// Timeout bounds one read (default 5 s): a session whose worker is
	// gone shows as lost, not as a frozen stream.
	Timeout time.Duration
	// DataConverter decodes the model activity's heartbeat (default: the
	// SDK's). A session whose payloads are encrypted needs the worker's
	// keys (codec.DataConverter); without them no partial text is shown.
	DataConverter converter.DataConverter
	// NoPartial leaves the heartbeat out: only the session's own events.
	NoPartial bool
	// SubAgents merges the events of the session's sub-agents (task
	// calls) into its stream, each with SubAgent set to the sub-agent
	// whose event it is (a nested one's keep their own): a sub-agent's
	// events come after its subagent_started and before its task call's
	// call_finished, followed live or read afterwards. Only session
	// events are merged: whether the server or a worker answers, and
	// when the session closed, are the parent's to say, and a
	// sub-agent's text being written is left out.
	SubAgents bool
}

// maxBackoff is the longest pause between tries while the server is lost.
const maxBackoff = 5 * time.Second

// Follow streams the session's events after sequence number after (0:
// from the first one kept) until ctx ends or the session closes, then
// closes the channel. Errors are events: KindLost or KindNoWorker and
// then KindBack while it retries, KindError when it cannot go on.
func Follow(ctx context.Context, c Client, sessionID string, after int64) <-chan Event {
	return FollowWith(ctx, c, sessionID, after, Options{})
}

// FollowWith is Follow with options.
func FollowWith(ctx context.Context, c Client, sessionID string, after int64, opts Options) <-chan Event {
	out := make(chan Event, 64)
	f := &follower{Reader: NewReader(c, sessionID, after, opts), out: out}
	go func() {
		defer close(out)
		f.run(ctx)
	}()
	return out
}

// Reader reads a session's events one step at a time, for a client that
// runs its own loop (watch, which describes the session each round
// anyway, and the console's endpoint). Follow is a loop around it.
type Reader struct {
	c     Client
	id    string
	after int64
	opts  Options

	streaming bool   // a model turn started and has not finished
	partial   string // the last partial text returned
	badCodec  bool   // the heartbeat did not decode: said once
	// kids are the sub-agents read with this session (Options.SubAgents)
	// until their end is read, in the order they started.
	kids []*kid
}

// kid is a sub-agent followed with its parent: its task call's id and
// the reader of its events.
type kid struct {
	call string
	r    *Reader
	err  error // the last read's, when it failed for now
}

// NewReader reads sessionID's events after sequence number after.
func NewReader(c Client, sessionID string, after int64, opts Options) *Reader {
	if opts.Interval <= 0 {
		opts.Interval = 500 * time.Millisecond
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.DataConverter == nil {
		opts.DataConverter = converter.GetDefaultDataConverter()
	}
	return &Reader{c: c, id: sessionID, after: after, opts: opts}
}

// After is the sequence number of the last event read: where the next
// read starts.
func (r *Reader) After() int64 { return r.after }

// Read asks the events query once for what is new: a KindMissed event
// first when the log no longer holds some of it, then the session's
// events, with Options.SubAgents its sub-agents' merged in (readKid
// says how). more says another read would return more at once. An error
// is the query's; Permanent tells whether trying again can mend it.
func (r *Reader) Read(ctx context.Context) (evs []Event, more bool, err error) {
	qctx, cancel := context.WithTimeout(ctx, r.opts.Timeout)
	defer cancel()
	page, err := Page(qctx, r.c, r.id, workflows.EventsRequest{After: r.after})
	if err != nil {
		return nil, false, err
	}
	if page.Missed > 0 {
		evs = append(evs, Event{Event: eventlog.Event{Kind: KindMissed, Time: time.Now(), Run: page.Run,
			Text: fmt.Sprintf("%d events after %d are no longer kept (the log holds %d on)", page.Missed, r.after, page.First)}, Missed: page.Missed})
	}
	for _, e := range page.Events {
		switch e.Kind {
		case eventlog.KindTurnStarted:
			r.streaming, r.partial = true, ""
		case eventlog.KindTurnFinished, eventlog.KindEnded:
			r.streaming = false
		}
		if r.opts.SubAgents && e.Kind == eventlog.KindCallFinished && e.Call != nil {
			// Its sub-agent has ended and its log is whole: the rest
			// of it comes before the task call's end.
			if i := slices.IndexFunc(r.kids, func(k *kid) bool { return k.call == e.Call.ID }); i >= 0 {
				evs = r.readKid(ctx, evs, r.kids[i], true)
			}
		}
		evs = append(evs, Event{Event: e})
		r.after = e.Seq
		if r.opts.SubAgents && e.Kind == eventlog.KindSubagentStarted && e.Session != "" && e.Session != r.id {
			opts := r.opts
			opts.NoPartial = true
			k := &kid{r: NewReader(r.c, e.Session, 0, opts)}
			if e.Call != nil {
				k.call = e.Call.ID
			}
			r.kids = append(r.kids, k)
			evs = r.readKid(ctx, evs, k, false) // what it did so far, right after its start
		}
	}
	if !page.More {
		for _, k := range slices.Clone(r.kids) {
			evs = r.readKid(ctx, evs, k, false)
		}
	}
	return evs, page.More, nil
}

// readKid appends what sub-agent k did since it was last read to evs,
// each event marked with its session (SubAgent). A sub-agent is read until its
// session_ended, or until a whole read once its task call's end was
// read (ended: nothing more will come). One whose events cannot be read
// for good is an error event with SubAgent set, and read no more; a read
// that failed for now is tried again with the parent's next read (the
// parent's own read says when the server or a worker does not answer).
func (r *Reader) readKid(ctx context.Context, evs []Event, k *kid, ended bool) []Event {
	done := false
	for {
		got, more, err := k.r.Read(ctx)
		k.err = err
		if err != nil {
			if Permanent(err) {
				evs = append(evs, Event{Event: eventlog.Event{Kind: KindError, Time: time.Now(),
					Text: fmt.Sprintf("the events of sub-agent %s cannot be read: %v", k.r.id, err)}, SubAgent: k.r.id})
				done = true
			}
			break
		}
		done = done || (ended && !more)
		for _, e := range got {
			if e.SubAgent == "" {
				e.SubAgent = k.r.id
				done = done || e.Kind == eventlog.KindEnded
			}
			evs = append(evs, e)
		}
		if !more {
			break
		}
	}
	if done {
		r.kids = slices.DeleteFunc(r.kids, func(o *kid) bool { return o == k })
	}
	return evs
}

// ReadAll reads every event the session holds after after, page by
// page, once: with opts.SubAgents its sub-agents' too (Read). A
// sub-agent whose last read failed is an error event with its SubAgent
// at the end: there is no next read to fill the gap.
func ReadAll(ctx context.Context, c Client, sessionID string, after int64, opts Options) ([]Event, error) {
	r := NewReader(c, sessionID, after, opts)
	var all []Event
	for {
		evs, more, err := r.Read(ctx)
		if err != nil {
			return nil, err
		}
		all = append(all, evs...)
		if !more {
			return append(all, r.unread()...), nil
		}
	}
}

// unread are error events for the sub-agents, at any depth, whose last
// read failed for now.
func (r *Reader) unread() []Event {
	var out []Event
	for _, k := range r.kids {
		if k.err != nil {
			out = append(out, Event{Event: eventlog.Event{Kind: KindError, Time: time.Now(),
				Text: fmt.Sprintf("the events of sub-agent %s could not be read now (%v); read again", k.r.id, k.err)}, SubAgent: k.r.id})
		}
		out = append(out, k.r.unread()...)
	}
	return out
}

// Page asks the session's events query once.
func Page(ctx context.Context, c Client, sessionID string, req workflows.EventsRequest) (workflows.EventsPage, error) {
	var page workflows.EventsPage
	v, err := c.QueryWorkflow(ctx, sessionID, "", workflows.QueryEvents, req)
	if err != nil {
		return page, err
	}
	if err := v.Get(&page); err != nil {
		return page, fmt.Errorf("decode events of %s: %w", sessionID, err)
	}
	return page, nil
}

// PartialOf is the model's reply so far as the heartbeat of the session's
// pending model call in desc carries it; ok is false when no model call
// is pending or it has not heartbeated yet.
func PartialOf(desc *workflowservice.DescribeWorkflowExecutionResponse, dc converter.DataConverter) (text string, ok bool, err error) {
	for _, pa := range desc.GetPendingActivities() {
		if pa.GetActivityType().GetName() != "CallModel" {
			continue
		}
		p := pa.GetHeartbeatDetails().GetPayloads()
		if len(p) == 0 {
			return "", false, nil
		}
		if err := dc.FromPayload(p[0], &text); err != nil {
			return "", false, err
		}
		return text, true, nil
	}
	return "", false, nil
}

// Permanent reports whether err, from Read, is one trying again cannot
// mend: the query failed in the session (a negative or future "after",
// a worker too old to know the events query) or there is no such
// session.
func Permanent(err error) bool {
	var qf *serviceerror.QueryFailed
	var nf *serviceerror.NotFound
	return errors.As(err, &qf) || errors.As(err, &nf)
}

// Streaming reports whether a model turn has started and not finished,
// as far as the events read say: the time to look for partial text.
func (r *Reader) Streaming() bool { return r.streaming }

// Partial is the model's reply so far, from the model activity's
// heartbeat in desc, when a model turn is streaming and the text changed
// since the last one returned.
func (r *Reader) Partial(desc *workflowservice.DescribeWorkflowExecutionResponse) (Event, bool) {
	if !r.streaming || r.opts.NoPartial {
		return Event{}, false
	}
	text, ok, err := PartialOf(desc, r.opts.DataConverter)
	switch {
	case err != nil && !r.badCodec:
		r.badCodec = true
		return Event{Event: eventlog.Event{Kind: KindPartial, Time: time.Now(),
			Text: "(the model's progress does not decode here: " + err.Error() + ")"}}, true
	case err != nil || !ok || text == r.partial:
		return Event{}, false
	}
	r.partial = text
	return Event{Event: eventlog.Event{Kind: KindPartial, Time: time.Now(), Text: text}}, true
}

// follower is Follow's loop.
type follower struct {
	*Reader
	out     chan<- Event
	said    string // KindLost or KindNoWorker while reads fail; "" while they work
	backoff time.Duration
}

// send hands e to the reader; false when ctx ended first.
func (f *follower) send(ctx context.Context, e Event) bool {
	select {
	case f.out <- e:
		return true
	case <-ctx.Done():
		return false
	}
}

func (f *follower) sendAll(ctx context.Context, evs []Event) bool {
	for _, e := range evs {
		if !f.send(ctx, e) {
			return false
		}
	}
	return true
}

func (f *follower) run(ctx context.Context) {
	for ctx.Err() == nil {
		evs, more, err := f.Read(ctx)
		if err != nil {
			if !f.readFailed(ctx, err) {
				return
			}
			continue
		}
		if f.said != "" {
			f.said = ""
			if !f.send(ctx, Event{Event: eventlog.Event{Kind: KindBack, Time: time.Now()}}) {
				return
			}
		}
		if !f.sendAll(ctx, evs) {
			return
		}
		if more {
			continue
		}
		dctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
		desc, err := f.c.DescribeWorkflowExecution(dctx, f.id, "")
		cancel()
		if err != nil {
			if !f.failed(ctx, err, KindLost) {
				return
			}
			continue
		}
		if status := desc.GetWorkflowExecutionInfo().GetStatus(); Closed(status) {
			f.finish(ctx, status)
			return
		}
		if p, ok := f.Partial(desc); ok && !f.send(ctx, p) {
			return
		}
		if !sleep(ctx, f.opts.Interval) {
			return
		}
	}
}

// readFailed handles an error of the events query. The query needs the
// server and a worker: a describe of the session (the server alone) says
// which one did not answer, so a person is told to start a worker, not to
// look for a dead server. A session that closed meanwhile ends the stream
// as a closed one does. It returns false when the stream ends.
func (f *follower) readFailed(ctx context.Context, err error) bool {
	if ctx.Err() != nil || Permanent(err) {
		return f.failed(ctx, err, KindLost)
	}
	dctx, cancel := context.WithTimeout(ctx, f.opts.Timeout)
	desc, derr := f.c.DescribeWorkflowExecution(dctx, f.id, "")
	cancel()
	switch {
	case derr != nil:
		return f.failed(ctx, err, KindLost)
	case Closed(desc.GetWorkflowExecutionInfo().GetStatus()):
		f.finish(ctx, desc.GetWorkflowExecutionInfo().GetStatus())
		return false
	}
	return f.failed(ctx, fmt.Errorf("the server answers, but no worker answered the session's events query; is one running for task queue %q? (%w)",
		desc.GetExecutionConfig().GetTaskQueue().GetName(), err), KindNoWorker)
}

// failed handles an error of a read: one that trying again cannot mend
// ends the stream; any other is said (as kind: KindLost or KindNoWorker)
// once, and again only when the kind changes, and tried again after a
// growing pause. It returns false when the stream ends.
func (f *follower) failed(ctx context.Context, err error, kind string) bool {
	if ctx.Err() != nil {
		return false
	}
	if Permanent(err) {
		f.send(ctx, Event{Event: eventlog.Event{Kind: KindError, Time: time.Now(), Text: err.Error()}})
		return false
	}
	if f.said != kind {
		f.said, f.backoff = kind, f.opts.Interval
		if !f.send(ctx, Event{Event: eventlog.Event{Kind: kind, Time: time.Now(), Text: err.Error()}}) {
			return false
		}
	} else {
		f.backoff = min(2*f.backoff, maxBackoff)
	}
	return sleep(ctx, f.backoff)
}

// finish reads the last events of a closed session and says how it
// closed.
func (f *follower) finish(ctx context.Context, status enumspb.WorkflowExecutionStatus) {
	for {
		evs, more, err := f.Read(ctx)
		if err != nil || !f.sendAll(ctx, evs) || !more {
			break
		}
	}
	f.send(ctx, Event{Event: eventlog.Event{Kind: KindClosed, Time: time.Now(), Outcome: StatusName(status)}})
}

// Closed reports whether an execution's status (of the session's latest
// run) says it has ended: continued-as-new is not an end.
func Closed(st enumspb.WorkflowExecutionStatus) bool {
	return st != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING && st != enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW &&
		st != enumspb.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED
}

// StatusName is how a closed execution's status reads: completed,
// failed, canceled, terminated, timed-out.
func StatusName(st enumspb.WorkflowExecutionStatus) string {
	switch st {
	case enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return "completed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_FAILED:
		return "failed"
	case enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED:
		return "canceled"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TERMINATED:
		return "terminated"
	case enumspb.WORKFLOW_EXECUTION_STATUS_TIMED_OUT:
		return "timed-out"
	}
	return st.String()
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
