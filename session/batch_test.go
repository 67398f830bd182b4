package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/guardian"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// event is one cause of a transition, sent to call i of a batch.
type event struct {
	name string
	send func(b *Batch, i int) error
}

func ranResult() conversation.ToolResult {
	return conversation.ToolResult{Content: "ok", Reason: conversation.ReasonRan}
}

// events are every event a call's life knows, each with what it carries.
var events = []event{
	{"policy: run", func(b *Batch, i int) error { return b.Tell(i, PolicyEvent{Decision: Decision{Verdict: Run}, Now: t0}) }},
	{"policy: ask", func(b *Batch, i int) error {
		return b.Tell(i, PolicyEvent{Decision: Decision{Verdict: Ask, Why: "writes"}, Now: t0})
	}},
	{"policy: ask the guardian", func(b *Batch, i int) error {
		return b.Tell(i, PolicyEvent{Decision: Decision{Verdict: Ask, Why: "writes"}, Review: true, Now: t0})
	}},
	{"policy: denied", func(b *Batch, i int) error {
		r := AnswerDeniedByPolicy.Result(Facts{Detail: "rule"})
		return b.Tell(i, PolicyEvent{Decision: Decision{Verdict: Denied, Result: &r}, Now: t0})
	}},
	{"prepared", func(b *Batch, i int) error { return b.Tell(i, PreparedEvent{Arguments: `{"patch":"x"}`}) }},
	{"guardian: approve", func(b *Batch, i int) error {
		return b.Tell(i, ReviewEvent{Verdict: guardian.Verdict{Decision: guardian.Approve, Reason: "fine"}, Now: t0})
	}},
	{"guardian: deny", func(b *Batch, i int) error {
		return b.Tell(i, ReviewEvent{Verdict: guardian.Verdict{Decision: guardian.Deny, Reason: "no"}, Now: t0})
	}},
	{"guardian: ask", func(b *Batch, i int) error {
		return b.Tell(i, ReviewEvent{Verdict: guardian.Verdict{Decision: guardian.AskPerson, Reason: "unsure"}, Now: t0})
	}},
	{"person: approve", func(b *Batch, i int) error {
		return b.Tell(i, DecideEvent{Approval: Approval{Decision: DecisionApprove}})
	}},
	{"person: deny", func(b *Batch, i int) error {
		return b.Tell(i, DecideEvent{Approval: Approval{Decision: DecisionDeny, Feedback: "not that"}})
	}},
	{"remembered rule", func(b *Batch, i int) error { return b.Tell(i, ReleaseEvent{}) }},
	{"decision taken in", func(b *Batch, i int) error { return b.Tell(i, TakeInEvent{}) }},
	{"approval timeout", func(b *Batch, i int) error { return b.Tell(i, TimeoutEvent{After: time.Hour}) }},
	{"interrupt", func(b *Batch, i int) error { return b.Tell(i, StopEvent{Interrupted: true}) }},
	{"cancel", func(b *Batch, i int) error { return b.Tell(i, StopEvent{}) }},
	{"start", func(b *Batch, i int) error { return b.Tell(i, StartEvent{}) }},
	{"lost worker", func(b *Batch, i int) error { return b.Tell(i, WorkerLostEvent{}) }},
	{"result", func(b *Batch, i int) error { return b.Tell(i, RanEvent{Result: ranResult()}) }},
	{"run switch", func(b *Batch, i int) error { b.Resume(func(string) bool { return true }); return nil }},
	{"run switch, tool gone", func(b *Batch, i int) error { b.Resume(func(string) bool { return false }); return nil }},
}

// states are one call in each state it can be in.
var states = []struct {
	name  string
	state CallState
}{
	{"proposed", Proposed{}},
	{"preparing", Preparing{Then: Waiting{Reason: "writes", Since: t0}}},
	{"reviewing", Reviewing{Reason: "writes"}},
	{"waiting", Waiting{Reason: "writes", Since: t0}},
	{"decided: approve", Decided{By: ByPerson, Decision: Approval{Decision: DecisionApprove}}},
	{"decided: deny", Decided{By: ByPerson, Decision: Approval{Decision: DecisionDeny, Feedback: "no"}}},
	{"approved", Approved{By: ByPolicy}},
	{"running", Running{Approved: Approved{By: ByPerson}}},
	{"done", Done{Result: ranResult()}},
}

func oneCall(st CallState) *Batch {
	return &Batch{Calls: []Call{{Call: conversation.ToolCall{ID: "m1", Ref: "c1", Name: "write", Arguments: `{}`}, State: st}}}
}

