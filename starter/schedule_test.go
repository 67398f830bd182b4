package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/workflows"
)

func TestScheduleCreateCron(t *testing.T) {
	t.Parallel()
	f := &fakeClient{}
	code, stdout, stderr := runFake(t, f, "schedule", "create", "nightly", "--cron", "0 3 * * *", "--jitter", "10m",
		"--overlap", "buffer-one", "--paused", "--note", "after review",
		"--prompt", "run the tests\nand fix them", "--model", "m1", "--profile", "plan", "--approval", "none",
		"--allow", "shell:go test *", "--max-turns", "7", "--idle-timeout", "5m")
	require.Equal(t, exitOK, code, stderr)
	require.Contains(t, stdout, "created schedule nightly (paused): cron 0 3 * * *")
	require.Len(t, f.schedules.created, 1)
	o := f.schedules.created[0]
	require.Equal(t, "nightly", o.ID)
	require.Equal(t, []string{"0 3 * * *"}, o.Spec.CronExpressions)
	require.Empty(t, o.Spec.Intervals)
	require.Equal(t, 10*time.Minute, o.Spec.Jitter)
	require.Equal(t, enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE, o.Overlap)
	require.True(t, o.Paused)
	require.Equal(t, "after review", o.Note)
	require.Equal(t, map[string]any{specMemo: "cron 0 3 * * *"}, o.Memo)

	act, ok := o.Action.(*client.ScheduleWorkflowAction)
	require.True(t, ok)
	require.Equal(t, workflows.WorkflowType, act.Workflow, "started by name, like start")
	require.Equal(t, "scheduled-nightly", act.ID)
	require.Equal(t, workflows.DefaultTaskQueue, act.TaskQueue)
	require.Equal(t, "run the tests", act.StaticSummary)
	require.Contains(t, act.StaticDetails, "**model:** m1")
	require.Contains(t, act.StaticDetails, "**schedule:** nightly (cron 0 3 * * *)")
	require.Equal(t, []any{workflows.SessionInput{
		Prompt: "run the tests\nand fix them", Model: "m1", Profile: "plan", Approval: workflows.ApproverNone,
		MaxTurns: 7, IdleTimeout: workflows.Duration(5 * time.Minute),
		Rules: []permission.Rule{{Tool: "shell", Pattern: "go test *", Action: permission.Allow}},
	}}, act.Args)
}

func TestScheduleCreateEveryJSON(t *testing.T) {
	t.Parallel()
	f := &fakeClient{}
	code, stdout, stderr := runFake(t, f, "--task-queue", "q2", "schedule", "--json", "create", "deps", "--every", "6h", "--prompt", "check deps")
	require.Equal(t, exitOK, code, stderr)
	require.JSONEq(t, `{"schedule":"deps","spec":"every 6h","paused":false,"session_id_prefix":"scheduled-deps-"}`, stdout)
	o := f.schedules.created[0]
	require.Equal(t, []client.ScheduleIntervalSpec{{Every: 6 * time.Hour}}, o.Spec.Intervals)
	require.Empty(t, o.Spec.CronExpressions)
	require.Equal(t, enumspb.SCHEDULE_OVERLAP_POLICY_UNSPECIFIED, o.Overlap, "the server's default, skip")
	require.Equal(t, "q2", o.Action.(*client.ScheduleWorkflowAction).TaskQueue)
}

func TestScheduleCreateUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no name", []string{"--every", "1h", "--prompt", "p"}, "a schedule name is required"},
		{"neither", []string{"n", "--prompt", "p"}, "say when: --cron EXPR"},
		{"both", []string{"n", "--cron", "@daily", "--every", "1h", "--prompt", "p"}, "give --cron or --every, not both"},
		{"no prompt", []string{"n", "--every", "1h"}, "--prompt is required"},
		{"bad overlap", []string{"n", "--every", "1h", "--prompt", "p", "--overlap", "never"}, `--overlap must be skip, buffer-one, allow-all or cancel-other, not "never"`},
		{"negative jitter", []string{"n", "--every", "1h", "--prompt", "p", "--jitter", "-1m"}, "--jitter must not be negative"},
		{"tiny interval", []string{"n", "--every", "10ms", "--prompt", "p"}, "--every must be at least 1s"},
		{"session flag checked", []string{"n", "--every", "1h", "--prompt", "p", "--approval", "robot"}, `--approval must be "person", "guardian" or "none"`},
		{"space in name", []string{"a b", "--every", "1h", "--prompt", "p"}, `schedule name "a b" must not contain spaces`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := &fakeClient{}
			code, _, stderr := runFake(t, f, append([]string{"schedule", "create"}, tc.args...)...)
			require.Equal(t, exitUsage, code, stderr)
			require.Contains(t, stderr, "longrun schedule create: "+tc.want)
			require.Contains(t, stderr, "Usage: longrun schedule create NAME", "the subcommand's synopsis")
			require.Empty(t, f.schedules.created)
		})
	}
}

func TestScheduleCreateServerRefusals(t *testing.T) {
	t.Parallel()
	f := &fakeClient{schedules: fakeSchedules{createErr: temporal.ErrScheduleAlreadyRunning}}
	code, _, stderr := runFake(t, f, "schedule", "create", "nightly", "--every", "1h", "--prompt", "p")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, `schedule "nightly" already exists in namespace default; delete it first or pick another name`)

	f = &fakeClient{schedules: fakeSchedules{createErr: serviceerror.NewInvalidArgument("invalid cron string: 61 * * * *")}}
	code, _, stderr = runFake(t, f, "schedule", "create", "nightly", "--cron", "61 * * * *", "--prompt", "p")
	require.Equal(t, exitFailure, code)
	require.Contains(t, stderr, `the server refused --cron "61 * * * *": invalid cron string: 61 * * * *`)
	require.Contains(t, stderr, "MINUTE HOUR DAY-OF-MONTH MONTH DAY-OF-WEEK")
}

func TestScheduleUnknown(t *testing.T) {
	t.Parallel()
	for _, sub := range []string{"show", "delete", "pause", "unpause", "trigger"} {
		t.Run(sub, func(t *testing.T) {
			t.Parallel()
			f := &fakeClient{schedules: fakeSchedules{handleErr: serviceerror.NewNotFound("schedule not found")}}
			code, _, stderr := runFake(t, f, "schedule", sub, "ghost")
			require.Equal(t, exitFailure, code)
			require.Contains(t, stderr, `schedule "ghost" not found in namespace default`)
		})
	}
}

func TestScheduleHandleCommands(t *testing.T) {
	t.Parallel()
	f := &fakeClient{}
	for _, args := range [][]string{
		{"pause", "nightly", "--note", "freeze"},
		{"unpause", "nightly"},
		{"trigger", "nightly", "--overlap", "allow-all"},
		{"trigger", "nightly"},
		{"delete", "nightly"},
	} {
		code, _, stderr := runFake(t, f, append([]string{"schedule"}, args...)...)
		require.Equal(t, exitOK, code, stderr)
	}
	require.Equal(t, []string{
		"pause nightly: freeze",
		"unpause nightly: ",
		"trigger nightly: " + enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL.String(),
		"trigger nightly: " + enumspb.SCHEDULE_OVERLAP_POLICY_UNSPECIFIED.String(),
		"delete nightly",
	}, f.schedules.ops)

	code, _, stderr := runFake(t, f, "schedule", "delete")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "a schedule name is required")
	code, _, stderr = runFake(t, f, "schedule", "frobnicate")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, `unknown schedule command "frobnicate" (have: create, list, show, delete, pause, unpause, trigger)`)
	code, _, stderr = runFake(t, f, "schedule")
	require.Equal(t, exitUsage, code)
	require.Contains(t, stderr, "name a schedule command")
}

