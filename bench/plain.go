package main

import (
	"context"
	"fmt"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/activities"
)

// The plain SDK workflow: the shape of a session (per tool turn one
// activity for the model call and one for the tool call, then a last model
// call) with nothing of ours in it, so its steps/s on the same worker is
// the ceiling of Temporal on this machine and durable/plain is what the
// session adds (its state, conversation, catalog, search attributes).

// plainWorkflowType is the name the plain workflow is registered under.
const plainWorkflowType = "BenchPlain"

// plainReply stands for the model's reply: a tool call or, at the end,
// text.
type plainReply struct {
	Text   string `json:"text,omitempty"`
	CallID string `json:"call_id,omitempty"`
	Args   string `json:"args,omitempty"`
}

// plainActivities are trivial in-process functions returning small
// payloads: no HTTP, no files.
type plainActivities struct{}

// PlainModel answers with a call while turn is at most turns, then text.
func (*plainActivities) PlainModel(_ context.Context, turn, turns int) (plainReply, error) {
	if turn > turns {
		return plainReply{Text: "done"}, nil
	}
	return plainReply{CallID: fmt.Sprintf("call_%d", turn), Args: fmt.Sprintf(`{"path":%q,"limit":%d}`, benchFile, turn)}, nil
}

// PlainTool answers a call with a line, as read of the bench file does.
func (*plainActivities) PlainTool(_ context.Context, callID string) (string, error) {
	return "1\tone line of notes\n", nil
}

var pa *plainActivities

// benchPlainWorkflow runs turns tool turns and the last model call, with
// the activity options the session gives CallModel and a read-only
// RunTool (timeouts, heartbeat timeout, retry policy, a summary); eager
// execution is the worker's, shared with the sessions. It returns the
// model calls made.
func benchPlainWorkflow(ctx workflow.Context, turns int) (int, error) {
	model := workflow.WithActivityOptions(ctx, plainModelOptions())
	tool := workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
		StartToCloseTimeout: 6 * time.Minute,
		HeartbeatTimeout:    10 * activities.HeartbeatEvery,
		WaitForCancellation: true,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrTypeUnknownTool}},
		Summary:             "read " + benchFile,
	})
	for turn := 1; ; turn++ {
		var r plainReply
		if err := workflow.ExecuteActivity(model, pa.PlainModel, turn, turns).Get(ctx, &r); err != nil {
			return turn - 1, err
		}
		if r.CallID == "" {
			return turn, nil
		}
		var out string
		if err := workflow.ExecuteActivity(tool, pa.PlainTool, r.CallID).Get(ctx, &out); err != nil {
			return turn, err
		}
	}
}

// plainModelOptions are the options the session gives CallModel.
func plainModelOptions() workflow.ActivityOptions {
	return workflow.ActivityOptions{
		StartToCloseTimeout: 10 * time.Minute,
		HeartbeatTimeout:    10 * activities.HeartbeatEvery,
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 10,
			NonRetryableErrorTypes: []string{activities.ErrTypeModelRejected, activities.ErrTypeNoModel},
		},
		Summary: "model: scripted-bench",
	}
}

// plain runs one plain workflow of turns tool turns and returns its wall
// time, start request to result.
func (d *durable) plain(ctx context.Context, turns int) (time.Duration, error) {
	wall, _, err := d.sdkWorkflow(ctx, "plain", plainWorkflowType, turns)
	return wall, err
}

// sdkWorkflow runs one of the bench's own SDK workflows (workflowType,
// with turns and then more as its arguments), checks it made turns+1
// model calls, and returns its wall time, start request to result, and
// its workflow id.
func (d *durable) sdkWorkflow(ctx context.Context, name, workflowType string, turns int, more ...any) (time.Duration, string, error) {
	id := fmt.Sprintf("%s-%s-%d", d.queue, name, d.seq.Add(1))
	start := time.Now()
	run, err := d.c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: id, TaskQueue: d.queue, EnableEagerStart: d.opts.EagerStart,
	}, workflowType, append([]any{turns}, more...)...)
	if err != nil {
		return 0, id, fmt.Errorf("start %s workflow: %w", name, err)
	}
	var calls int
	if err := run.Get(ctx, &calls); err != nil {
		return 0, id, fmt.Errorf("%s workflow %s: %w", name, id, err)
	}
	if calls != turns+1 {
		return 0, id, fmt.Errorf("%s workflow %s: %d model calls, want %d", name, id, calls, turns+1)
	}
	return time.Since(start), id, nil
}
