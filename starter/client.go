package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/contrib/envconfig"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"

	"github.com/longrun/longrun/codec"
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
	DescribeTaskQueue(ctx context.Context, taskQueue string, taskQueueType enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error)
	ListWorkflow(ctx context.Context, request *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
	GetWorkflowHistory(ctx context.Context, workflowID, runID string, isLongPoll bool, filterType enumspb.HistoryEventFilterType) client.HistoryEventIterator
	ScheduleClient() client.ScheduleClient
	Close()
}

// dialTimeout bounds the first contact with the server: a person who typed
// the wrong address should hear so in seconds, not after gRPC's retries.
const dialTimeout = 5 * time.Second

// dialTemporal connects eagerly, so an unreachable server is reported before
// any command runs. cfg.client is set by connect; without it (a caller that
// skipped connect) the address and namespace alone are dialled.
func dialTemporal(ctx context.Context, cfg config) (sessionClient, error) {
	prof := cfg.client
	if prof == nil {
		prof = &envconfig.ClientConfigProfile{Address: cfg.Address, Namespace: cfg.Namespace}
	}
	// The remote codec, when a profile names one, lets the CLI read
	// encrypted conversations the way the UI does.
	opts, err := prof.ToClientOptions(envconfig.ToClientOptionsRequest{IncludeRemoteCodec: true})
	if err != nil {
		return nil, fmt.Errorf("temporal client config: %w", err)
	}
	// The SDK's default logger writes to stdout, which would corrupt
	// --json output; the CLI reports errors itself.
	opts.Logger = tlog.NewStructuredLogger(slog.New(slog.DiscardHandler))
	if cfg.keys != nil {
		// The worker's keys: what start and send put in history is
		// encrypted like everything the worker writes, and queries and
		// results decrypt.
		opts.DataConverter = codec.DataConverter(cfg.keys)
	}
	dctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	c, err := client.DialContext(dctx, opts)
	if err != nil {
		return nil, fmt.Errorf("cannot reach Temporal at %s: %w", opts.HostPort, err)
	}
	return c, nil
}

// connect resolves the Temporal client settings the way the temporal CLI
// does (profile file, then TEMPORAL_* variables, then flags) and dials.
func (a *app) connect(ctx context.Context) (sessionClient, error) {
	if err := a.resolveClient(); err != nil {
		return nil, err
	}
	return a.dial(ctx, a.cfg)
}

func (a *app) resolveClient() error {
	if a.cfg.client != nil {
		return nil
	}
	if err := a.loadKeys(); err != nil {
		return err
	}
	prof, err := envconfig.LoadClientConfigProfile(envconfig.LoadClientConfigProfileOptions{
		ConfigFilePath:    a.cfg.ConfigFile,
		ConfigFileProfile: a.cfg.Profile,
		EnvLookup:         envLookup{a.getenv, a.environ},
	})
	if err != nil {
		return fmt.Errorf("temporal client config: %w", err)
	}
	if a.cfg.Address == "" {
		a.cfg.Address = cmp.Or(prof.Address, defaultAddress)
	}
	if a.cfg.Namespace == "" {
		a.cfg.Namespace = cmp.Or(prof.Namespace, defaultNamespace)
	}
	prof.Address, prof.Namespace = a.cfg.Address, a.cfg.Namespace
	a.cfg.client = &prof
	return nil
}

// loadKeys reads --encryption-keys once, if given.
func (a *app) loadKeys() error {
	if a.cfg.EncryptionKeys == "" || a.cfg.keys != nil {
		return nil
	}
	k, err := codec.LoadKeys(a.cfg.EncryptionKeys)
	if err != nil {
		return fmt.Errorf("--encryption-keys: %w", err)
	}
	a.cfg.keys = k
	return nil
}

// payloads decodes payloads the CLI reads itself from descriptions and
// history (summaries, schedule arguments and memos): with the worker's
// keys when given, since the worker's client encrypted them.
func (a *app) payloads() converter.DataConverter {
	if a.cfg.keys != nil {
		return codec.DataConverter(a.cfg.keys)
	}
	return converter.GetDefaultDataConverter()
}

// envLookup gives envconfig the app's environment. An empty variable counts
// as unset, as it always has for the starter, so `TEMPORAL_ADDRESS=` does
// not blank a profile's address; TEMPORAL_TLS also takes yes/no, which the
// starter accepted before it used envconfig.
type envLookup struct {
	getenv  func(string) string
	environ func() []string
}

func (e envLookup) LookupEnv(k string) (string, bool) {
	v := e.getenv(k)
	if k == "TEMPORAL_TLS" {
		switch strings.ToLower(v) {
		case "yes":
			v = "true"
		case "no":
			v = "false"
		}
	}
	return v, v != ""
}

func (e envLookup) Environ() []string {
	if e.environ == nil {
		return nil
	}
	return e.environ()
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
