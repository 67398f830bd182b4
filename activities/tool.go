package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/transcript"
)

// ErrTypeUnknownTool marks a call to a tool this worker does not have.
const ErrTypeUnknownTool = "UnknownTool"

// HeartbeatEvery is how often a running tool heartbeats. The workflow's
// heartbeat timeout is a few times this, so a cancel reaches the tool (and
// a lost worker is noticed) within seconds.
const HeartbeatEvery = time.Second

// ToolRequest is the input of RunTool: one validated, approved call.
type ToolRequest struct {
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	// WorkDir is the session's working directory, relative to the worker's
	// workspace root.
	WorkDir string `json:"workdir,omitempty"`
	// GuardWrites and Seen carry the session's stale-write guard to tools
	// that change files (tools.Env); Seen is only sent to those.
	GuardWrites bool              `json:"guard_writes,omitempty"`
	Seen        map[string]string `json:"seen,omitempty"`
	// AllowNetwork lets a sandboxed command reach the network.
	AllowNetwork bool `json:"allow_network,omitempty"`
	// JobID names the background job a `shell` call with background: true
	// starts; the session assigns it.
	JobID string `json:"job_id,omitempty"`
	// ByReference asks for a long result to be kept in the transcript
	// store, with only a preview and its reference in the result (see
	// tools.Result.ContentRef). The session asks when it holds its
	// conversation by reference; a call whose text the workflow itself
	// reads (job_list across workers) does not.
	ByReference bool `json:"by_reference,omitempty"`
	// ReadOnlySandbox and ApprovedByPerson say how the call came to run
	// (see tools.Env): allowed by the built-in read-only classifier only,
	// or approved by a person. Neither: a rule a person wrote allowed it.
	ReadOnlySandbox  bool `json:"read_only_sandbox,omitempty"`
	ApprovedByPerson bool `json:"approved_by_person,omitempty"`
	// Checkout names the session's own checkout on this worker
	// (checkout.Info.Name); WorkDir is then relative to it. Empty: the
	// session runs in place, in the worker's workspace.
	Checkout string `json:"checkout,omitempty"`
	// Prepare asks the tool to complete the call's arguments rather than
	// run it (tools.Preparer, Spec.Prepares).
	Prepare bool `json:"prepare,omitempty"`
}

// RunTool runs one tool call in the session's working directory. Failures
// the model can act on come back as a Result with IsError; a Go error means
// the system failed and is for Temporal to retry (or not, for tools that
// change things: the workflow schedules those with a single attempt).
func (a *Activities) RunTool(ctx context.Context, req ToolRequest) (tools.Result, error) {
	t, ok := a.lookupCallTool(req)
	if !ok {
		return tools.Result{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("tool %q is not available on this worker", req.Name), ErrTypeUnknownTool, nil)
	}
	ws, err := a.toolWorkspace(req)
	if err != nil {
		return tools.Errorf("working directory %q: %v", req.WorkDir, err), nil
	}

	// Heartbeat on a ticker whatever the tool does: activity cancellation
	// is delivered only through heartbeats, so a tool that never reports
	// progress must still be cancellable.
	var mu sync.Mutex
	progress := ""
	hbCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		tick := time.NewTicker(HeartbeatEvery)
		defer tick.Stop()
		for {
			select {
			case <-hbCtx.Done():
				return
			case <-tick.C:
				mu.Lock()
				p := progress
				mu.Unlock()
				// A direct call (bench's in-process loop, tests) has no
				// activity to heartbeat: the SDK would panic.
				if activity.IsActivity(ctx) {
					activity.RecordHeartbeat(ctx, p)
				}
			}
		}
	}()
	env := tools.Env{
		Workspace:        ws,
		GuardWrites:      req.GuardWrites,
		Seen:             req.Seen,
		AllowNetwork:     req.AllowNetwork,
		Session:          sessionID(ctx),
		Run:              runID(ctx),
		JobID:            req.JobID,
		ReadOnlySandbox:  req.ReadOnlySandbox,
		ApprovedByPerson: req.ApprovedByPerson,
		Origin:           a.origin(req),
		Heartbeat: func(p string) {
			mu.Lock()
			progress = p
			mu.Unlock()
		},
	}
	var res tools.Result
	if req.Prepare {
		res, err = prepare(ctx, t, env, req)
	} else {
		res, err = t.Run(ctx, env, req.Arguments)
	}
	if err != nil {
		return tools.Result{}, fmt.Errorf("run tool %s: %w", req.Name, err)
	}
	if t.Spec().EditsFiles && !req.Prepare && ctx.Err() == nil {
		res = a.withDiagnostics(ctx, ws, res)
	}
	if ctx.Err() != nil {
		// Report the cancellation to Temporal; the workflow writes the
		// synthetic result itself.
		return res, ctx.Err()
	}
	res.WorkerQueue = a.cfg.WorkerQueue
	if req.ByReference && a.cfg.Transcript != nil && len(res.Content) > transcript.OffloadBytes {
		// A store that fails must not fail the call: a command that ran
		// would be reported as not run. The text then goes inline.
		if ref, preview, err := transcript.Offload(ctx, a.cfg.Transcript, res.Content); err != nil {
			if activity.IsActivity(ctx) {
				activity.GetLogger(ctx).Warn("tool result kept inline: transcript store failed", "call_id", req.CallID, "error", err)
			}
		} else {
			res.ContentRef, res.ContentBytes, res.Content = ref, len(res.Content), preview
		}
	}
	return res, nil
}

// toolWorkspace is where a call runs: the session's checkout when it has
// one, else its directory of the worker's workspace.
func (a *Activities) toolWorkspace(req ToolRequest) (*tools.Workspace, error) {
	if req.Checkout != "" {
		return a.checkoutWorkspace(req.Checkout, req.WorkDir)
	}
	return a.cfg.Workspace.Sub(req.WorkDir)
}

// origin is, for a session with a checkout, its working directory in
// this worker's workspace: where its configuration and skills were read
// (tools.Env.Origin). nil in place, or when this worker's workspace has
// no such directory (a worker that restored a lost worker's checkout).
func (a *Activities) origin(req ToolRequest) *tools.Workspace {
	if req.Checkout == "" || a.cfg.Workspace == nil {
		return nil
	}
	ws, err := a.cfg.Workspace.Sub(req.WorkDir)
	if err != nil {
		return nil
	}
	return ws
}

// sessionID is the id of the workflow the activity runs for: the session.
// runID is the run of the session's workflow the activity belongs to,
// "" outside an activity: a background job remembers it, so the worker's
// reaper can tell a run that ended (terminated, reset) from the session.
func runID(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return ""
	}
	return activity.GetInfo(ctx).WorkflowExecution.RunID
}

func sessionID(ctx context.Context) string {
	if !activity.IsActivity(ctx) {
		return ""
	}
	return activity.GetInfo(ctx).WorkflowExecution.ID
}
