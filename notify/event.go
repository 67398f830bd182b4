// Package notify tells a person about a session: that it waits for them,
// finished, failed or reached its budget. It renders an Event as the
// generic webhook's JSON body and as a Slack message, signs the body, and
// posts it to the worker's sinks, recording each delivery so that no
// sink is sent the same notification twice. Plain Go: no Temporal here;
// the activity in package activities wraps Sender.Send.
package notify

import "github.com/longrun/longrun/activities/contract"

// Events a session notifies about (Event.Event, the body's "event"): see
// package contract.
const (
	EventWaiting   = contract.EventWaiting
	EventCompleted = contract.EventCompleted
	EventFailed    = contract.EventFailed
	EventBudget    = contract.EventBudget
)

// SignalApproval is the name of the session's approval signal, which the
// fallback command sends. It is workflows.SignalApproval (a test there
// checks), repeated so that this package, which the worker links, does not
// import the workflow.
const SignalApproval = "approval"

// Event is one notification as the workflow describes it, the Notify
// activity's input; Call is one call waiting for a person in it. Both are
// in package contract, so the workflow builds them without linking this
// package's HTTP client.
type (
	Event = contract.NotifyEvent
	Call  = contract.NotifyCall
)
