package main

import (
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	sdkpb "go.temporal.io/api/sdk/v1"
	workflowpb "go.temporal.io/api/workflow/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/workflows"
)

func TestListQuery(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		o    listOptions
		want string
	}{
		{"all sessions", listOptions{}, `WorkflowType = "AgentSession"`},
		{"waiting", listOptions{waiting: true},
			`WorkflowType = "AgentSession" AND ExecutionStatus = "Running" AND (LongrunPendingApprovals > 0 OR LongrunPhase = "waiting-approval")`},
		{"running phase and query", listOptions{running: true, phase: "waiting-input", query: "LongrunTokens > 5"},
			`WorkflowType = "AgentSession" AND ExecutionStatus = "Running" AND LongrunPhase = "waiting-input" AND (LongrunTokens > 5)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, listQuery(tc.o))
		})
	}
}

func payload(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	return p
}

func execution(t *testing.T, id, phase string, turns, pending int64) *workflowpb.WorkflowExecutionInfo {
	return &workflowpb.WorkflowExecutionInfo{
		Execution: &commonpb.WorkflowExecution{WorkflowId: id, RunId: "run-" + id},
		Status:    enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING,
		StartTime: timestamppb.New(time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)),
		SearchAttributes: &commonpb.SearchAttributes{IndexedFields: map[string]*commonpb.Payload{
			"LongrunPhase":            payload(t, phase),
			"LongrunTurns":            payload(t, turns),
			"LongrunPendingApprovals": payload(t, pending),
			"LongrunModel":            payload(t, "gpt-test"),
		}},
	}
}

func TestListWaitingPagesAndRendersColumns(t *testing.T) {
	t.Parallel()
	f := &fakeClient{list: func(req *workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
		if len(req.NextPageToken) == 0 {
			return &workflowservice.ListWorkflowExecutionsResponse{
				Executions:    []*workflowpb.WorkflowExecutionInfo{execution(t, "s1", "waiting-approval", 3, 2)},
				NextPageToken: []byte("p2"),
			}, nil
		}
		// A session that has not run a turn has no attributes yet.
		return &workflowservice.ListWorkflowExecutionsResponse{Executions: []*workflowpb.WorkflowExecutionInfo{{
			Execution: &commonpb.WorkflowExecution{WorkflowId: "s2"},
			Status:    enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING,
		}}}, nil
	}}
	code, stdout, stderr := runFake(t, f, "list", "--waiting")
	require.Equal(t, exitOK, code, stderr)
	require.Len(t, f.lists, 2, "follows the page token")
	require.Contains(t, f.lists[0].Query, "LongrunPendingApprovals > 0")
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	require.Len(t, lines, 3)
	require.Regexp(t, `^SESSION\s+STATUS\s+PHASE\s+TURNS\s+PENDING\s+MODEL\s+STARTED$`, lines[0])
	require.Regexp(t, `^s1\s+running\s+waiting-approval\s+3\s+2\s+gpt-test\s+2026-03-04`, lines[1])
	require.Regexp(t, `^s2\s+running\s+-\s+0\s+0\s+-`, lines[2])
}

func TestListLimitJSONAndQuiet(t *testing.T) {
	t.Parallel()
	many := func(*workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
		return &workflowservice.ListWorkflowExecutionsResponse{
			Executions:    []*workflowpb.WorkflowExecutionInfo{execution(t, "a", "done", 1, 0), execution(t, "b", "running", 2, 0)},
			NextPageToken: []byte("more"),
		}, nil
	}
	f := &fakeClient{list: many}
	code, stdout, stderr := runFake(t, f, "list", "--limit", "3", "--json")
	require.Equal(t, exitOK, code, stderr)
	require.EqualValues(t, 3, f.lists[0].PageSize)
	var rows []sessionRow
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	require.Len(t, rows, 3, "stops at the limit although the server has more")
	require.Equal(t, "done", rows[0].Phase)
	require.EqualValues(t, 2, rows[1].Turns)

	code, stdout, _ = runFake(t, &fakeClient{list: many}, "list", "-q", "--limit", "2")
	require.Equal(t, exitOK, code)
	require.Equal(t, "a\nb\n", stdout)
}

func TestListEmptyAndErrors(t *testing.T) {
	t.Parallel()
	code, stdout, _ := runFake(t, &fakeClient{}, "list", "--waiting")
	require.Equal(t, exitOK, code)
	require.Equal(t, "no session is waiting for a person in namespace default\n", stdout)

	code, _, stderr := runFake(t, &fakeClient{}, "list", "extra")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "list takes no arguments")

	f := &fakeClient{list: func(*workflowservice.ListWorkflowExecutionsRequest) (*workflowservice.ListWorkflowExecutionsResponse, error) {
		return nil, errors.New("unknown search attribute LongrunPhase")
	}}
	code, _, stderr = runFake(t, f, "list")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, "unknown search attribute LongrunPhase")
}

func TestShowStatusAndLastMessages(t *testing.T) {
	t.Parallel()
	var msgs []conversation.Message
	for i := range 10 {
		msgs = append(msgs, conversation.Message{Role: conversation.RoleUser, Content: "message " + string(rune('0'+i))})
	}
	f := &fakeClient{
		describe: func(int) (enumspb.WorkflowExecutionStatus, error) {
			return enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING, nil
		},
		query: func(name string, _ int) (any, error) {
			switch name {
			case workflows.QueryStatus:
				return workflows.Status{Phase: "waiting-approval", Turn: 4, MaxTurns: 50, Model: "m1", PendingApprovals: 1,
					Usage: conversation.Usage{TotalTokens: 99, PromptTokens: 90, CompletionTokens: 9}}, nil
			case workflows.QueryConversation:
				return msgs, nil
			}
			return nil, errors.New("unexpected query " + name)
		},
	}
	code, stdout, stderr := runFake(t, f, "show", "s1", "--messages", "3")
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `status\s+running`, stdout)
	require.Regexp(t, `phase\s+waiting-approval`, stdout)
	require.Regexp(t, `tokens\s+99 \(prompt 90, completion 9\)`, stdout)
	require.Contains(t, stdout, "last 3 of 10 messages:\nuser: message 7\nuser: message 8\nuser: message 9\n")
	require.Contains(t, stdout, "waiting for you: longrun pending s1")

	code, stdout, _ = runFake(t, f, "show", "s1", "--json")
	require.Equal(t, exitOK, code)
	var v sessionView
	require.NoError(t, json.Unmarshal([]byte(stdout), &v))
	require.Equal(t, 10, v.Total)
	require.Len(t, v.Messages, 6)
	require.Equal(t, 4, v.State.Turn)
}

func TestShowWithoutWorkerStillShowsDescribe(t *testing.T) {
	t.Parallel()
	f := &fakeClient{
		describe: func(int) (enumspb.WorkflowExecutionStatus, error) {
			return enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil
		},
		query: func(string, int) (any, error) { return nil, errors.New("no poller seen for task queue") },
	}
	code, stdout, stderr := runFake(t, f, "show", "s1")
	require.Equal(t, exitFailure, code)
	require.Regexp(t, `status\s+completed`, stdout)
	require.Contains(t, stderr, "no poller seen")
}

func TestHistoryJSONIsReplayableFormat(t *testing.T) {
	t.Parallel()
	f := &fakeClient{events: []*historypb.HistoryEvent{
		{EventId: 1, EventType: enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED, Attributes: &historypb.HistoryEvent_WorkflowExecutionStartedEventAttributes{
			WorkflowExecutionStartedEventAttributes: &historypb.WorkflowExecutionStartedEventAttributes{WorkflowType: &commonpb.WorkflowType{Name: workflows.WorkflowType}},
		}},
		{EventId: 2, EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
			UserMetadata: &sdkpb.UserMetadata{Summary: payload(t, "shell: go test ./...")},
			Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{
				ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{ActivityType: &commonpb.ActivityType{Name: "RunTool"}},
			}},
	}}
	code, stdout, stderr := runFake(t, f, "history", "s1", "--json")
	require.Equal(t, exitOK, code, stderr)
	h, err := client.HistoryFromJSON(strings.NewReader(stdout), client.HistoryJSONOptions{})
	require.NoError(t, err)
	require.Len(t, h.Events, 2)
	require.Equal(t, workflows.WorkflowType, h.Events[0].GetWorkflowExecutionStartedEventAttributes().GetWorkflowType().GetName())

	f.events = []*historypb.HistoryEvent{f.events[1]}
	code, stdout, _ = runFake(t, f, "history", "s1")
	require.Equal(t, exitOK, code)
	require.Regexp(t, `^2\s+\S+\s+ActivityTaskScheduled\s+RunTool: shell: go test \./\.\.\.\n$`, stdout)
}

// Every command explains itself with examples, and --help never dials.
func TestEveryCommandHasHelpWithExamples(t *testing.T) {
	t.Parallel()
	for _, c := range commands() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			require.NotEmpty(t, examples[c.name], "no examples for %s", c.name)
			code, stdout, stderr := runFake(t, &fakeClient{}, c.name, "--help")
			require.Equal(t, exitOK, code, stderr)
			require.Contains(t, stdout, "Usage: longrun "+c.name)
			require.Contains(t, stdout, "Examples:\n  longrun "+c.name)
		})
	}
}

// The completion script is valid bash, knows every command, and offers
// each command's real flags.
func TestCompletionBash(t *testing.T) {
	t.Parallel()
	code, script, stderr := runFake(t, &fakeClient{}, "completion", "bash")
	require.Equal(t, exitOK, code, stderr)
	for _, c := range commands() {
		require.Contains(t, script, "    "+c.name+") flags=")
	}
	require.Regexp(t, `approve\) flags="[^"]*--remember[^"]*"; session=1`, script)
	require.Regexp(t, `list\) flags="[^"]*--waiting[^"]*"; session=0`, script)
	require.Contains(t, script, "complete -F _longrun_complete longrun")

	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to check the script with")
	}
	// Load it and complete "longrun appr" (ap: approve and apply) and "longrun list --wa".
	out, err := exec.Command(bash, "-c", script+`
COMP_WORDS=(longrun appr); COMP_CWORD=1; _longrun_complete; echo "${COMPREPLY[*]}"
COMP_WORDS=(longrun --address h:1 list --wa); COMP_CWORD=4; _longrun_complete; echo "${COMPREPLY[*]}"
`).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "approve\n--waiting\n", string(out))

	code, _, _ = runFake(t, &fakeClient{}, "completion", "fish")
	require.Equal(t, exitUsage, code)
}
