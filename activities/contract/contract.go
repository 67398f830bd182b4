// Package contract is what a session and the workers that run its
// activities agree on: each activity's registered name, and the request
// and result types history records. It is plain data, no I/O and no
// Temporal, so the workflow (package workflows) schedules activities
// through it without linking the worker's implementations (package
// activities: the model client, the tools, git, webhooks).
//
// The names are the method names of *activities.Activities, which the
// worker registers as a struct (worker.RegisterActivity), and they are
// recorded in every history: never rename one. A test in package
// activities checks that each name below is a method of Activities and
// that every exported method has a name here.
package contract

// The activities a session schedules, by registered name.
const (
	// ListTools reports the worker's tool catalog (a local activity).
	ListTools = "ListTools"
	// LoadWorkspaceConfig reads the workspace's rules and instructions
	// (a local activity).
	LoadWorkspaceConfig = "LoadWorkspaceConfig"
	// CallModel runs one model call (ModelRequest, ModelResponse).
	CallModel = "CallModel"
	// Compact shrinks the conversation (CompactRequest, CompactResult).
	Compact = "Compact"
	// RunTool runs one approved call (ToolRequest, toolspec.Result).
	RunTool = "RunTool"
	// KillJobs stops a session's background jobs (workflow id, their ids).
	KillJobs = "KillJobs"
	// ReviewCall asks the guardian (guardian.Request, guardian.Verdict).
	ReviewCall = "ReviewCall"
	// Notify posts a notification (NotifyEvent).
	Notify = "Notify"
	// OpenCheckout makes the session's checkout (CheckoutRequest,
	// CheckoutResult).
	OpenCheckout = "OpenCheckout"
	// CloseCheckout commits and removes it (CloseCheckoutRequest,
	// CloseCheckoutResult).
	CloseCheckout = "CloseCheckout"
	// Checkpoint records it as a checkpoint (CheckpointRequest,
	// CheckpointResult).
	Checkpoint = "Checkpoint"
	// RestoreCheckout makes it again from a checkpoint (RestoreRequest,
	// CheckoutResult).
	RestoreCheckout = "RestoreCheckout"
	// RewindCheckout puts the checkout's files back to a checkpoint
	// (RewindRequest).
	RewindCheckout = "RewindCheckout"
	// PushBranch publishes a closed session's branch and opens or
	// updates its pull request (PushRequest, PushResult).
	PushBranch = "PushBranch"
	// SetupCheckout runs the repository's setup command in a new
	// checkout, or reuses its layer (SetupRequest, SetupResult).
	SetupCheckout = "SetupCheckout"
)

// Names lists every activity name above, for the test that keeps them
// and the worker's methods the same.
func Names() []string {
	return []string{
		ListTools, LoadWorkspaceConfig, CallModel, Compact, RunTool, KillJobs,
		ReviewCall, Notify, OpenCheckout, CloseCheckout, Checkpoint, RestoreCheckout,
		RewindCheckout, PushBranch, SetupCheckout,
	}
}