// TestBatchEveryStateAndEvent walks every state × event: each event
// either moves the call to the state the table says or is refused and
// changes nothing. The count is printed.
func TestBatchEveryStateAndEvent(t *testing.T) {
	t.Parallel()
	want := map[string]map[string]string{ // state -> event -> next state ("" : refused)
		"proposed": {"policy: run": "approved", "policy: ask": "waiting", "policy: ask the guardian": "reviewing",
			"policy: denied": "done", "interrupt": "done", "cancel": "done", "run switch": "proposed", "run switch, tool gone": "done"},
		"preparing": {"prepared": "waiting", "interrupt": "done", "cancel": "done", "remembered rule": "preparing",
			"result": "done", "run switch": "preparing", "run switch, tool gone": "done"},
		"reviewing": {"guardian: approve": "approved", "guardian: deny": "done", "guardian: ask": "waiting",
			"interrupt": "done", "cancel": "done", "run switch": "reviewing", "run switch, tool gone": "done"},
		"waiting": {"person: approve": "decided", "person: deny": "decided", "remembered rule": "decided",
			"approval timeout": "done", "interrupt": "done", "cancel": "done", "run switch": "waiting", "run switch, tool gone": "done"},
		"decided: approve": {"decision taken in": "approved", "interrupt": "done", "cancel": "done",
			"run switch": "approved", "run switch, tool gone": "done"},
		"decided: deny": {"decision taken in": "done", "interrupt": "done", "cancel": "done",
			"run switch": "done", "run switch, tool gone": "done"},
		"approved": {"start": "running", "interrupt": "done", "cancel": "done", "run switch": "approved", "run switch, tool gone": "done"},
		"running":  {"lost worker": "running", "result": "done", "run switch": "running", "run switch, tool gone": "done"},
		"done":     {"run switch": "done", "run switch, tool gone": "done"},
	}
	walked, refused := 0, 0
	for _, st := range states {
		for _, ev := range events {
			t.Run(st.name+" × "+ev.name, func(t *testing.T) {
				b := oneCall(st.state)
				before := clone(t, b)
				err := ev.send(b, 0)
				next := want[st.name][ev.name]
				if next == "" {
					require.ErrorIs(t, err, ErrNotAllowed)
					require.Equal(t, before, clone(t, b), "a refused event changes nothing")
					return
				}
				require.NoError(t, err)
				require.Equal(t, next, b.Calls[0].State.Name())
			})
			walked++
			if want[st.name][ev.name] == "" {
				refused++
			}
		}
	}
	fmt.Printf("session.Batch: %d states × %d events = %d transitions walked (%d allowed, %d refused)\n",
		len(states), len(events), walked, walked-refused, refused)
	require.Equal(t, len(states)*len(events), walked)
}

// TestBatchTellRefusesAnUnknownEvent: an event Tell does not know is
// refused, never dropped.
func TestBatchTellRefusesAnUnknownEvent(t *testing.T) {
	t.Parallel()
	b := oneCall(Proposed{})
	require.ErrorIs(t, b.Tell(0, nil), ErrNotAllowed)
	require.Equal(t, "proposed", b.Calls[0].State.Name())
}

// TestBatchForbiddenEvents: a decision for a call that is decided, for a
// call the batch does not have, and a deny after approval are refused.
func TestBatchForbiddenEvents(t *testing.T) {
	t.Parallel()
	b := oneCall(Waiting{Reason: "writes", Since: t0})
	require.ErrorIs(t, b.Decide(1, Approval{Decision: DecisionApprove}), ErrUnknownCall)
	require.ErrorIs(t, b.Decide(-1, Approval{Decision: DecisionApprove}), ErrUnknownCall)
	require.NoError(t, b.Decide(0, Approval{Decision: DecisionApprove}))
	require.ErrorIs(t, b.Decide(0, Approval{Decision: DecisionApprove}), ErrNotAllowed, "decided twice")
	require.ErrorIs(t, b.Decide(0, Approval{Decision: DecisionDeny}), ErrNotAllowed, "denied after a decision")
	require.NoError(t, b.TakeIn(0))
	require.ErrorIs(t, b.Decide(0, Approval{Decision: DecisionDeny}), ErrNotAllowed, "denied after approval")
	require.NoError(t, b.Start(0))
	require.NoError(t, b.Ran(0, ranResult()))
	require.ErrorIs(t, b.Decide(0, Approval{Decision: DecisionDeny}), ErrNotAllowed, "denied once done")
	require.ErrorIs(t, b.Ran(0, ranResult()), ErrNotAllowed, "a second result")
	var nilBatch *Batch
	require.ErrorIs(t, nilBatch.Decide(0, Approval{Decision: DecisionApprove}), ErrUnknownCall)
	require.Error(t, oneCall(Waiting{}).Decide(0, Approval{Decision: "maybe"}))
}

