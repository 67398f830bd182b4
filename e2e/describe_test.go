package e2e

import (
	"context"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
)

// describeRun is the server's description of a run, as the tests read it:
// DescribeWorkflow's raw response (DescribeWorkflowExecution, which
// returned it directly, is deprecated).
func describeRun(ctx context.Context, c client.Client, id, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	d, err := c.DescribeWorkflow(ctx, id, runID)
	if err != nil {
		return nil, err
	}
	return d.RawResponse, nil
}
