package activities

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/tools"
	"github.com/longrun/longrun/transcript"
)

// ErrTypeUnknownTool, HeartbeatEvery and ToolRequest: see package
// contract.
const (
	ErrTypeUnknownTool = contract.ErrTypeUnknownTool
	HeartbeatEvery     = contract.HeartbeatEvery
)

// ToolRequest is the input of RunTool: see package contract.
type ToolRequest = contract.ToolRequest

// RunTool runs one tool call in the session's working directory. Failures
// the model can act on come back as a Result with IsError; a Go error means
// the system failed and is for Temporal to retry (or not, for tools that
// change things: the workflow schedules those with a single attempt).
func (a *Activities) RunTool(ctx context.Context, req ToolRequest) (tools.Result, error) {
	if err := a.here(req.Checkout, req.CheckoutQueue); err != nil {
		return tools.Result{}, err
	}
	t, ok := a.lookupCallTool(req)
	if !ok {
		return tools.Result{}, temporal.NewNonRetryableApplicationError(
			fmt.Sprintf("tool %q is not available on this worker", req.Name), ErrTypeUnknownTool, nil)
	}
	ws, err := a.toolWorkspace(req)
	if err != nil {
		return tools.Errorf("working directory %q: %v", req.WorkDir, err), nil
	}

	if err := confirmStart(ctx, req); err != nil {
		return tools.Result{}, err
	}

	// Heartbeat on a ticker whatever the tool does: activity cancellation
	// is delivered only through heartbeats, so a tool that never reports
	// progress must still be cancellable. A caller that is not an activity
	// (a test, a tool run by the worker itself) has no one to heartbeat
	// to, and the SDK panics if asked.
	var mu sync.Mutex
	progress := ""
	hbCtx, stop := context.WithCancel(ctx)
	defer stop()
	heartbeat := func() {
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
				activity.RecordHeartbeat(ctx, p)
			}
		}
	}
	if activity.IsActivity(ctx) {
		go heartbeat()
	}
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
	if a.editsFiles(req.Name, t) && !req.Prepare && ctx.Err() == nil {
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

// editsFiles reports whether the tool changes files (its diagnostics are
// then added to the result), from the spec the registry built once; a
// tool outside it (an MCP server's) describes itself.
func (a *Activities) editsFiles(name string, t tools.Tool) bool {
	if s, ok := a.cfg.Registry.Spec(name); ok {
		return s.EditsFiles
	}
	return t.Spec().EditsFiles
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
