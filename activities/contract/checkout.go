package contract

import (
	"bytes"
	"encoding/json"

	"github.com/longrun/longrun/checkout/record"
)

// ErrTypeBadBase fails a session whose --base is not a commit of its
// repository: retrying cannot help, the person must name another.
const ErrTypeBadBase = "BadCheckoutBase"

// CheckoutRequest asks for the session's own checkout of the repository
// holding WorkDir (relative to the worker's workspace root), from Base
// ("" is the repository's HEAD).
type CheckoutRequest struct {
	WorkDir string `json:"workdir,omitempty"`
	Base    string `json:"base,omitempty"`
	// From is set for a fork (workflows/rewind.go): the files start as
	// the original session's checkpoint, not as Base.
	From *CheckoutFrom `json:"from,omitempty"`
}

// CheckoutResult is the session's checkout, or why it runs in place.
type CheckoutResult struct {
	// Checkout is nil when the session runs in place; Note then says
	// why. With a checkout, Note says what its copy left out (nested
	// repositories' .git: record.Info.Dropped), if anything.
	Checkout *record.Info `json:"checkout,omitempty"`
	Note     string       `json:"note,omitempty"`
	// WorkerQueue is the task queue only the worker holding the checkout
	// polls: every call that touches the checkout goes there.
	WorkerQueue string `json:"worker_queue,omitempty"`
	// Kept (RestoreCheckout): the checkout was still on this worker's
	// disk and is taken up as it is, not restored from a checkpoint.
	Kept bool `json:"kept,omitempty"`
	// Setup (OpenCheckout) is this worker's setup command for the
	// checkout's repository (longrun-worker --setup): the session runs
	// SetupCheckout before its first model call. "": none, and the
	// session issues the commands it always did.
	Setup string `json:"setup,omitempty"`
}

// CloseCheckoutRequest ends a session's checkout: its changes are
// committed on its branch with Message, and the checkout removed.
type CloseCheckoutRequest struct {
	Checkout record.Info `json:"checkout"`
	Message  string      `json:"message"`
	// CheckoutQueue is set when the session runs the close as a local
	// activity (ToolRequest.CheckoutQueue): a worker that does not hold
	// the checkout answers ErrTypeNotHere.
	CheckoutQueue string `json:"checkout_queue,omitempty"`
	// TurnCheckpoints are the checkpoints the session's turn marks
	// name, oldest first: the close keeps them reachable in the
	// person's repository (checkout.KeepTurns), so a fork of an earlier
	// turn finds its files after the session closed.
	TurnCheckpoints []string `json:"turn_checkpoints,omitempty"`
}

// CloseCheckoutResult is what CloseCheckout did: the commit on the
// session's branch, the control files left out of it, and the branch's
// size against its base.
type CloseCheckoutResult record.Closed

// UnmarshalJSON also reads the plain commit id CloseCheckout returned
// before it returned this struct, so recorded histories still replay.
func (r *CloseCheckoutResult) UnmarshalJSON(b []byte) error {
	if b = bytes.TrimSpace(b); len(b) > 0 && b[0] == '"' {
		*r = CloseCheckoutResult{}
		return json.Unmarshal(b, &r.Commit)
	}
	var c record.Closed
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	*r = CloseCheckoutResult(c)
	return nil
}

// ErrTypeWorkspaceLost fails a restore that cannot succeed on any retry:
// no checkpoint, no checkpoint remote or bundle on this worker, or a
// bundle whose base this worker lacks.
const ErrTypeWorkspaceLost = "WorkspaceLost"

// CheckpointRequest asks for a checkpoint of the session's checkout;
// Previous is its last one. Paths, when not nil, are the only files
// (relative to the checkout's Sub) that can have changed since Previous
// (checkout.CheckpointPaths); nil: look at every file.
type CheckpointRequest struct {
	Checkout record.Info `json:"checkout"`
	Previous string      `json:"previous,omitempty"`
	Paths    []string    `json:"paths,omitempty"`
	// CheckoutQueue is set when the session runs the checkpoint as a
	// local activity (ToolRequest.CheckoutQueue): a worker that does not
	// hold the checkout answers ErrTypeNotHere.
	CheckoutQueue string `json:"checkout_queue,omitempty"`
}

