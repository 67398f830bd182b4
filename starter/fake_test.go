package main

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// fakeClient records what commands send and answers queries from funcs, so
// every command runs without a server.
type fakeClient struct {
	mu        sync.Mutex
	started   []startCall
	signals   []signalCall
	cancelled []string
	queries   map[string]int // how often each query was asked

	query     func(name string, n int) (any, error)
	describe  func(n int) (enumspb.WorkflowExecutionStatus, error)
	result    func(valuePtr any) error
	describes int
	startErr  error
	// updateErr, when set, is the session's answer to each approve
	// update (nil accepts it), as the update's validator would refuse.
	updateErr func(arg any) error

	list   func(*workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error)
	lists  []*workflowservice.ListWorkflowExecutionsRequest
	events []*historypb.HistoryEvent

	schedules fakeSchedules
	// polled, when set, says which task queues have a worker polling
	// (nil: every queue has one).
	polled func(tq string) bool
}

type startCall struct {
	opts     client.StartWorkflowOptions
	workflow any
	args     []any
}

type signalCall struct {
	id, name string
	arg      any
}

func (f *fakeClient) ExecuteWorkflow(_ context.Context, opts client.StartWorkflowOptions, wf any, args ...any) (client.WorkflowRun, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.startErr != nil {
		return nil, f.startErr
	}
	f.started = append(f.started, startCall{opts, wf, args})
	return fakeRun{id: opts.ID, runID: "run-1", f: f}, nil
}

func (f *fakeClient) GetWorkflow(_ context.Context, id, runID string) client.WorkflowRun {
	return fakeRun{id: id, runID: runID, f: f}
}

func (f *fakeClient) SignalWorkflow(_ context.Context, id, _, name string, arg any) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.signals = append(f.signals, signalCall{id, name, arg})
	return nil
}

// UpdateWorkflow records an update like a signal, under the update's name.
func (f *fakeClient) UpdateWorkflow(_ context.Context, o client.UpdateWorkflowOptions) (client.WorkflowUpdateHandle, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var arg any
	if len(o.Args) == 1 {
		arg = o.Args[0]
	}
	f.signals = append(f.signals, signalCall{o.WorkflowID, o.UpdateName, arg})
	var err error
	if f.updateErr != nil {
		// The session's refusal reaches the client as the SDK delivers a
		// validator's error: an ApplicationError.
		if err = f.updateErr(arg); err != nil {
			err = temporal.NewApplicationError(err.Error(), "")
		}
	}
	return fakeUpdate{err}, nil
}

type fakeUpdate struct{ err error }

func (fakeUpdate) WorkflowID() string                   { return "" }
func (fakeUpdate) RunID() string                        { return "" }
func (fakeUpdate) UpdateID() string                     { return "" }
func (u fakeUpdate) Get(_ context.Context, _ any) error { return u.err }

func (f *fakeClient) CancelWorkflow(_ context.Context, id, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cancelled = append(f.cancelled, id)
	return nil
}

func (f *fakeClient) QueryWorkflow(_ context.Context, _, _, name string, _ ...any) (converter.EncodedValue, error) {
	f.mu.Lock()
	if f.queries == nil {
		f.queries = map[string]int{}
	}
	n := f.queries[name]
	f.queries[name]++
	f.mu.Unlock()
	v, err := f.query(name, n)
	if err != nil {
		return nil, err
	}
	return fakeValue{v}, nil
}

func (f *fakeClient) DescribeWorkflowExecution(_ context.Context, id, _ string) (*workflowservice.DescribeWorkflowExecutionResponse, error) {
	f.mu.Lock()
	n := f.describes
	f.describes++
	f.mu.Unlock()
	describe := f.describe
	if describe == nil {
		describe = func(int) (enumspb.WorkflowExecutionStatus, error) {
			return enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
		}
	}
	st, err := describe(n)
	if err != nil {
		return nil, err
	}
	return &workflowservice.DescribeWorkflowExecutionResponse{
		WorkflowExecutionInfo: &workflowpb.WorkflowExecutionInfo{
			Status:    st,
			Execution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: "run-1"},
		},
	}, nil
}

// DescribeTaskQueue answers that the queue has a worker polling now.
func (f *fakeClient) DescribeTaskQueue(_ context.Context, tq string, _ enumspb.TaskQueueType) (*workflowservice.DescribeTaskQueueResponse, error) {
	if f.polled != nil && !f.polled(tq) {
		return &workflowservice.DescribeTaskQueueResponse{}, nil
	}
	return &workflowservice.DescribeTaskQueueResponse{Pollers: []*taskqueuepb.PollerInfo{{LastAccessTime: timestamppb.Now()}}}, nil
}

// ListWorkflow records each request and answers pages from f.list (none:
// an empty page).
func (f *fakeClient) ListWorkflow(_ context.Context, req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists = append(f.lists, req)
	if f.list == nil {
		return &workflowservice.ListWorkflowExecutionsResponse{}, nil
	}
	return f.list(req)
}

// GetWorkflowHistory iterates over f.events.
func (f *fakeClient) GetWorkflowHistory(context.Context, string, string, bool, enumspb.HistoryEventFilterType) client.HistoryEventIterator {
	return &fakeHistory{events: f.events}
}

type fakeHistory struct{ events []*historypb.HistoryEvent }

func (h *fakeHistory) HasNext() bool { return len(h.events) > 0 }
func (h *fakeHistory) Next() (*historypb.HistoryEvent, error) {
	ev := h.events[0]
	h.events = h.events[1:]
	return ev, nil
}

func (f *fakeClient) Close() {}

// ScheduleClient is the fake's schedules, in fake_schedule_test.go.
func (f *fakeClient) ScheduleClient() client.ScheduleClient { return &f.schedules }

type fakeRun struct {
	id, runID string
	f         *fakeClient
}

func (r fakeRun) GetID() string                  { return r.id }
func (r fakeRun) GetRunID() string               { return r.runID }
func (r fakeRun) GetFirstExecutionRunID() string { return r.runID }
func (r fakeRun) Get(_ context.Context, v any) error {
	return r.f.result(v)
}
func (r fakeRun) GetWithOptions(ctx context.Context, v any, _ client.WorkflowRunGetOptions) error {
	return r.Get(ctx, v)
}

// fakeValue decodes like the default JSON data converter does.
type fakeValue struct{ v any }

func (f fakeValue) HasValue() bool { return f.v != nil }
func (f fakeValue) Get(ptr any) error {
	b, err := json.Marshal(f.v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, ptr)
}

// noEnv is an empty environment whose Temporal config file does not
// exist, so no test reads the developer's own profiles.
func noEnv(k string) string {
	if k == "TEMPORAL_CONFIG_FILE" {
		return "/nonexistent/longrun-test/temporal.toml"
	}
	return ""
}

// runFake runs the CLI against f with an empty environment.
func runFake(t *testing.T, f *fakeClient, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	a := &app{
		stdout:       &out,
		stderr:       &errb,
		getenv:       noEnv,
		dial:         func(context.Context, config) (sessionClient, error) { return f, nil },
		pollInterval: 1,
	}
	code = a.run(context.Background(), args)
	return code, out.String(), errb.String()
}
