package activities

import (
	"fmt"
	"os"

	"go.temporal.io/sdk/temporal"
)

// ErrTypeNotHere answers a local activity that needs the session's
// checkout on a worker that does not hold it. A local activity runs on
// whichever worker runs the session's workflow task, which is the
// checkout's worker in the common case (one worker, or sticky execution
// there) but not always; the session then sends the call to the
// checkout's worker as an activity. Never retried: the same worker would
// answer the same.
const ErrTypeNotHere = "CheckoutNotHere"

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