// CheckpointResult is the checkpoint commit (Previous when nothing
// changed) and the remote it was pushed to ("" when it was not pushed:
// no remote, or unchanged), or, with no remote, the reference of its
// bundle in the transcript store (checkpoint_bundle.go; "" when not
// stored, Note then saying why when it was too large).
type CheckpointResult struct {
	Commit string `json:"commit"`
	Remote string `json:"remote,omitempty"`
	Bundle string `json:"bundle,omitempty"`
	Note   string `json:"note,omitempty"`
	// Changes is the checkpoint against the checkout's base: what the
	// session changed so far, for status, the Web UI and the result. It is
	// a diff of two commits (one git command, no walk of the checkout):
	// the checkpoint has already looked at the files.
	Changes *record.Stat `json:"changes,omitempty"`
}

// RestoreRequest asks a worker to restore a lost worker's checkout from
// its last checkpoint.
type RestoreRequest struct {
	Checkout   record.Info `json:"checkout"`
	Checkpoint string      `json:"checkpoint"`
	// Bundle is the reference of the checkpoint's bundle in the
	// transcript store ("" when it went to a remote, or nowhere), and
	// Origin the person's repository, where a worktree's bundle finds its
	// base ("": Checkout.Repo).
	Bundle string `json:"bundle,omitempty"`
	Origin string `json:"origin,omitempty"`
}

// ErrTypeCheckpointGone fails a fork or rewind whose checkpoint is in no
// repository this worker can reach (the original's checkout was removed):
// retrying cannot bring it back.
const ErrTypeCheckpointGone = "CheckpointGone"

// CheckoutFrom is where a fork's files come from: Commit, the original
// session's checkpoint of the turn ("" the base's files), found in the
// original's checkout at Dir or else in the person's repository.
type CheckoutFrom struct {
	Dir    string `json:"dir"`
	Commit string `json:"commit,omitempty"`
}

// RewindRequest puts a session's checkout back to a checkpoint.
type RewindRequest struct {
	Checkout record.Info `json:"checkout"`
	// Commit is the checkpoint; "" is the base (the branch's head).
	Commit string `json:"commit,omitempty"`
}

// ErrTypePushRefused fails a push the forge refused (bad credentials, no
// such repository): retrying cannot help, a person must fix the
// worker's configuration and run `longrun push`.
const ErrTypePushRefused = "PushRefused"

// PushRequest asks the worker that holds a session's branch to publish
// it: push it to the configured remote and open or update its pull
// request. It holds nothing secret: the credentials are the worker's.
type PushRequest struct {
	Checkout record.Info `json:"checkout"`
	// Summary is the session's final text, the pull request's body.
	Summary string `json:"summary,omitempty"`
	// LeftOut are the control files the branch does not hold.
	LeftOut []string `json:"left_out,omitempty"`
	// Open is a push while the session runs on, its checkout open (a
	// session waiting for a review: SessionInput.PublishWhenWaiting):
	// the worker first commits what the checkout holds on its branch,
	// control files left out, with Message, and publishes from the
	// checkout.
	Open    bool   `json:"open,omitempty"`
	Message string `json:"message,omitempty"`
	// Review is what the body shows a reviewer: the commands the session
	// ran and how they ended, the calls a person approved (who, when),
	// what was left undone. From the session's state, so a retry (or
	// replay) sends the same.
	Review *record.Review `json:"review,omitempty"`
}

// PushResult is the non-secret outcome the history keeps: the pull
// request's URL and number, the commit pushed, the remote without user
// information (forge.Published, field for field).
type PushResult struct {
	URL     string `json:"url"`
	Number  int    `json:"number"`
	Commit  string `json:"commit"`
	Created bool   `json:"created,omitempty"`
	Remote  string `json:"remote"`
}
