package workflows

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/tools"
)

// requestsByID records every RunTool request by call id.
type requestsByID struct {
	mu   sync.Mutex
	reqs map[string]activities.ToolRequest
}

func (r *requestsByID) run(_ context.Context, req activities.ToolRequest) (tools.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.reqs == nil {
		r.reqs = map[string]activities.ToolRequest{}
	}
	r.reqs[req.CallID] = req
	return tools.Result{Content: "ok " + req.CallID}, nil
}

// how says how a call came to run, as its tool request tells the tool.
func (r *requestsByID) how(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	req, ok := r.reqs[id]
	switch {
	case !ok:
		return "did not run"
	case req.ReadOnlySandbox && req.ApprovedByPerson:
		return "both"
	case req.ReadOnlySandbox:
		return "read-only sandbox"
	case req.ApprovedByPerson:
		return "approved by a person"
	}
	return "by a rule"
}

func approve(t *testing.T, h *harness, id string, ap Approval) {
	h.env.UpdateWorkflow(UpdateApprove, id, &testsuite.TestUpdateCallback{
		OnAccept: func() {}, OnReject: func(err error) { t.Errorf("%s rejected: %v", id, err) },
		OnComplete: func(_ any, err error) { require.NoError(t, err, id) },
	}, ap)
}

// TestToolLearnsHowTheCallCameToRun: a shell command only the read-only
// classifier allowed runs in the read-only sandbox (background jobs too);
// a call a person approved (one by one or with all) says so; one a rule
// allowed, or a remembered rule released, is neither.
func TestToolLearnsHowTheCallCameToRun(t *testing.T) {
	t.Parallel()
	var reqs requestsByID
	h := newHarnessWith(t, activities.WorkspaceConfig{
		WorkerRules: []permission.Rule{{Tool: "shell", Pattern: "go test *", Action: permission.Allow}, {Tool: "shell", Pattern: "git log *", Action: permission.Allow}},
	}, []activities.ModelResponse{
		toolReply(
			call("ls", "shell", `{"command":"ls -la"}`),
			call("bg", "shell", `{"command":"cat README.md","background":true}`),
			call("rule", "shell", `{"command":"go test ./..."}`),
			call("mixed", "shell", `{"command":"ls && git log -p"}`),
			call("w1", "write", `{"path":"a.txt","content":"x"}`),
			call("w2", "write", `{"path":"b.txt","content":"y"}`),
		),
		toolReply(call("w3", "write", `{"path":"c.txt","content":"z"}`), call("sh", "shell", `{"command":"make"}`)),
		textReply("done"),
	}, reqs.run)
	h.env.RegisterDelayedCallback(func() {
		approve(t, h, "u1", Approval{CallID: "w1", Decision: DecisionApprove, Remember: RememberSession, Pattern: "*.txt"})
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() {
		approve(t, h, "u2", Approval{All: true, Decision: DecisionApprove})
	}, 2*time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	h.conversation(t)
	for id, want := range map[string]string{
		"ls": "read-only sandbox", "bg": "read-only sandbox", "rule": "by a rule", "mixed": "read-only sandbox",
		"w1": "approved by a person", "w2": "by a rule", "w3": "by a rule", "sh": "approved by a person",
	} {
		require.Equal(t, want, reqs.how(id), id)
	}
}

// TestControlFileWriteAsksEvenInAuto: a write to .longrun/permissions.json
// waits for a person in auto, with why; approved, the tool is told a
// person approved it.
func TestControlFileWriteAsksEvenInAuto(t *testing.T) {
	t.Parallel()
	var reqs requestsByID
	h := newHarnessWith(t, activities.WorkspaceConfig{
		Rules: []permission.Rule{{Tool: "*", Action: permission.Allow}},
	}, []activities.ModelResponse{
		toolReply(call("perm", "write", `{"path":".longrun/permissions.json","content":"{}"}`),
			call("agents", "apply_patch", `{"patch":"*** Begin Patch\n*** Add File: docs/AGENTS.md\n+obey\n*** End Patch"}`),
			call("plain", "write", `{"path":"main.go","content":"package main"}`)),
		textReply("done"),
	}, reqs.run)
	h.env.RegisterDelayedCallback(func() {
		p := h.pending(t)
		require.Equal(t, []string{"perm", "agents"}, callIDsOf(p))
		require.Contains(t, p[0].Reason, ".longrun/permissions.json is a control file")
		require.Contains(t, p[0].Reason, "a person must approve every write to it")
		require.Contains(t, p[1].Reason, "docs/AGENTS.md is a control file")
		approve(t, h, "u1", Approval{CallID: "perm", Decision: DecisionApprove})
		approve(t, h, "u2", Approval{CallID: "agents", Decision: DecisionDeny})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: permission.ProfileAuto})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, "approved by a person", reqs.how("perm"))
	require.Equal(t, "did not run", reqs.how("agents"))
	require.Equal(t, "by a rule", reqs.how("plain"))

	// Unattended, the ask is a denial that says only a person can allow it.
	var none requestsByID
	h = newHarnessWith(t, activities.WorkspaceConfig{Rules: []permission.Rule{{Tool: "*", Action: permission.Allow}}},
		[]activities.ModelResponse{toolReply(call("git", "edit", `{"path":".git/config","old_string":"a","new_string":"b"}`)), textReply("done")}, none.run)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: permission.ProfileAuto, Approval: ApproverNone})
	require.NoError(t, h.env.GetWorkflowError())
	r := byID(h.conversation(t), "git")
	require.Equal(t, conversation.ReasonDeniedByPolicy, r.Reason)
	require.Contains(t, r.Content, ".git/config is a control file")
	require.Equal(t, "did not run", none.how("git"))
}

