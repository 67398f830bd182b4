package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// jobModel starts a background job, then polls job_output (one call a
// turn) until the job has printed "ready", then says so and waits. It
// answers from the conversation, so it does not care how many polls the
// job needs.
func jobModel(marker string) sm.Responder {
	command := "for i in 1 2 3; do echo tick $i; sleep 0.2; done; echo ready; sleep 300; true # " + marker
	return func(req sm.Request) (sm.Reply, bool) {
		polls, started := 0, false
		var last string // the latest job_output
		for _, m := range req.Messages {
			switch {
			case m.Role == "tool" && m.ToolCallID == "c_start":
				started = true
			case m.Role == "tool":
				last = m.Content
				polls++
			}
		}
		switch {
		case !started:
			args, _ := json.Marshal(map[string]any{"command": command, "background": true})
			return sm.Tools(sm.Call{ID: "c_start", Name: "shell", Arguments: string(args)}), true
		case strings.Contains(last, "ready") || polls >= 40:
			return sm.Text("the job is ready"), true
		default:
			if polls > 0 {
				time.Sleep(200 * time.Millisecond) // a model takes its time too
			}
			return sm.Tools(sm.Call{ID: fmt.Sprintf("c_poll%d", polls), Name: "job_output", Arguments: `{"id": "job-1"}`}), true
		}
	}
}

// A background job outlives the turn that started it, its output is read
// in later turns, and cancelling the session kills it; its log is
// deleted once the session has ended.
func TestBackgroundJobAcrossTurnsKilledOnCancel(t *testing.T) {
	t.Parallel()
	marker := "longrun-job-" + randHex(6)
	e := newEnvResponder(t, jobModel(marker))
	id := e.start(workflows.SessionInput{Prompt: "start the server", Profile: "auto", IdleTimeout: workflows.Duration(10 * time.Minute)})
	defer func() {
		if t.Failed() {
			for _, m := range query[[]conversation.Message](t, id, workflows.QueryConversation) {
				t.Logf("%s %q %+v", m.Role, m.Content, m.Result)
			}
		}
	}()
	waitFor(t, "the model to see the job ready", 60*time.Second, func() bool {
		st := query[workflows.Status](t, id, workflows.QueryStatus)
		return st.Phase == workflows.PhaseWaitingInput
	})
	msgs := query[[]conversation.Message](t, id, workflows.QueryConversation)
	start := resultFor(msgs, "c_start")
	require.NotNil(t, start)
	require.Contains(t, start.Content, "job-1")
	var polls []string
	for _, m := range msgs {
		if m.Result != nil && m.Result.Name == "job_output" {
			polls = append(polls, m.Result.Content)
		}
	}
	require.NotEmpty(t, polls)
	require.Contains(t, strings.Join(polls, ""), "tick 1")
	require.Contains(t, polls[len(polls)-1], "ready")
	require.NotEmpty(t, processesWith(marker), "the job still runs while the session waits")

	var logs []string
	_ = filepath.WalkDir(filepath.Join(e.stateDir, "sessions"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, "job-1.log") {
			logs = append(logs, p)
		}
		return nil
	})
	require.Len(t, logs, 1, "the job's log is in the worker's state directory")
	require.NoDirExists(t, filepath.Join(e.workspace, ".longrun", "jobs"), "and nothing of it in the workspace")
	require.Contains(t, readFile(t, logs[0]), "tick 3\nready\n")

	out, err := e.starter("cancel", id)
	require.NoError(t, err, out)
	waitFor(t, "the job's processes to be gone", 20*time.Second, func() bool { return len(processesWith(marker)) == 0 })
	e.checkSession(id)
	recordHistory(t, id, "background_job_killed_on_cancel")
	// The session has ended: the worker's reaper deletes its files.
	waitFor(t, "the ended session's job log to be deleted", 15*time.Second, func() bool { return !dirExists(filepath.Dir(filepath.Dir(logs[0]))) })
}

// When the worker holding a job is gone, a call about the job says so
// instead of hanging or running on another worker.
func TestBackgroundJobWorkerGone(t *testing.T) {
	t.Parallel()
	marker := "longrun-job-" + randHex(6)
	e := newEnvResponder(t, jobModel(marker))
	id := e.start(workflows.SessionInput{Prompt: "start", Profile: "auto", IdleTimeout: workflows.Duration(10 * time.Minute)})
	waitFor(t, "the session to wait", 60*time.Second, func() bool {
		return query[workflows.Status](t, id, workflows.QueryStatus).Phase == workflows.PhaseWaitingInput
	})
	e.stopWorker()
	// The worker waits for each job's leader (bwrap, or bash unsandboxed);
	// what runs inside the sandbox's pid namespace goes with it a moment
	// later.
	waitFor(t, "a worker that stops to take its jobs with it", 5*time.Second, func() bool { return len(processesWith(marker)) == 0 })
	e.startWorker()
	e.model.Enqueue(sm.Tools(sm.Call{ID: "c_after", Name: "job_output", Arguments: `{"id": "job-1"}`}), sm.Text("it is gone"))
	out, err := e.starter("send", id, "how is the job?")
	require.NoError(t, err, out)
	waitFor(t, "the call about the lost job to finish", 90*time.Second, func() bool {
		return resultFor(query[[]conversation.Message](t, id, workflows.QueryConversation), "c_after") != nil
	})
	r := resultFor(e.checkSession(id), "c_after")
	require.Equal(t, conversation.ReasonWorkerLost, r.Reason, r.Content)
	require.Contains(t, r.Content, "the worker that ran background job job-1")
	require.Contains(t, r.Content, "is gone")
	out, err = e.starter("cancel", id)
	require.NoError(t, err, out)
}