// TestBatchEveryPathEndsWithOneResult drives a batch of two calls
// through every sequence of events (to a depth) and checks, at every
// step, that a call's result once given never changes, and at the end of
// every path, driven to its end, that each call has exactly one result
// under its own ids.
func TestBatchEveryPathEndsWithOneResult(t *testing.T) {
	t.Parallel()
	paths := 0
	var walk func(b *Batch, depth int)
	walk = func(b *Batch, depth int) {
		if depth == 0 {
			paths++
			drive(t, b)
			results := map[string]int{}
			for _, c := range b.Calls {
				r, ok := c.Result()
				require.True(t, ok, "call %s has no result", c.Call.Ref)
				require.Equal(t, c.Call.ID, r.CallID)
				require.Equal(t, c.Call.Ref, r.Ref)
				results[r.CallID]++
			}
			require.Equal(t, map[string]int{"m1": 1, "m2": 1}, results)
			return
		}
		for i := range b.Calls {
			for _, ev := range events {
				next := clone(t, b)
				before := doneResults(next)
				if err := ev.send(next, i); err != nil {
					continue
				}
				for ref, r := range before {
					after, _ := next.Calls[indexOf(next, ref)].Result()
					require.Equal(t, r, after, "%s: the result of %s changed", ev.name, ref)
				}
				walk(next, depth-1)
			}
		}
	}
	b := NewBatch([]conversation.ToolCall{
		{ID: "m1", Ref: "c1", Name: "write", Arguments: `{}`},
		{ID: "m2", Ref: "c2", Name: "shell", Arguments: `{}`},
	})
	walk(b, 4)
	fmt.Printf("session.Batch: %d paths of 4 events over 2 calls, each ending with one result per call\n", paths)
	require.Greater(t, paths, 1000)
}

// drive takes every call to its result by the ordinary way.
func drive(t *testing.T, b *Batch) {
	for i := range b.Calls {
		for step := 0; ; step++ {
			require.Less(t, step, 10, "call %d never ends", i)
			var err error
			switch b.Calls[i].State.(type) {
			case Done:
			case Proposed:
				err = b.Policy(i, Decision{Verdict: Run}, false, t0)
			case Preparing:
				err = b.Prepared(i, `{}`)
			case Reviewing:
				err = b.Review(i, guardian.Verdict{Decision: guardian.Approve}, t0)
			case Waiting:
				err = b.Decide(i, Approval{Decision: DecisionApprove})
			case Decided:
				err = b.TakeIn(i)
			case Approved:
				err = b.Start(i)
			case Running:
				err = b.Ran(i, ranResult())
			}
			require.NoError(t, err)
			if _, done := b.Calls[i].State.(Done); done {
				break
			}
		}
	}
	require.True(t, b.Finished())
}

func doneResults(b *Batch) map[string]conversation.ToolResult {
	out := map[string]conversation.ToolResult{}
	for _, c := range b.Calls {
		if r, ok := c.Result(); ok {
			out[c.Call.Ref] = r
		}
	}
	return out
}

func indexOf(b *Batch, ref string) int {
	for i, c := range b.Calls {
		if c.Call.Ref == ref {
			return i
		}
	}
	return -1
}

// clone copies a batch deeply: a refused event must leave the original
// as it was, and each path of the walk starts from its own copy.
func clone(t *testing.T, b *Batch) *Batch {
	t.Helper()
	out := &Batch{Calls: make([]Call, len(b.Calls))}
	for i, c := range b.Calls {
		c.deps = append([]int(nil), c.deps...)
		c.State = cloneState(c.State)
		out.Calls[i] = c
	}
	return out
}

func cloneState(st CallState) CallState {
	switch s := st.(type) {
	case Preparing:
		return Preparing{Then: cloneState(s.Then)}
	case Waiting:
		if s.Guardian != nil {
			g := *s.Guardian
			s.Guardian = &g
		}
		return s
	case Approved:
		s.Decision = cloneApproval(s.Decision)
		return s
	case Running:
		s.Decision = cloneApproval(s.Decision)
		return s
	case Done:
		s.Decision = cloneApproval(s.Decision)
		return s
	}
	return st
}

func cloneApproval(a *Approval) *Approval {
	if a == nil {
		return nil
	}
	c := *a
	return &c
}

