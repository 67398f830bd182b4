package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// setCurrentBuild makes build the current version of the deployment, as
// `temporal worker deployment set-current-version` does, once its
// workers have polled (a version exists from its first poll on).
func setCurrentBuild(t *testing.T, deployment, build string) {
	t.Helper()
	h := tc.WorkerDeploymentClient().GetHandle(deployment)
	var last error
	waitFor(t, fmt.Sprintf("build %s to become current", build), 60*time.Second, func() bool {
		if _, last = h.SetCurrentVersion(context.Background(), client.WorkerDeploymentSetCurrentVersionOptions{BuildID: build}); last != nil {
			time.Sleep(400 * time.Millisecond)
			return false
		}
		d, err := h.Describe(context.Background(), client.WorkerDeploymentDescribeOptions{})
		cur := d.Info.RoutingConfig.CurrentVersion
		return err == nil && cur != nil && cur.BuildID == build
	})
	if last != nil {
		t.Logf("last set-current-version error: %v", last)
	}
}

// recordRun is recordHistory for one run of a session (a session that
// continued as new has one history per run).
func recordRun(t *testing.T, id string, h *historypb.History, name string) {
	t.Helper()
	dir := os.Getenv("LONGRUN_RECORD_HISTORIES")
	if dir == "" {
		return
	}
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".json"), raw, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, name+".id"), []byte(id+"\n"), 0o644))
}

// buildsOf lists, in order, the build of every completed workflow task
// of a run, and which of the tasks' started events said the current
// build had changed.
func buildsOf(h *historypb.History) (builds []string, told bool) {
	for _, ev := range h.GetEvents() {
		if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
			builds = append(builds, a.GetDeploymentVersion().GetDeploymentName()+":"+a.GetDeploymentVersion().GetBuildId()+
				"/"+a.GetVersioningBehavior().String())
		}
		if a := ev.GetWorkflowTaskStartedEventAttributes(); a != nil && a.GetTargetWorkerDeploymentVersionChanged() {
			told = true
		}
	}
	return builds, told
}

// activityWorkers are the identities of the workers that started each
// activity of a run, by activity type.
func activityWorkers(h *historypb.History) map[string][]string {
	scheduled := map[int64]string{}
	out := map[string][]string{}
	for _, ev := range h.GetEvents() {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
			scheduled[ev.GetEventId()] = a.GetActivityType().GetName()
		}
		if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
			typ := scheduled[a.GetScheduledEventId()]
			out[typ] = append(out[typ], a.GetIdentity())
		}
	}
	return out
}

