package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/workflows"
)

// sessionClient is the part of client.Client the CLI uses, declared here so
// tests can fake it.
type sessionClient interface {
	ExecuteWorkflow(ctx context.Context, options client.StartWorkflowOptions, workflow any, args ...any) (client.WorkflowRun, error)
	GetWorkflow(ctx context.Context, workflowID, runID string) client.WorkflowRun
	SignalWorkflow(ctx context.Context, workflowID, runID, signalName string, arg any) error
	UpdateWorkflow(ctx context.Context, options client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error)
	CancelWorkflow(ctx context.Context, workflowID, runID string) error
	QueryWorkflow(ctx context.Context, workflowID, runID, queryType string, args ...any) (converter.EncodedValue, error)
	DescribeWorkflowExecution(ctx context.Context, workflowID, runID string) (*workflowservice.DescribeWorkflowExecutionResponse, error)
	ListWorkflow(ctx context.Context, request *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
	GetWorkflowHistory(ctx context.Context, workflowID, runID string, isLongPoll bool, filterType enumspb.HistoryEventFilterType) client.HistoryEventIterator
	Close()
}

// dialTimeout bounds the first contact with the server: a person who typed
// the wrong address should hear so in seconds, not after gRPC's retries.
const dialTimeout = 5 * time.Second

// dialTemporal connects eagerly, so an unreachable server is reported before
// any command runs.
func dialTemporal(ctx context.Context, cfg config) (sessionClient, error) {
	opts := client.Options{
		HostPort:  cfg.Address,
		Namespace: cfg.Namespace,
		// The SDK's default logger writes to stdout, which would corrupt
		// --json output; the CLI reports errors itself.
		Logger: tlog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	}
	if cfg.APIKey != "" {
		opts.Credentials = client.NewAPIKeyStaticCredentials(cfg.APIKey)
	}
	if cfg.APIKey != "" || cfg.TLS {
		opts.ConnectionOptions.TLS = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := client.DialContext(dctx, opts)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s: %w", cfg.Address, err)
	}
	return c, nil
}

// connect dials with the app's config.
func (a *app) connect(ctx context.Context) (sessionClient, error) {
	return a.dial(ctx, a.cfg)
}

// sessionError turns the server's errors about a session into sentences a
// person can act on; other errors pass through wrapped with what was tried.
func sessionError(err error, what, session, namespace string) error {
	if err == nil {
		return nil
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("session %q not found in namespace %s", session, namespace)
	}
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return fmt.Errorf("session %q already exists in namespace %s; use send to talk to it or pick another --id", session, namespace)
	}
	var nsnf *serviceerror.NamespaceNotFound
	if errors.As(err, &nsnf) {
		return fmt.Errorf("namespace %s does not exist", namespace)
	}
	var dl *serviceerror.DeadlineExceeded
	if errors.As(err, &dl) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s %s: timed out (is a longrun worker running?): %w", what, session, err)
	}
	return fmt.Errorf("%s %s: %w", what, session, err)
}

// queryTimeout bounds one query: with no worker polling, the server would
// otherwise hold the call open.
const queryTimeout = 15 * time.Second

func query[T any](ctx context.Context, a *app, c sessionClient, session, name string) (T, error) {
	var out T
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	v, err := c.QueryWorkflow(qctx, session, "", name)
	if err != nil {
		return out, sessionError(err, "query "+name, session, a.cfg.Namespace)
	}
	if err := v.Get(&out); err != nil {
		return out, fmt.Errorf("decode %s of %s: %w", name, session, err)
	}
	return out, nil
}

func (a *app) queryPending(ctx context.Context, c sessionClient, session string) ([]workflows.PendingApproval, error) {
	return query[[]workflows.PendingApproval](ctx, a, c, session, workflows.QueryPendingApprovals)
}

func (a *app) queryConversation(ctx context.Context, c sessionClient, session string) ([]conversation.Message, error) {
	return query[[]conversation.Message](ctx, a, c, session, workflows.QueryConversation)
}

func (a *app) queryStatus(ctx context.Context, c sessionClient, session string) (workflows.Status, error) {
	return query[workflows.Status](ctx, a, c, session, workflows.QueryStatus)
}
