package workflows

import (
	"fmt"
	"sort"
	"unicode/utf8"

	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/session"
	tools "github.com/longrun/longrun/toolspec" // the tool contract; renamed in one go after issue 30's merges
	"github.com/longrun/longrun/untrusted"
)

// Spec is the tool the model may call by name (session.Catalog): a hidden
// tool is the runtime's, never the model's.
func (s *driver) Spec(name string) (tools.Spec, bool) {
	sp, ok := s.specs[name]
	return sp, ok && sp.Exposure != tools.ExposureHidden
}

// Names are the session's tool names, sorted (session.Catalog).
func (s *driver) Names() []string {
	names := make([]string, 0, len(s.specs))
	for n := range s.specs {
		names = append(names, n)
	}
	sort.Strings(names) // map order is random; the text must replay
	return names
}

// runBatch runs the calls of one assistant message and appends exactly one
// result per call to the conversation, in the model's call order. Each
// call is decided first (session.Decide): answered at once, run, or left
// waiting for an approval signal. On cancellation it returns the
// CanceledError after every call has its (synthetic) result.
func (s *driver) runBatch(ctx workflow.Context, calls []conversation.ToolCall) error {
	s.batch = session.NewBatch(calls)
	now := workflow.Now(ctx)
	for i, c := range calls {
		d := session.Decide(c, s, s.engine)
		if d.Verdict != session.Unknown {
			s.load(c.Name) // a deferred tool the model already knows of: send it from now on
		}
		review := d.Verdict == session.Ask && s.reviews(c, d)
		s.must(s.batch.Policy(i, d, review, now))
	}
	return s.driveBatch(ctx)
}

// resumeBatch takes up a batch carried across continue-as-new: its calls
// keep their results, decisions and waiting state under the same ids.
func (s *driver) resumeBatch(ctx workflow.Context, carried *session.Batch) error {
	s.batch = carried
	s.batch.Resume(func(name string) bool { _, ok := s.specs[name]; return ok })
	return s.driveBatch(ctx)
}

// driveBatch plans the batch, runs its calls and waits for all of them,
// or, when the run should continue as new while calls only wait for a
// person, returns errSwitch with the batch intact for the next run.
func (s *driver) driveBatch(ctx workflow.Context) error {
	s.batch.Schedule(func(name string) tools.Spec { return s.specs[name] })
	s.afterDecision(ctx)
	for i, c := range s.batch.Calls {
		if _, done := c.State.(session.Done); done {
			continue
		}
		cs := s.ref(i)
		workflow.GoNamed(ctx, "call:"+c.Call.Ref, func(ctx workflow.Context) { s.runCall(ctx, cs) })
	}

	switching := func() bool { return s.wantSwitch(ctx) && s.batch.CanCarry() }
	err := workflow.Await(ctx, func() bool { return s.batch.Finished() || switching() })
	if err == nil && !s.batch.Finished() {
		return errSwitch
	}
	if err != nil {
		// Cancelled: every goroutine still finishes its call (a running
		// activity is cancelled and waited for), so wait on a context
		// that is not cancelled.
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		if werr := workflow.Await(dctx, s.batch.Finished); werr != nil {
			return werr
		}
	}
	for _, c := range s.batch.Calls {
		r, _ := c.Result()
		s.Messages = append(s.Messages, conversation.ToolMessage(r))
		if r.Reason != conversation.ReasonRan && r.Content != "" {
			// What failed, not only that it did: the log is often all an
			// operator (or a failed test) has.
			s.logger(ctx).Info("tool call", "id", c.Call.Ref, "call_id", c.Call.ID, "tool", c.Call.Name, "reason", r.Reason,
				"detail", logDetail(r.Content))
			continue
		}
		s.logger(ctx).Info("tool call", "id", c.Call.Ref, "call_id", c.Call.ID, "tool", c.Call.Name, "reason", r.Reason)
	}
	s.recordBatch()
	s.batch = nil
	if err != nil {
		return err
	}
	s.setPhase(ctx, PhaseRunning)
	return nil
}

// logDetailBytes is how much of a call's result that did not run cleanly
// the worker's log line carries: its end, where a command's exit status
// and the tool's own complaint are.
const logDetailBytes = 400

// logDetail is the end of a result on one line, made visible, saying how
// much came before it.
func logDetail(content string) string {
	if len(content) <= logDetailBytes {
		return untrusted.Line(content)
	}
	cut := len(content) - logDetailBytes
	for cut < len(content) && !utf8.RuneStart(content[cut]) {
		cut++
	}
	return fmt.Sprintf("(%d bytes before) %s", cut, untrusted.Line(content[cut:]))
}
