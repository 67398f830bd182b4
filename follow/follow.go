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
	"sync"
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
	// calls) into its stream, each with Session set to the sub-agent
	// whose event it is: from the parent's subagent_started on, a
	// sub-agent's events read so far come at once, the rest as they
	// happen, and its sub-agents' too. Only its own session events are
	// merged: the parent's stream says when the server or a worker is
	// lost and when the session closed, and a sub-agent's text being
	// written is left out (it would replace the parent's).
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
	f := &follower{Reader: NewReader(c, sessionID, after, opts)}
	f.emit = func(ctx context.Context, e Event) bool {
		select {
		case out <- e:
			return true
		case <-ctx.Done():
			return false
		}
	}
	go func() {
		defer close(out)
		f.run(ctx)
		f.waitSubs() // no sub-agent's follower sends once out is closed
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
// events. more says another read would return more at once. An error
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
		evs = append(evs, Event{Event: e})
		r.after = e.Seq
	}
	return evs, page.More, nil
}

// ReadAll reads every event the session holds after after, page by
// page, once. With opts.SubAgents each sub-agent's events come right
// after its subagent_started, Session set (its own sub-agents' too); one
// whose events cannot be read gets an error event with Session set in
// their place, so the parent's are never lost for a child's. An error
// is the session's own read.
func ReadAll(ctx context.Context, c Client, sessionID string, after int64, opts Options) ([]Event, error) {
	r := NewReader(c, sessionID, after, opts)
	var all []Event
	for {
		evs, more, err := r.Read(ctx)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			all = append(all, e)
			if !opts.SubAgents || e.Kind != eventlog.KindSubagentStarted || e.Session == "" || e.Session == sessionID {
				continue
			}
			sub, err := ReadAll(ctx, c, e.Session, 0, opts)
			if err != nil {
				sub = []Event{{Event: eventlog.Event{Kind: KindError, Time: time.Now(), Text: fmt.Sprintf("the events of sub-agent %s: %v", e.Session, err)}}}
			}
			for _, se := range sub {
				if se.Session == "" {
					se.Session = e.Session
				}
				all = append(all, se)
			}
		}
		if !more {
			return all, nil
		}
	}
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

// follower is Follow's loop, for the session followed or, with
// Options.SubAgents, one of its sub-agents.
type follower struct {
	*Reader
	// emit hands an event on: to Follow's channel, or a sub-agent's
	// through its parent's emit. It is false when ctx ended first.
	emit    func(context.Context, Event) bool
	said    string // KindLost or KindNoWorker while reads fail; "" while they work
	backoff time.Duration
	// mu orders a read and the sending of what it read against a
	// parent's flush (subagent, sendAll): both read the same Reader.
	mu   sync.Mutex
	subs sync.WaitGroup // the sub-agents' followers still running
	// kids are the sub-agents followed now, by their task call's id.
	kids map[string]*follower
	// subsCtx is the sub-agents' followers' context, stopSubs ends
	// them (both nil before the first).
	subsCtx  context.Context
	stopSubs context.CancelFunc
}

// subsGrace is how long a closed session's stream waits for its
// sub-agents' last events before it says it closed: a sub-agent closes
// before its parent's task call ends, so this is only reached when one
// was left behind (a parent terminated, a child no worker runs).
const subsGrace = 10 * time.Second

// waitSubs waits for the sub-agents' followers, at most subsGrace, then
// ends those still running.
func (f *follower) waitSubs() {
	f.mu.Lock()
	stop := f.stopSubs
	f.mu.Unlock()
	if stop == nil {
		return
	}
	done := make(chan struct{})
	go func() {
		f.subs.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(subsGrace):
		stop()
		<-done
	}
	stop()
}

// send hands e to the reader; false when ctx ended first.
func (f *follower) send(ctx context.Context, e Event) bool {
	return f.emit(ctx, e)
}

