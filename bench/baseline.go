package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
)

// loopResult is one session's timing: the whole wall time and the start of
// every model call, so per-turn times are measured the same way for the
// baseline and for the history of a durable session.
type loopResult struct {
	Wall       time.Duration
	ModelStart []time.Time
	End        time.Time
	Turns      int
}

// runBaseline is the session's turn loop with no Temporal: the same
// activity methods called directly, one after another, the conversation in
// memory. It does what the workflow does per turn (catalog and workspace
// config at start, model call, each tool call, results appended) and
// nothing durable.
func runBaseline(ctx context.Context, acts *activities.Activities, turns int) (loopResult, error) {
	start := time.Now()
	cat, err := acts.ListTools(ctx)
	if err != nil {
		return loopResult{}, err
	}
	if _, err := acts.LoadWorkspaceConfig(ctx, ""); err != nil {
		return loopResult{}, err
	}
	defs := make([]activities.ToolDef, 0, len(cat.Tools))
	for _, sp := range cat.Tools {
		defs = append(defs, activities.ToolDef{Name: sp.Name, Description: sp.Description, Parameters: sp.Parameters})
	}
	msgs := []conversation.Message{{Role: conversation.RoleUser, Content: prompt(turns, 1)}}
	var res loopResult
	for turn := 1; turn <= turns+1; turn++ {
		res.ModelStart = append(res.ModelStart, time.Now())
		resp, err := acts.CallModel(ctx, activities.ModelRequest{Messages: msgs, Tools: defs, Turn: turn})
		if err != nil {
			return res, fmt.Errorf("turn %d: %w", turn, err)
		}
		res.Turns = turn
		msgs = append(msgs, resp.Message)
		if len(resp.Message.ToolCalls) == 0 {
			break
		}
		for _, c := range resp.Message.ToolCalls {
			out, err := acts.RunTool(ctx, activities.ToolRequest{CallID: c.ID, Name: c.Name, Arguments: json.RawMessage(c.Arguments)})
			if err != nil {
				return res, fmt.Errorf("turn %d: tool %s: %w", turn, c.Name, err)
			}
			reason := conversation.ReasonRan
			if out.IsError {
				reason = conversation.ReasonFailed
			}
			msgs = append(msgs, conversation.ToolMessage(conversation.ToolResult{
				CallID: c.ID, Name: c.Name, Content: out.Content, IsError: out.IsError, Reason: reason,
			}))
		}
	}
	res.End = time.Now()
	res.Wall = res.End.Sub(start)
	return res, nil
}

// perTurn is the time from one model call's start to the next, for every
// turn that called a tool.
func (r loopResult) perTurn() []time.Duration {
	var d []time.Duration
	for i := 1; i < len(r.ModelStart); i++ {
		d = append(d, r.ModelStart[i].Sub(r.ModelStart[i-1]))
	}
	return d
}
