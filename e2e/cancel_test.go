package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// Cancelling while shell runs `sleep 60` kills the process, pairs the call
// with a synthetic result, closes the execution as Canceled, and leaves a
// history that replays.
func TestCancelWhileShellRuns(t *testing.T) {
	t.Parallel()
	marker := "longrun-cancel-" + randHex(6)
	e := newEnv(t,
		sm.Tools(
			sm.Call{ID: "c_sleep", Name: "shell", Arguments: `{"command": "sleep 60; echo ` + marker + `"}`},
			sm.Call{ID: "c_later", Name: "write", Arguments: `{"path": "never.txt", "content": "x"}`},
		),
	)
	id := e.start(workflows.SessionInput{Prompt: "sleep"})
	waitPending(t, id, 2)
	out, err := e.starter("approve", id, "c_sleep")
	require.NoError(t, err, out)

	var pids []int
	waitFor(t, "the shell process to start", 20*time.Second, func() bool {
		pids = processesWith(marker)
		return len(pids) > 0
	})
	pids = append(pids, childrenOf(pids)...)

	out, err = e.starter("cancel", id)
	require.NoError(t, err, out)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = tc.GetWorkflow(ctx, id, "").Get(ctx, nil)
	var canceled *temporal.CanceledError
	require.True(t, errors.As(err, &canceled), "want Canceled, got %v", err)
	waitFor(t, "the shell's processes to be gone", 5*time.Second, func() bool { return !anyAlive(pids) })

	msgs := e.checkSession(id)
	r := resultFor(msgs, "c_sleep")
	require.Equal(t, conversation.ReasonCancelledWhileRunning, r.Reason)
	require.Equal(t, conversation.ReasonCancelledBeforeRun, resultFor(msgs, "c_later").Reason)
	require.NoFileExists(t, filepath.Join(e.workspace, "never.txt"))

	h := history(t, id)
	rep := worker.NewWorkflowReplayer()
	rep.RegisterWorkflowWithOptions((&workflows.Sessions{}).AgentSession, workflow.RegisterOptions{Name: workflows.WorkflowType})
	require.NoError(t, rep.ReplayWorkflowHistory(nil, h))

	recordHistory(t, id, "cancel_while_shell_runs")
	if path := os.Getenv("LONGRUN_RECORD_HISTORY"); path != "" {
		raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(path, raw, 0o644))
	}
}

// A model endpoint that answers 500 is retried by Temporal; the session
// survives and completes.
func TestModelFaultIsRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Reply{Status: 500}, sm.Reply{RawBody: "this is not json"}, sm.Text("recovered"))
	id := e.start(workflows.SessionInput{Prompt: "hi"})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status)
	require.Equal(t, "recovered", r.FinalText)
	require.Len(t, e.model.Requests(), 3)
	e.checkSession(id)
}

// A model that rejects the request (4xx) is not retried; an interactive
// session waits for the person instead of being lost, and a new message
// tries again.
func TestModelRejectionKeepsSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, sm.Reply{Status: 400}, sm.Text("second try worked"))
	id := e.start(workflows.SessionInput{Prompt: "hi", IdleTimeout: workflows.Duration(time.Minute)})
	waitFor(t, "the session to wait for input after the failure", 20*time.Second, func() bool {
		st := query[workflows.Status](t, id, workflows.QueryStatus)
		return st.Phase == workflows.PhaseWaitingInput && strings.Contains(st.LastError, "HTTP 400")
	})
	require.Len(t, e.model.Requests(), 1)
	out, err := e.starter("send", id, "please try again")
	require.NoError(t, err, out)
	waitFor(t, "the reply", 20*time.Second, func() bool {
		msgs := query[[]conversation.Message](t, id, workflows.QueryConversation)
		return msgs[len(msgs)-1].Content == "second try worked"
	})
	out, err = e.starter("cancel", id)
	require.NoError(t, err, out)
	e.checkSession(id)
}

// processesWith returns the pids whose command line contains s.
func processesWith(s string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, en := range entries {
		pid, err := strconv.Atoi(en.Name())
		if err != nil {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", en.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), s) {
			out = append(out, pid)
		}
	}
	return out
}

func childrenOf(pids []int) []int {
	var out []int
	for _, p := range pids {
		tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(p), "task", "*", "children"))
		for _, f := range tasks {
			b, _ := os.ReadFile(f)
			for _, c := range strings.Fields(string(b)) {
				if n, err := strconv.Atoi(c); err == nil {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// anyAlive reports whether a pid still runs (zombies count as gone).
func anyAlive(pids []int) bool {
	for _, p := range pids {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "stat"))
		if err != nil {
			continue
		}
		f := strings.Fields(string(b))
		if len(f) > 2 && f[2] != "Z" {
			return true
		}
	}
	return false
}
