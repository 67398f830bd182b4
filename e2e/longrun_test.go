package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/workflows"
)

// longRunShape is the size of the long-run test: the full 2,000 turns
// (minutes with -race on two cores) only with LONGRUN_LONG=1, as `make
// longrun` sets; `make test` runs a 400-turn form that still switches runs
// six times with the approval carried across one switch. The long form
// switches every 250 turns, not 300: the server suggests continue-as-new at
// 4,096 events, which a run reaches at turn 267, and the approval must
// fall on a switch the test can predict.
func longRunShape() (turns, perRun int) {
	if os.Getenv("LONGRUN_LONG") == "1" {
		return 2000, 250
	}
	return 400, 60
}

// A scripted session of thousands of turns continues as new every perRun
// turns; at the last turn of the third run the model asks for a write,
// which waits for a person across the switch and is approved in the next
// run by the same call id. The session ends completed after exactly turns
// model calls, every run's history replays, and the whole conversation,
// read back through the transcript, is paired.
func TestTwoThousandTurnsContinueAsNew(t *testing.T) {
	t.Parallel()
	turns, perRun := longRunShape()
	approvalTurn := 3 * perRun // the last turn of run 3: the switch comes while it waits
	const writeID = "c_write"

	// Turn n is the number of tool results so far plus one: the model
	// reads with a limit that differs every turn (three identical calls in
	// a row would trip the doom-loop check), writes once at approvalTurn
	// and answers with text at the last turn.
	e := newEnvResponder(t, func(req sm.Request) (sm.Reply, bool) {
		n := 1
		for _, m := range req.Messages {
			if m.Role == "tool" {
				n++
			}
		}
		switch {
		case n >= turns:
			return sm.Text(fmt.Sprintf("done after %d turns", n)), true
		case n == approvalTurn:
			return sm.Tools(sm.Call{ID: writeID, Name: "write", Arguments: `{"path": "approved.txt", "content": "written once\n"}`}), true
		}
		return sm.Tools(sm.Call{ID: fmt.Sprintf("c_read_%d", n), Name: "read", Arguments: fmt.Sprintf(`{"path": "notes.txt", "limit": %d}`, n)}), true
	})
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "notes.txt"), []byte("one line of notes\n"), 0o644))
	started := time.Now()
	id := e.start(workflows.SessionInput{Prompt: "read the notes, over and over", Profile: "build", ContinueAsNewTurns: perRun})
	first := describe(t, id).GetWorkflowExecutionInfo().GetExecution().GetRunId()

	// The write waits in a run that started with it carried in: the run
	// id changed while it was pending, and the run's input holds it.
	var carried string
	waitFor(t, "the write to wait for approval in a later run", 10*time.Minute, func() bool {
		val, err := tc.QueryWorkflow(context.Background(), id, "", workflows.QueryPendingApprovals)
		if err != nil {
			return false
		}
		var p []workflows.PendingApproval
		if val.Get(&p) != nil || len(p) != 1 || p[0].CallID != writeID {
			return false
		}
		carried = describe(t, id).GetWorkflowExecutionInfo().GetExecution().GetRunId()
		return true
	})
	require.NotEqual(t, first, carried, "the session never continued as new")
	in := runInput(t, id, carried)
	require.NotNil(t, in.Resume, "the run holding the write did not start by continue-as-new")
	require.Equal(t, approvalTurn, in.Resume.Turn)
	require.NotNil(t, in.Resume.Batch)
	require.Len(t, in.Resume.Batch.Calls, 1)
	require.Equal(t, writeID, in.Resume.Batch.Calls[0].Call.ID)
	require.IsType(t, session.Waiting{}, in.Resume.Batch.Calls[0].State)
	require.Equal(t, workflows.PhaseWaitingApproval, query[workflows.Status](t, id, workflows.QueryStatus).Phase)
	require.NoFileExists(t, filepath.Join(e.workspace, "approved.txt"), "the write ran before approval")
	t.Logf("write pending in run %s after %s", carried, time.Since(started).Round(time.Second))

	out, err := e.starter("approve", id, writeID)
	require.NoError(t, err, out)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	var r workflows.SessionResult
	require.NoError(t, tc.GetWorkflow(ctx, id, "").Get(ctx, &r))
	took := time.Since(started)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	require.Equal(t, turns, r.Turns)
	require.Equal(t, fmt.Sprintf("done after %d turns", turns), r.FinalText)

	got, err := os.ReadFile(filepath.Join(e.workspace, "approved.txt"))
	require.NoError(t, err)
	require.Equal(t, "written once\n", string(got))

	msgs := e.checkSession(id) // the whole conversation, through the transcript
	require.Equal(t, conversation.ReasonRan, resultFor(msgs, writeID).Reason)
	var results, assistants int
	for _, m := range msgs {
		switch m.Role {
		case conversation.RoleTool:
			results++
		case conversation.RoleAssistant:
			assistants++
		}
	}
	require.Equal(t, turns-1, results)
	require.Equal(t, turns, assistants)

	// Every run, newest first, by the chain of continued-execution ids.
	runs := runChain(t, id)
	require.GreaterOrEqual(t, len(runs), (turns+perRun-1)/perRun, "runs")
	require.Equal(t, first, runs[len(runs)-1].run)
	waitFor(t, "visibility to list every run", 30*time.Second, func() bool {
		resp, err := tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{Query: `WorkflowId = "` + id + `"`})
		return err == nil && len(resp.GetExecutions()) == len(runs)
	})
	writes, events := 0, 0
	replayer := worker.NewWorkflowReplayer()
	replayer.RegisterWorkflowWithOptions((&workflows.Sessions{}).AgentSession, workflow.RegisterOptions{Name: workflows.WorkflowType})
	for _, run := range runs {
		events += len(run.h.Events)
		for _, ev := range run.h.Events {
			if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED {
				t.Fatalf("run %s: workflow task failed: %s", run.run, ev.GetWorkflowTaskFailedEventAttributes().GetFailure().GetMessage())
			}
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "RunTool" &&
				bytes.Contains(a.GetInput().GetPayloads()[0].GetData(), []byte(`"`+writeID+`"`)) {
				writes++
			}
		}
		require.NoError(t, replayer.ReplayWorkflowHistoryWithOptions(nil, run.h, worker.ReplayWorkflowHistoryOptions{
			OriginalExecution: workflow.Execution{ID: id, RunID: run.run},
		}), "replay run %s", run.run)
	}
	require.Equal(t, 1, writes, "the approved write must run exactly once")
	t.Logf("%d turns in %d runs, %d events in all, %s (%.1f ms a turn)", turns, len(runs), events, took.Round(time.Second), float64(took.Milliseconds())/float64(turns))

	recordRunHistory(t, id, carried, "continue_as_new_pending_approval")
}

