package session

import (
	"fmt"
	"strings"

	"github.com/longrun/longrun/checkout/record"
	"github.com/longrun/longrun/toolspec"
)

// ReasonWorkspaceLost is the session's error type when the worker holding
// its checkout is gone and the checkout cannot be restored on another
// (no checkpoint, no checkpoint remote or shared transcript store, or the
// fetch failed): the session
// then waits for a person, and a message from them tries again.
const ReasonWorkspaceLost = "workspace_lost"

// MayChangeFiles reports whether a call that ran may have changed the
// checkout's files, so a checkpoint is due after its batch: what the tool
// declares of itself (read-only, or run in the read-only sandbox), never
// its name. A call whose worker timed out counts too: the checkpoint then
// also finds out whether the worker is still there.
func MayChangeFiles(spec toolspec.Spec, readOnlySandbox, timedOut bool) bool {
	return timedOut || !(spec.ReadOnly || readOnlySandbox)
}

// WorkerLostText is the message the model gets once the session's
// checkout was restored on another worker: what happened, which calls
// were lost, and that the files are those of the last checkpoint.
func WorkerLostText(lost []string, checkpoint, dir, branch string, kept bool) string {
	var b strings.Builder
	b.WriteString("[longrun] The machine that held this session's checkout was lost (nobody polled its queue). ")
	if len(lost) > 0 {
		fmt.Fprintf(&b, "The calls running on it were lost and answered worker_lost: %s. ", strings.Join(lost, ", "))
	}
	if kept {
		fmt.Fprintf(&b, "Another worker on the same disk took up the checkout as it was, at %s (branch %s): files are as the lost calls left them (each may or may not have run to the end), and background jobs on the lost worker are gone. Check the files you rely on before you go on.", dir, branch)
		return b.String()
	}
	fmt.Fprintf(&b, "The checkout was restored on another machine at %s (branch %s) from the last checkpoint, %s, taken after the last batch of calls that finished: any change made after it, by the lost calls included, is gone, and background jobs on the lost machine are gone. Check the files you rely on before you go on.", dir, branch, short(checkpoint))
	return b.String()
}

// WorkspaceLostText says why the checkout could not be restored and what
// a person can do.
func WorkspaceLostText(queue, why string) string {
	return fmt.Sprintf("%s: the worker holding the session's checkout (queue %s) is gone and the checkout could not be restored on another worker: %s. Start a worker with --checkpoint-remote (the session's checkpoints are pushed there), or with the transcript store the session's checkpoints are stored in, or bring the lost one back, then send a message to try again; or cancel the session.", ReasonWorkspaceLost, queue, why)
}

// MovedTo is the checkout once another worker restored it (in, on that
// worker's queue): its checkpoint and remote stay, and Origin names the
// person's repository when in is a repository of its own (restored from
// the remote) rather than a worktree of it (taken up as it was).
func (c *Checkout) MovedTo(in record.Info, queue string) *Checkout {
	origin := c.Origin
	if origin == "" {
		origin = c.Repo
	}
	if in.Repo == origin {
		origin = ""
	}
	return &Checkout{Info: in, Queue: queue, Checkpoint: c.Checkpoint, Remote: c.Remote, Origin: origin,
		Bundle: c.Bundle, BundleNote: c.BundleNote}
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}