// Must show 2 of issue 34: two builds of the worker, A and B, versions of
// one Worker Deployment. A session started on A waits for an approval;
// B becomes current; the approval comes, and the session finishes its
// turn on A (every workflow task of that run, those after B became
// current too, is A's: the run is pinned), continues as new on B at the
// turn boundary (the server told it the current build changed) and
// completes there. A second session that is still in its turn on A when
// the first completes stays pinned to A and is listed as A's, which is
// how an operator knows A cannot be retired yet.
func TestTwoBuildsPinnedThenUpgradedAtContinueAsNew(t *testing.T) {
	t.Parallel()
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "from-a.txt", "content": "written on build A"}`}),
		// The second session's turn, asked while the first one waits.
		sm.Tools(sm.Call{ID: "c_w2", Name: "write", Arguments: `{"path": "other.txt", "content": "never approved"}`}),
		sm.Text("finished on build B"),
	)
	deployment := "e2e-longrun-" + randHex(4)
	e.stopWorker()
	// Both builds keep the conversation in one transcript store, as
	// workers on two machines share a bucket: the next run reads it on B.
	base := append(append([]string{}, e.workerArgs...), "--transcript", t.TempDir())
	e.workerArgs = append(append([]string{}, base...), "--deployment", deployment, "--build-id", "build-a")
	e.startWorker()
	a := e.worker
	setCurrentBuild(t, deployment, "build-a")
	require.Contains(t, e.logs.String(), "temporal worker deployment set-current-version --deployment-name "+deployment+" --build-id build-a",
		"the worker says how to make its build current")

	id := e.start(workflows.SessionInput{Prompt: "write the file"})
	waitPending(t, id, 1)
	// A second session, on A, that stays in its turn (its call waits).
	other := e.start(workflows.SessionInput{Prompt: "write it too"})
	waitPending(t, other, 1)
	t.Cleanup(func() { _ = tc.TerminateWorkflow(context.Background(), other, "", "test over") })

	// Build B: the same program, another build id and state directory,
	// as a new release deployed beside the old one.
	b := *e
	b.stateDir = t.TempDir()
	b.workerArgs = append(append([]string{}, base...), "--deployment", deployment, "--build-id", "build-b")
	b.startWorker()
	setCurrentBuild(t, deployment, "build-b")
	d, err := describeRun(context.Background(), tc, id, "")
	require.NoError(t, err)
	vi := d.GetWorkflowExecutionInfo().GetVersioningInfo()
	require.Equal(t, enumspb.VERSIONING_BEHAVIOR_PINNED, vi.GetBehavior())
	require.Equal(t, "build-a", vi.GetDeploymentVersion().GetBuildId(), "the waiting session stays on the build that began its turn")

	out, err := e.starter("approve", id, "c1")
	require.NoError(t, err, out)
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	require.Equal(t, "finished on build B", r.FinalText)
	msgs := e.checkSession(id)
	require.Equal(t, conversation.ReasonRan, resultFor(msgs, "c_w").Reason)
	require.Equal(t, "written on build A", readFile(t, filepath.Join(e.workspace, "from-a.txt")))

	// The two runs: the first on A only, the second on B only.
	last := runHistory(t, id, "")
	firstRun := last.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes().GetContinuedExecutionRunId()
	require.NotEmpty(t, firstRun, "the session continued as new")
	first := runHistory(t, id, firstRun)
	require.Equal(t, enumspb.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW, first.GetEvents()[len(first.GetEvents())-1].GetEventType())
	pinned := enumspb.VERSIONING_BEHAVIOR_PINNED.String()
	aBuilds, told := buildsOf(first)
	require.True(t, told, "the server told the run on A that the current build changed")
	require.GreaterOrEqual(t, len(aBuilds), 3, aBuilds)
	for _, v := range aBuilds {
		require.Equal(t, deployment+":build-a/"+pinned, v, "every workflow task of the first run ran on A: %v", aBuilds)
	}
	bBuilds, _ := buildsOf(last)
	require.NotEmpty(t, bBuilds)
	for _, v := range bBuilds {
		require.Equal(t, deployment+":build-b/"+pinned, v, "every workflow task of the second run ran on B: %v", bBuilds)
	}
	aID, bID := strconv.Itoa(a.Process.Pid)+"@", strconv.Itoa(b.worker.Process.Pid)+"@"
	for _, who := range activityWorkers(first)["RunTool"] {
		require.True(t, strings.HasPrefix(who, aID), "the approved call ran on A: %s", who)
	}
	models := activityWorkers(last)["CallModel"]
	require.NotEmpty(t, models)
	for _, who := range models {
		require.True(t, strings.HasPrefix(who, bID), "the next run's model call ran on B: %s", who)
	}

	// The other session still waits in its turn on A, and the deployment
	// version's search attribute finds it: A is not to be retired yet.
	d, err = describeRun(context.Background(), tc, other, "")
	require.NoError(t, err)
	require.Equal(t, "build-a", d.GetWorkflowExecutionInfo().GetVersioningInfo().GetDeploymentVersion().GetBuildId())
	require.Len(t, waitPending(t, other, 1), 1, "its query is answered (by A)")
	waitFor(t, "the session pinned to A to be listed", 30*time.Second, func() bool {
		resp, err := tc.ListWorkflow(context.Background(), &workflowservice.ListWorkflowExecutionsRequest{
			Query: fmt.Sprintf(`TemporalWorkerDeploymentVersion = '%s:build-a' AND ExecutionStatus = 'Running'`, deployment),
		})
		if err != nil || len(resp.GetExecutions()) != 1 {
			return false
		}
		return resp.GetExecutions()[0].GetExecution().GetWorkflowId() == other
	})
	recordRun(t, id, first, "versioned_pinned_run_on_build_a")
	recordRun(t, id, last, "versioned_run_upgraded_to_build_b")
}
