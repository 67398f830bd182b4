package session

import (
	"fmt"
	"time"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/guardian"
)

// Event is what happened to one call of a batch: the one argument of
// Batch.Tell. Each event type names the Batch method that takes it in,
// so the table test of those methods is the test of Tell too.
type Event interface{ event() string }

// The events, one per transition of a call (see the Batch methods of the
// same names).
type (
	// PolicyEvent is the policy's verdict (Batch.Policy).
	PolicyEvent struct {
		Decision Decision
		Review   bool
		Now      time.Time
	}
	// PreparedEvent is a preparation's arguments (Batch.Prepared).
	PreparedEvent struct{ Arguments string }
	// ReviewEvent is the guardian's verdict (Batch.Review).
	ReviewEvent struct {
		Verdict guardian.Verdict
		Now     time.Time
	}
	// DecideEvent is a person's decision (Batch.Decide).
	DecideEvent struct{ Approval Approval }
	// ReleaseEvent is a rule added since that allows the call (Batch.Release).
	ReleaseEvent struct{}
	// TakeInEvent is the call's goroutine acting on a decision (Batch.TakeIn).
	TakeInEvent struct{}
	// TimeoutEvent is the approval timeout firing (Batch.Timeout).
	TimeoutEvent struct{ After time.Duration }
	// StopEvent is an interrupt or a cancel before the call ran (Batch.Stop).
	StopEvent struct{ Interrupted bool }
	// StartEvent is the call taking its slot and starting (Batch.Start).
	StartEvent struct{}
	// WorkerLostEvent is the worker running the call gone (Batch.WorkerLost).
	WorkerLostEvent struct{}
	// RanEvent is the call's result (Batch.Ran).
	RanEvent struct{ Result conversation.ToolResult }
)

func (PolicyEvent) event() string     { return "policy" }
func (PreparedEvent) event() string   { return "prepared" }
func (ReviewEvent) event() string     { return "review" }
func (DecideEvent) event() string     { return "decide" }
func (ReleaseEvent) event() string    { return "release" }
func (TakeInEvent) event() string     { return "take in" }
func (TimeoutEvent) event() string    { return "timeout" }
func (StopEvent) event() string       { return "stop" }
func (StartEvent) event() string      { return "start" }
func (WorkerLostEvent) event() string { return "worker lost" }
func (RanEvent) event() string        { return "ran" }

// Tell is the one door by which the workflow tells the batch what
// happened to call i: the driver's code reads as "tell the batch" at
// every transition, and a reader finds every event in this one switch.
// It returns the refusal of the method the event names.
func (b *Batch) Tell(i int, ev Event) error {
	switch e := ev.(type) {
	case PolicyEvent:
		return b.Policy(i, e.Decision, e.Review, e.Now)
	case PreparedEvent:
		return b.Prepared(i, e.Arguments)
	case ReviewEvent:
		return b.Review(i, e.Verdict, e.Now)
	case DecideEvent:
		return b.Decide(i, e.Approval)
	case ReleaseEvent:
		return b.Release(i)
	case TakeInEvent:
		return b.TakeIn(i)
	case TimeoutEvent:
		return b.Timeout(i, e.After)
	case StopEvent:
		return b.Stop(i, e.Interrupted)
	case StartEvent:
		return b.Start(i)
	case WorkerLostEvent:
		return b.WorkerLost(i)
	case RanEvent:
		return b.Ran(i, e.Result)
	}
	return fmt.Errorf("call %d: event %T: %w", i, ev, ErrNotAllowed)
}
