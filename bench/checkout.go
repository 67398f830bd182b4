package main

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
)

// Where a durable session's calls run, as -checkout names it. The product
// default (longrun start with no flag) is a checkout of the session's own
// on the worker that made it, every tool call pinned to that worker's
// queue: a repository of its own for a workspace in git, a copy for one
// outside git. The bench sets its worker up as the product worker does
// (activities.Config.StateDir, WorkerQueue, CheckoutQueue, and workers
// polling those queues) so the sessions take the path users' sessions take.
const (
	// checkoutNone is a worker with no state directory: every session
	// runs in its workspace (the bench's default before the isolated
	// default existed; the earlier tables of docs/BENCHMARKS.md).
	checkoutNone = "none"
	// checkoutInPlace is a worker with a state directory and sessions
	// started as longrun start --in-place starts them.
	checkoutInPlace = "in-place"
	// checkoutGit is longrun start's default in a git repository: the
	// workspace is one with a first commit.
	checkoutGit = "git"
	// checkoutCopy is longrun start's default outside git: the session
	// works in a copy of the workspace.
	checkoutCopy = "copy"
)

var checkoutModes = []string{checkoutNone, checkoutInPlace, checkoutGit, checkoutCopy}

// checkCheckout says which modes there are when co is none of them.
func checkCheckout(co string) error {
	if !slices.Contains(checkoutModes, co) {
		return fmt.Errorf("-checkout: unknown %q (have %s)", co, strings.Join(checkoutModes, ", "))
	}
	return nil
}

// isolation is what a worker needs to give sessions checkouts of their
// own: its state directory (where checkouts live), its own queue and the
// queue its checkouts' calls are pinned to. Zero: no state directory.
type isolation struct {
	StateDir, Own, Pinned string
}

// isolationFor is the isolation of a worker on queue keeping its state in
// state ("" for none). The queue names follow the product worker's
// (ownQueue, checkoutQueue in worker/queue.go), without its host name.
func isolationFor(queue, state string) isolation {
	if state == "" {
		return isolation{}
	}
	return isolation{StateDir: state, Own: queue + "-worker", Pinned: queue + "-checkouts"}
}

// queues are the activity-only queues a worker with iso polls besides its
// main one.
func (iso isolation) queues() []string {
	if iso.StateDir == "" {
		return nil
	}
	return []string{iso.Own, iso.Pinned}
}

// isolation is the world's worker's.
func (w *world) isolation() isolation { return isolationFor(w.queue, w.state) }

// prepareCheckout makes dir what mode co needs (a git repository with one
// commit for checkoutGit) and returns the worker's state directory, ""
// for checkoutNone.
func prepareCheckout(dir, co string) (string, error) {
	if err := checkCheckout(co); err != nil {
		return "", err
	}
	if co == checkoutNone {
		return "", nil
	}
	if co == checkoutGit {
		for _, args := range [][]string{
			{"init", "-q", "."}, {"add", "-A"},
			{"-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "bench workspace"},
		} {
			if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
				return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
			}
		}
	}
	state, err := os.MkdirTemp("", "longrun-bench-state-")
	if err != nil {
		return "", err
	}
	return state, nil
}