func schedPayload(t *testing.T, v any) *commonpb.Payload {
	t.Helper()
	p, err := converter.GetDefaultDataConverter().ToPayload(v)
	require.NoError(t, err)
	return p
}

func TestScheduleList(t *testing.T) {
	t.Parallel()
	next := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	ran := time.Date(2030, 1, 1, 3, 0, 5, 0, time.UTC)
	f := &fakeClient{
		describe: func(int) (enumspb.WorkflowExecutionStatus, error) {
			return enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil
		},
		schedules: fakeSchedules{entries: []*client.ScheduleListEntry{
			{
				ID: "nightly", WorkflowType: workflow.Type{Name: workflows.WorkflowType},
				Spec:            &client.ScheduleSpec{Jitter: 10 * time.Minute},
				Memo:            &commonpb.Memo{Fields: map[string]*commonpb.Payload{specMemo: schedPayload(t, "cron 0 3 * * *")}},
				NextActionTimes: []time.Time{next},
				RecentActions: []client.ScheduleActionResult{{ActualTime: ran,
					StartWorkflowResult: &client.ScheduleWorkflowExecution{WorkflowID: "scheduled-nightly-2030-01-01T03:00:00Z"}}},
			},
			{ID: "other-team", WorkflowType: workflow.Type{Name: "BillingWorkflow"}},
			{
				ID: "hourly", WorkflowType: workflow.Type{Name: workflows.WorkflowType}, Paused: true,
				Spec: &client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: time.Hour}}},
			},
		}},
	}
	code, stdout, stderr := runFake(t, f, "schedule", "list")
	require.Equal(t, exitOK, code, stderr)
	require.Regexp(t, `(?m)^SCHEDULE\s+SPEC\s+NEXT RUN\s+LAST RUN\s+LAST STATUS\s+PAUSED$`, stdout)
	require.Regexp(t, `(?m)^nightly\s+cron 0 3 \* \* \* \(jitter 10m\)\s+\d{4}-.*completed\s+no$`, stdout)
	require.Regexp(t, `(?m)^hourly\s+every 1h\s+-\s+-\s+-\s+yes$`, stdout)
	require.NotContains(t, stdout, "other-team", "only schedules that start sessions")

	code, stdout, _ = runFake(t, f, "schedule", "list", "--json")
	require.Equal(t, exitOK, code)
	var rows []scheduleRow
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	require.Len(t, rows, 2)
	require.Equal(t, "scheduled-nightly-2030-01-01T03:00:00Z", rows[0].LastSession)
	require.Equal(t, "completed", rows[0].LastStatus)
	require.True(t, next.Equal(*rows[0].NextRun))

	code, stdout, _ = runFake(t, f, "schedule", "list", "--quiet")
	require.Equal(t, exitOK, code)
	require.Equal(t, "nightly\nhourly\n", stdout)
}

