package activities

import (
	"fmt"
	"os"

	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities/contract"
)

// ErrTypeNotHere: see package contract.
const ErrTypeNotHere = contract.ErrTypeNotHere

// NotHereError is the error a worker that does not hold the checkout
// pinned to queue answers a local call with (ErrTypeNotHere).
func NotHereError(queue, why string) error {
	return temporal.NewNonRetryableApplicationError(
		fmt.Sprintf("the checkout pinned to %s is not on the worker that ran this local activity (%s)", queue, why), ErrTypeNotHere, nil)
}

// here checks that this worker holds the checkout name, which the session
// recorded as pinned to queue (session.Checkout.Queue, the queue
// OpenCheckout or RestoreCheckout named). An empty queue asks nothing:
// the call came as an activity through that queue, so only the worker
// holding the checkout took it. The queue is the worker's identity: it is
// kept in the worker's state directory, which holds its checkouts
// (worker/queue.go), so the same queue is the same disk.
func (a *Activities) here(name, queue string) error {
	if queue == "" {
		return nil
	}
	if own := a.pinQueue(); own != queue {
		return NotHereError(queue, "this worker's checkouts are pinned to "+own)
	}
	dir, err := a.ownCheckout(name)
	if err != nil {
		return NotHereError(queue, err.Error())
	}
	if _, err := os.Stat(dir); err != nil {
		return NotHereError(queue, err.Error())
	}
	return nil
}
