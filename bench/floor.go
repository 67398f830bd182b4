package main

import (
	"context"
	"time"

	"go.temporal.io/sdk/workflow"
)

// The floor: what Temporal alone costs a session of this shape on this
// machine. An SDK workflow with nothing of ours in it runs, per tool
// turn, one activity that only waits the model's latency (the session's
// model call is an activity with a heartbeat, which cancel needs) and
// one local activity for the read (as a session's read runs where its
// checkout is), then a last model call. Its wall against the in-process
// baseline is the least any design with one model activity a turn can
// reach here; the session's ratio against it is what is ours.

// floorWorkflowType is the name the floor workflow is registered under.
const floorWorkflowType = "BenchFloor"

// FloorModel waits latency (or the cancel), then answers as PlainModel.
func (*plainActivities) FloorModel(ctx context.Context, turn, turns int, latency time.Duration) (plainReply, error) {
	t := time.NewTimer(latency)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return plainReply{}, ctx.Err()
	case <-t.C:
	}
	return pa.PlainModel(ctx, turn, turns)
}

// benchFloorWorkflow runs turns tool turns and the last model call with
// the plain workflow's model options and the read as a local activity.
// It returns the model calls made.
func benchFloorWorkflow(ctx workflow.Context, turns int, latency time.Duration) (int, error) {
	model := workflow.WithActivityOptions(ctx, plainModelOptions())
	read := workflow.WithLocalActivityOptions(ctx, workflow.LocalActivityOptions{StartToCloseTimeout: time.Minute})
	for turn := 1; ; turn++ {
		var r plainReply
		if err := workflow.ExecuteActivity(model, pa.FloorModel, turn, turns, latency).Get(ctx, &r); err != nil {
			return turn - 1, err
		}
		if r.CallID == "" {
			return turn, nil
		}
		var out string
		if err := workflow.ExecuteLocalActivity(read, pa.PlainTool, r.CallID).Get(ctx, &out); err != nil {
			return turn, err
		}
	}
}

// floorModel is the floor's model activity type, as its history names it.
const floorModel = "FloorModel"

// floor runs one floor workflow of turns tool turns at latency and
// returns its wall time, start request to result, and its workflow id.
func (d *durable) floor(ctx context.Context, turns int, latency time.Duration) (time.Duration, string, error) {
	return d.sdkWorkflow(ctx, "floor", floorWorkflowType, turns, latency)
}
