package main

import (
	"context"
	"errors"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/workflows"
)

// ending is how a closed session ended when it has no result to show it:
// failed, cancelled, terminated or timed out, with the reason. show and
// status print it, so a session that failed at start says why without a
// trip to `result`.
type ending struct {
	How    string `json:"how"`
	Reason string `json:"reason,omitempty"`
}

// isOpen reports whether a described session still runs.
func isOpen(st enumspb.WorkflowExecutionStatus) bool {
	return st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING || st == enumspb.WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW
}

// ended reads how a closed session ended; nil while it runs or when it
// completed (its result says how, and status shows it).
func (a *app) ended(ctx context.Context, c sessionClient, desc *workflowservice.DescribeWorkflowExecutionResponse) *ending {
	info := desc.GetWorkflowExecutionInfo()
	if isOpen(info.GetStatus()) || info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED {
		return nil
	}
	ex := info.GetExecution()
	var res workflows.SessionResult
	err := c.GetWorkflow(ctx, ex.GetWorkflowId(), ex.GetRunId()).Get(ctx, &res)
	how, reason := closeReason(err)
	if how == "" {
		how = statusName(info.GetStatus().String())
	}
	return &ending{How: how, Reason: reason}
}

// closeReason names how a session closed without a result, or "" when err
// is not about the session's end (a network failure, an unknown id). The
// reason is the failure's own message, unwrapped once from "workflow
// execution error (type: ..., workflowID: ...)", without the SDK's
// "(type: X, retryable: false)" tail.
func closeReason(err error) (name, detail string) {
	var canceled *temporal.CanceledError
	var terminated *temporal.TerminatedError
	var timeout *temporal.TimeoutError
	var wee *temporal.WorkflowExecutionError
	switch {
	case errors.As(err, &canceled):
		return "cancelled", ""
	case errors.As(err, &terminated):
		return "terminated", ""
	case errors.As(err, &timeout):
		return "timed-out", ""
	case errors.As(err, &wee):
		cause := errors.Unwrap(wee)
		if cause == nil {
			return "failed", wee.Error()
		}
		var app *temporal.ApplicationError
		if errors.As(cause, &app) && app.Message() != "" {
			if app.Type() != "" {
				return "failed", fmt.Sprintf("%s [%s]", app.Message(), app.Type())
			}
			return "failed", app.Message()
		}
		return "failed", cause.Error()
	}
	return "", ""
}