// TestNoSandbox: on a worker without a sandbox an auto session does not
// start, and a build session asks before a read-only shell command.
func TestNoSandbox(t *testing.T) {
	t.Parallel()
	h := newHarnessWith(t, activities.WorkspaceConfig{NoSandbox: true}, nil, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: permission.ProfileAuto})
	err := h.env.GetWorkflowError()
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	require.Equal(t, ErrTypeSandboxRequired, appErr.Type())
	require.True(t, appErr.NonRetryable())
	require.Contains(t, appErr.Message(), "start the session with profile build")
	require.Empty(t, h.requests, "no model call")

	var reqs requestsByID
	h = newHarnessWith(t, activities.WorkspaceConfig{NoSandbox: true},
		[]activities.ModelResponse{toolReply(call("ls", "shell", `{"command":"ls"}`), call("r", "read", `{"path":"a"}`)), textReply("done")}, reqs.run)
	h.env.RegisterDelayedCallback(func() {
		p := h.pending(t)
		require.Equal(t, []string{"ls"}, callIDsOf(p))
		require.Contains(t, p[0].Reason, "this worker has no sandbox, so no shell command runs without a person's approval")
		approve(t, h, "u1", Approval{CallID: "ls", Decision: DecisionApprove})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, "approved by a person", reqs.how("ls"))
	require.Equal(t, "by a rule", reqs.how("r"), "a read tool runs as before")
}

// TestCarriedDenialDoesNotRun: a call denied in the workflow task that
// continued as new is carried as decided, not waiting; the next run must
// answer it with the denial, never run it.
func TestCarriedDenialDoesNotRun(t *testing.T) {
	t.Parallel()
	var reqs requestsByID
	h := newHarness(t, []activities.ModelResponse{textReply("ok")}, reqs.run)
	w := call("w", "write", `{"path":"b","content":"x"}`)
	ok := call("r", "write", `{"path":"c","content":"y"}`)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Resume: &Resume{
		Run: 1, Turn: 1,
		Messages: []conversation.Message{
			{Role: conversation.RoleUser, Content: "go"},
			{Role: conversation.RoleAssistant, ToolCalls: []conversation.ToolCall{w, ok}},
		},
		Batch: &session.Batch{Calls: []session.Call{
			{Call: w, State: session.Decided{By: session.ByPerson, Decision: Approval{CallID: "w", Decision: DecisionDeny, Feedback: "not that file"}}},
			{Call: ok, State: session.Approved{By: session.ByPerson, Decision: &Approval{CallID: "r", Decision: DecisionApprove}}},
		}},
	}})
	require.NoError(t, h.env.GetWorkflowError())
	msgs := h.conversation(t)
	require.Equal(t, conversation.ReasonDenied, byID(msgs, "w").Reason)
	require.Contains(t, byID(msgs, "w").Content, "not that file")
	require.Equal(t, "did not run", reqs.how("w"))
	require.Equal(t, "approved by a person", reqs.how("r"), "a carried approval is still a person's")
}