// sendAll hands the events read to the reader, and with
// Options.SubAgents follows each sub-agent that started in them. The end
// of a task call whose sub-agent is followed waits for the rest of that
// sub-agent's events (it has ended, so its log is whole): they come
// before it, not whenever its follower next reads. The caller holds mu.
func (f *follower) sendAll(ctx context.Context, evs []Event) bool {
	for _, e := range evs {
		if e.Kind == eventlog.KindCallFinished && e.Call != nil {
			if kid := f.kids[e.Call.ID]; kid != nil {
				delete(f.kids, e.Call.ID)
				if !kid.flush(ctx) {
					return false
				}
			}
		}
		if !f.send(ctx, e) {
			return false
		}
		if f.opts.SubAgents && e.Kind == eventlog.KindSubagentStarted && e.Session != "" && e.Session != f.id {
			if !f.subagent(ctx, e) {
				return false
			}
		}
	}
	return true
}

// flush reads and hands on what the session holds that was not read
// yet. A read error leaves the rest to its follower's own loop.
func (f *follower) flush(ctx context.Context) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		evs, more, err := f.Read(ctx)
		if err != nil {
			return true
		}
		if !f.sendAll(ctx, evs) {
			return false
		}
		if !more {
			return true
		}
	}
}

// subagent follows the sub-agent child: what it did so far is handed on
// now, right after the parent's subagent_started and before the
// parent's next event, so a session read after the fact reads in order;
// the rest is followed beside the parent until the sub-agent closes.
// Its events carry Session (a nested sub-agent's keep their own), and
// only its session events are handed on: lost, back, closed and the
// like are the parent stream's to say. A sub-agent whose events cannot
// be read is said once, as an error event with Session set, which ends
// only its part.
func (f *follower) subagent(ctx context.Context, started Event) bool {
	child := started.Session
	if f.stopSubs == nil {
		f.subsCtx, f.stopSubs = context.WithCancel(ctx)
	}
	ctx = f.subsCtx
	opts := f.opts
	opts.NoPartial = true
	sub := &follower{Reader: NewReader(f.c, child, 0, opts)}
	sub.emit = func(ctx context.Context, e Event) bool {
		switch e.Kind {
		case KindPartial, KindLost, KindBack, KindNoWorker, KindClosed:
			return true
		}
		if e.Session == "" {
			e.Session = child
		}
		return f.emit(ctx, e)
	}
	if !sub.flush(ctx) { // a read error: the follower below tries again, or says why not
		return false
	}
	if started.Call != nil {
		if f.kids == nil {
			f.kids = map[string]*follower{}
		}
		f.kids[started.Call.ID] = sub
	}
	f.subs.Add(1)
	go func() {
		defer f.subs.Done()
		sub.run(ctx)
		sub.waitSubs()
	}()
	return true
}

func (f *follower) run(ctx context.Context) {
	for ctx.Err() == nil {
		more, ok, err := f.step(ctx)
		if !ok {
			return
		}
		if err != nil {
			if !f.readFailed(ctx, err) {
				return
			}
			continue
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
		f.mu.Lock()
		p, ok := f.Partial(desc)
		f.mu.Unlock()
		if ok && !f.send(ctx, p) {
			return
		}
		if !sleep(ctx, f.opts.Interval) {
			return
		}
	}
}

// step reads once and hands on what it read (after KindBack when reads
// had failed). ok is false when the stream ends; err is the read's.
func (f *follower) step(ctx context.Context) (more, ok bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	evs, more, err := f.Read(ctx)
	if err != nil {
		return false, true, err
	}
	if f.said != "" {
		f.said = ""
		if !f.send(ctx, Event{Event: eventlog.Event{Kind: KindBack, Time: time.Now()}}) {
			return false, false, nil
		}
	}
	return more, f.sendAll(ctx, evs), nil
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
	if !f.flush(ctx) {
		return
	}
	f.waitSubs() // their last events come before the end
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