func TestScheduleShow(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2030, 1, 1, 3, 0, 0, 0, time.UTC)
	f := &fakeClient{
		describe: func(n int) (enumspb.WorkflowExecutionStatus, error) {
			return []enumspb.WorkflowExecutionStatus{enumspb.WORKFLOW_EXECUTION_STATUS_FAILED, enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING}[n], nil
		},
		schedules: fakeSchedules{desc: &client.ScheduleDescription{
			Schedule: client.Schedule{
				Action: &client.ScheduleWorkflowAction{ID: "scheduled-nightly", TaskQueue: "longrun",
					Args: []any{schedPayload(t, workflows.SessionInput{Prompt: "run the tests", Model: "m1"})}},
				Spec:   &client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: 24 * time.Hour}}},
				Policy: &client.SchedulePolicies{Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER},
				State:  &client.ScheduleState{Note: "made by ops"},
			},
			Info: client.ScheduleInfo{
				NumActions: 2,
				RecentActions: []client.ScheduleActionResult{
					{ActualTime: t0, StartWorkflowResult: &client.ScheduleWorkflowExecution{WorkflowID: "scheduled-nightly-1"}},
					{ActualTime: t0.Add(24 * time.Hour), StartWorkflowResult: &client.ScheduleWorkflowExecution{WorkflowID: "scheduled-nightly-2"}},
				},
				NextActionTimes: []time.Time{t0.Add(48 * time.Hour)},
			},
		}},
	}
	code, stdout, stderr := runFake(t, f, "schedule", "show", "nightly")
	require.Equal(t, exitOK, code, stderr)
	for _, re := range []string{`spec\s+every 24h`, `overlap\s+cancel-other`, `paused\s+no`, `note\s+made by ops`,
		`prompt\s+run the tests`, `model\s+m1`, `sessions\s+scheduled-nightly-<time>`, `actions\s+2`, `next run\s+\d{4}-`} {
		require.Regexp(t, re, stdout)
	}
	// Newest first, each with how its session stands.
	require.Regexp(t, `(?s)scheduled-nightly-2\s+running.*scheduled-nightly-1\s+failed`, stdout)
	require.Equal(t, []string{"describe nightly"}, f.schedules.ops)
}

// start and schedule create bind the same session flags, so a flag added
// to one cannot be missing from the other.
func TestScheduleCreateHasStartsSessionFlags(t *testing.T) {
	t.Parallel()
	a := &app{getenv: noEnv}
	var start, create []string
	for _, c := range commands() {
		if c.name == "start" {
			start, _ = a.commandFlags(c)
		}
	}
	for _, c := range scheduleCommands() {
		if c.name == "schedule create" {
			create, _ = a.commandFlags(c)
		}
	}
	for _, f := range start {
		switch f {
		case "--id", "--wait", "--interactive", "--no-interactive", "--no-color": // one session, followed now
			require.NotContains(t, create, f)
		default:
			require.Contains(t, create, f)
		}
	}
}

func TestScheduleHelpAndCompletion(t *testing.T) {
	t.Parallel()
	code, stdout, _ := runFake(t, &fakeClient{}, "schedule", "create", "--help")
	require.Equal(t, exitOK, code)
	require.Contains(t, stdout, "Usage: longrun schedule create NAME --prompt TEXT")
	require.Contains(t, stdout, "Examples:\n  longrun schedule create nightly")
	require.Contains(t, stdout, "-jitter")
	code, stdout, _ = runFake(t, &fakeClient{}, "schedule", "--help")
	require.Equal(t, exitOK, code)
	require.Contains(t, stdout, "schedule create|list|show|delete|pause|unpause|trigger")
	for _, c := range scheduleCommands() {
		code, stdout, _ := runFake(t, &fakeClient{}, append(strings.Fields(c.name), "--help")...)
		require.Equal(t, exitOK, code, c.name)
		require.Contains(t, stdout, "Examples:\n  longrun "+c.name, c.name)
	}

	code, script, stderr := runFake(t, &fakeClient{}, "completion", "bash")
	require.Equal(t, exitOK, code, stderr)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash to check the script with")
	}
	out, err := exec.Command(bash, "-c", script+`
COMP_WORDS=(longrun sch); COMP_CWORD=1; _longrun_complete; echo "${COMPREPLY[*]}"
COMP_WORDS=(longrun schedule un); COMP_CWORD=2; _longrun_complete; echo "${COMPREPLY[*]}"
COMP_WORDS=(longrun schedule create nightly --prompt "x y" --jit); COMP_CWORD=6; _longrun_complete; echo "${COMPREPLY[*]}"
COMP_WORDS=(longrun schedule pause --no); COMP_CWORD=3; _longrun_complete; echo "${COMPREPLY[*]}"
`).CombinedOutput()
	require.NoError(t, err, string(out))
	require.Equal(t, "schedule\nunpause\n--jitter\n--note\n", string(out))
}