func describe(t *testing.T, id string) *workflowservice.DescribeWorkflowExecutionResponse {
	t.Helper()
	d, err := describeRun(context.Background(), tc, id, "")
	require.NoError(t, err)
	return d
}

// runHistory is one run's full history.
func runHistory(t *testing.T, id, run string) *historypb.History {
	t.Helper()
	it := tc.GetWorkflowHistory(context.Background(), id, run, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		require.NoError(t, err)
		h.Events = append(h.Events, ev)
	}
	return h
}

// runInput decodes the SessionInput a run started with.
func runInput(t *testing.T, id, run string) workflows.SessionInput {
	t.Helper()
	h := runHistory(t, id, run)
	var in workflows.SessionInput
	p := h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetInput().GetPayloads()
	require.NotEmpty(t, p)
	require.NoError(t, converter.GetDefaultDataConverter().FromPayload(p[0], &in))
	return in
}

type runOf struct {
	run string
	h   *historypb.History
}

// runChain follows a session from its latest run back to its first by
// each run's ContinuedExecutionRunId, checking that every earlier run
// closed by continuing as new.
func runChain(t *testing.T, id string) []runOf {
	t.Helper()
	var runs []runOf
	run := describe(t, id).GetWorkflowExecutionInfo().GetExecution().GetRunId()
	for run != "" {
		h := runHistory(t, id, run)
		if len(runs) > 0 {
			last := h.Events[len(h.Events)-1]
			require.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW, last.GetEventType(), "run %s", run)
		}
		runs = append(runs, runOf{run: run, h: h})
		run = h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	}
	return runs
}

// recordRunHistory is recordHistory for one run of a session that
// continued as new (recordHistory takes the latest run).
func recordRunHistory(t *testing.T, id, run, name string) {
	t.Helper()
	dir := os.Getenv("LONGRUN_RECORD_HISTORIES")
	if dir == "" {
		return
	}
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(runHistory(t, id, run))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), raw, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".id"), []byte(id+"\n"), 0o644))
}