// TestBatchCarriedAsItIs: a batch carried across continue-as-new comes
// back in the same states (a call being prepared as what it becomes),
// and one that cannot be carried says so.
func TestBatchCarriedAsItIs(t *testing.T) {
	t.Parallel()
	v := guardian.Verdict{Decision: guardian.AskPerson, Reason: "unsure"}
	ap := Approval{CallID: "m1", ID: "c1", Decision: DecisionApprove}
	b := &Batch{Calls: []Call{
		{Call: conversation.ToolCall{ID: "m1", Ref: "c1", Name: "write"}, State: Waiting{Reason: "writes", Since: t0, Guardian: &v}},
		{Call: conversation.ToolCall{ID: "m2", Ref: "c2", Name: "write"}, State: Decided{By: ByRule, Decision: ap}},
		{Call: conversation.ToolCall{ID: "m3", Ref: "c3", Name: "shell"}, State: Approved{By: ByGuardian, Decision: &ap, ReadOnlySandbox: true}},
		{Call: conversation.ToolCall{ID: "m4", Ref: "c4", Name: "read"}, State: Done{Result: ranResult()}},
		{Call: conversation.ToolCall{ID: "m5", Ref: "c5", Name: "lsp_rename"}, State: Preparing{Then: Approved{By: ByPolicy}}},
		// Never approved by being carried: the next run has the guardian
		// review it once it is prepared.
		{Call: conversation.ToolCall{ID: "m6", Ref: "c6", Name: "lsp_rename"}, State: Preparing{Then: Reviewing{Reason: "edits"}}},
	}}
	data, err := json.Marshal(b)
	require.NoError(t, err)
	var back struct{ Batch *Batch }
	require.NoError(t, json.Unmarshal([]byte(`{"Batch":`+string(data)+`}`), &back))
	want := clone(t, b)
	want.Calls[1].State = Approved{By: ByRule, Decision: &ap} // a release carried approved
	want.Calls[4].State = Approved{By: ByPolicy}
	want.Calls[5].State = Reviewing{Reason: "edits"}
	require.True(t, reflect.DeepEqual(want, back.Batch), "%#v", back.Batch)

	for _, st := range []CallState{Running{}, Proposed{}} {
		_, err := json.Marshal(oneCall(st))
		require.Error(t, err, st.Name())
	}
}

// TestBatchReadsWhatEarlierRunsCarried: the JSON recorded histories hold
// (a denial taken in by the next run, an approval without "by") decodes.
func TestBatchReadsWhatEarlierRunsCarried(t *testing.T) {
	t.Parallel()
	var b Batch
	require.NoError(t, json.Unmarshal([]byte(`[
		{"call":{"id":"w"},"state":"approved","requested_at":"0001-01-01T00:00:00Z","decision":{"call_id":"w","decision":"deny","feedback":"no"},"perm":{}},
		{"call":{"id":"r"},"state":"approved","requested_at":"0001-01-01T00:00:00Z","decision":{"call_id":"r","decision":"approve"},"perm":{}},
		{"call":{"id":"x"},"state":"approved","requested_at":"0001-01-01T00:00:00Z","decision":{"call_id":"x","decision":"approve"},"perm":{},"released":true},
		{"call":{"id":"y"},"state":"approved","requested_at":"0001-01-01T00:00:00Z","perm":{},"read_only_sandbox":true}
	]`), &b))
	b.Resume(func(string) bool { return true })
	r, ok := b.Calls[0].Result()
	require.True(t, ok)
	require.Equal(t, conversation.ReasonDenied, r.Reason)
	require.True(t, b.Calls[1].ApprovedByPerson())
	require.False(t, b.Calls[2].ApprovedByPerson(), "released by a rule")
	require.True(t, b.Calls[3].ReadOnlySandbox())

	require.Error(t, json.Unmarshal([]byte(`[{"call":{"id":"z"},"state":"running"}]`), &b))
	require.Error(t, json.Unmarshal([]byte(`[{"call":{"id":"z"},"state":"done"}]`), &b))
}

// TestBatchLostWorkerSaysSo: a running call whose worker was lost is
// answered worker_lost whatever its tool said.
func TestBatchLostWorkerSaysSo(t *testing.T) {
	t.Parallel()
	b := oneCall(Running{})
	require.NoError(t, b.WorkerLost(0))
	require.NoError(t, b.Ran(0, ranResult()))
	r, _ := b.Calls[0].Result()
	require.Equal(t, conversation.ReasonWorkerLost, r.Reason)
	require.True(t, errors.Is(b.WorkerLost(0), ErrNotAllowed))
}
