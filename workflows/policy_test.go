package workflows

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/testsuite"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/permission"
)

func toolNamesSent(req activities.ModelRequest) []string {
	var names []string
	for _, t := range req.Tools {
		names = append(names, t.Name)
	}
	return names
}

func TestPlanProfileHidesWriteTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("w", "write", `{"path":"b","content":"x"}`)),
		textReply("ok"),
	}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: permission.ProfilePlan})
	require.NoError(t, h.env.GetWorkflowError())
	// The job tools only read (or stop the session's own jobs), so plan shows them;
	// web_fetch only reads too, and asks.
	require.Equal(t, []string{"glob", "grep", "list", "read", "web_fetch", "todo", "tool_search", "task"}, toolNamesSent(h.requests[0]))
	require.Empty(t, h.ran)
	require.Equal(t, conversation.ReasonDeniedByPolicy, byID(h.conversation(t), "w").Reason)
}

func TestRulesAndHardBlock(t *testing.T) {
	t.Parallel()
	wc := activities.WorkspaceConfig{Path: ".longrun/permissions.json", Rules: []permission.Rule{
		{Tool: "shell", Pattern: "go test *", Action: permission.Allow},
		{Tool: "write", Pattern: "secrets/**", Action: permission.Deny},
	}}
	h := newHarnessWith(t, wc, []activities.ModelResponse{
		toolReply(
			call("t", "shell", `{"command":"go test ./..."}`),
			call("rm", "shell", `{"command":"r''m -rf /"}`),
			call("sec", "write", `{"path":"secrets/k","content":"x"}`),
			call("ok", "write", `{"path":"docs/a.md","content":"x"}`),
			call("ls", "shell", `{"command":"ls -la"}`),
		),
		textReply("ok"),
	}, nil)
	h.env.RegisterDelayedCallback(func() {
		p := h.pending(t)
		require.Len(t, p, 1)
		require.Equal(t, "ok", p[0].CallID)
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "ok", Decision: "approve"})
	}, time.Minute)
	// The session's own rule overrides the workspace's.
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Rules: []permission.Rule{{Tool: "shell", Pattern: "ls *", Action: permission.Allow}}})
	require.NoError(t, h.env.GetWorkflowError())
	msgs := h.conversation(t)
	require.Equal(t, conversation.ReasonRan, byID(msgs, "t").Reason)
	require.Equal(t, conversation.ReasonBlocked, byID(msgs, "rm").Reason)
	require.Equal(t, conversation.ReasonDeniedByPolicy, byID(msgs, "sec").Reason)
	require.Contains(t, byID(msgs, "sec").Content, "secrets/**")
	require.Equal(t, conversation.ReasonRan, byID(msgs, "ok").Reason)
	require.Equal(t, conversation.ReasonRan, byID(msgs, "ls").Reason)
	require.ElementsMatch(t, []string{"t", "ok", "ls"}, h.ran)
}

func TestRememberReleasesAndStopsAsking(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("a", "shell", `{"command":"make build"}`), call("b", "shell", `{"command":"make test"}`), call("x", "shell", `{"command":"touch x"}`)),
		toolReply(call("c", "shell", `{"command":"make lint"}`)),
		textReply("ok"),
	}, nil)
	var outcome ApprovalOutcome
	h.env.RegisterDelayedCallback(func() {
		h.env.UpdateWorkflow(UpdateApprove, "u1", &testsuite.TestUpdateCallback{
			OnAccept: func() {}, OnReject: func(err error) { t.Errorf("rejected: %v", err) },
			OnComplete: func(v any, err error) { require.NoError(t, err); outcome = v.(ApprovalOutcome) },
		}, Approval{CallID: "a", Decision: "approve", Remember: RememberSession, Pattern: "make *"})
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() {
		require.Equal(t, []string{"x"}, callIDsOf(h.pending(t)), "the rule does not cover touch")
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "x", Decision: "deny", Feedback: "no"})
	}, 2*time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, []string{"b"}, outcome.Released)
	require.ElementsMatch(t, []string{"a", "b", "c"}, h.ran, "c ran without a second request")
}

func callIDsOf(p []PendingApproval) []string {
	var ids []string
	for _, c := range p {
		ids = append(ids, c.CallID)
	}
	return ids
}

func TestDoomLoopAsksOnThirdIdenticalCall(t *testing.T) {
	t.Parallel()
	read := func(id string) activities.ModelResponse { return toolReply(call(id, "read", `{"path":"a"}`)) }
	h := newHarness(t, []activities.ModelResponse{read("r1"), read("r2"), read("r3"), textReply("ok")}, nil)
	h.env.RegisterDelayedCallback(func() {
		p := h.pending(t)
		require.Len(t, p, 1)
		require.Equal(t, "r3", p[0].CallID)
		require.Contains(t, p[0].Reason, "3")
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "r3", Decision: "deny", Feedback: "you are looping"})
	}, time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.Equal(t, []string{"r1", "r2"}, h.ran)
}

// Each model gets the edit tools it works best with, as OpenCode picks
// them; the session's own model, else the worker's default, decides.
func TestEditToolsPerModel(t *testing.T) {
	t.Parallel()
	for model, want := range map[string][2][]string{
		"gpt-5":       {{"apply_patch"}, {"edit", "write"}},
		"gpt-4.1":     {{"edit", "write"}, {"apply_patch"}},
		"gpt-oss-20b": {{"edit", "write"}, {"apply_patch"}},
		"qwen3-coder": {{"edit", "write"}, {"apply_patch"}},
	} {
		h := newHarness(t, []activities.ModelResponse{textReply("ok")}, nil)
		h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Model: model})
		require.NoError(t, h.env.GetWorkflowError())
		sent := toolNamesSent(h.requests[0])
		for _, n := range want[0] {
			require.Contains(t, sent, n, model)
		}
		for _, n := range want[1] {
			require.NotContains(t, sent, n, model)
		}
		require.Contains(t, sent, "read", model)
	}
}

// The system prompt is the default prompt, then the project's AGENTS.md,
// then the session's own system_prompt, then the user's first message;
// with system_prompt_mode "replace" the session's text takes the default's
// place and AGENTS.md follows it, as before the default prompt existed.
func TestAgentsMDInSystemPrompt(t *testing.T) {
	t.Parallel()
	wc := activities.WorkspaceConfig{
		Instructions: &activities.Instructions{Path: "AGENTS.md", Content: "Run go vet before you finish."},
		Environment:  &activities.Environment{WorkDir: "/ws/app", GitRoot: "/ws", Branch: "main", OS: "linux/amd64", Shell: "bash"},
	}
	h := newHarnessWith(t, wc, []activities.ModelResponse{textReply("ok")}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", SystemPrompt: "You are careful.", Model: "claude-sonnet-4-5", Network: true})
	require.NoError(t, h.env.GetWorkflowError())
	msgs := h.requests[0].Messages
	require.Len(t, msgs, 4)
	for _, m := range msgs[:3] {
		require.Equal(t, conversation.RoleSystem, m.Role)
	}
	require.True(t, strings.HasPrefix(msgs[0].Content, "You are Longrun"), msgs[0].Content)
	require.Contains(t, msgs[0].Content, "Use the todo list often", "the claude family's text")
	require.Contains(t, msgs[0].Content, "Working directory: /ws/app")
	require.Contains(t, msgs[0].Content, "Git: a checkout at /ws, on branch main")
	require.Contains(t, msgs[0].Content, "Date: 2026-", "the date from the workflow's clock")
	require.Contains(t, msgs[0].Content, "Network: available to shell commands")
	require.Contains(t, msgs[0].Content, "Tools that change things (`edit`, `shell` and `write`) ask a person first")
	require.Contains(t, msgs[1].Content, "Project instructions from AGENTS.md")
	require.Contains(t, msgs[1].Content, "Run go vet before you finish.")
	require.Equal(t, "You are careful.", msgs[2].Content)
	require.Equal(t, "go", msgs[3].Content)

	h = newHarnessWith(t, wc, []activities.ModelResponse{textReply("ok")}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", SystemPrompt: "You are careful.", SystemPromptMode: SystemPromptReplace})
	require.NoError(t, h.env.GetWorkflowError())
	msgs = h.requests[0].Messages
	require.Len(t, msgs, 3)
	require.Equal(t, "You are careful.", msgs[0].Content)
	require.Contains(t, msgs[1].Content, "Project instructions from AGENTS.md")
	require.Equal(t, "go", msgs[2].Content)
}

// A mode that is neither append nor replace stops the session with a
// message saying what is accepted.
func TestSystemPromptModeInvalid(t *testing.T) {
	t.Parallel()
	h := newHarness(t, []activities.ModelResponse{textReply("ok")}, nil)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", SystemPromptMode: "prepend"})
	err := h.env.GetWorkflowError()
	require.ErrorContains(t, err, `system_prompt_mode "prepend": want "append"`)
	require.Empty(t, h.requests)
}

// TestRememberWithoutPatternIsExactlyTheCall: "approve and remember"
// without a typed pattern keeps exactly the approved call. A file named
// "**" and a command ending in "TestX*" are remembered as literals, so the
// model's later write elsewhere and its go test -exec still ask (issue 28,
// finding 4), while the same call again runs unasked.
func TestRememberWithoutPatternIsExactlyTheCall(t *testing.T) {
	t.Parallel()
	hostile := `go test ./... -run TestX -exec "sh -c 'touch pwned'"`
	h := newHarness(t, []activities.ModelResponse{
		toolReply(call("star", "write", `{"path":"**","content":"x"}`), call("gt", "shell", `{"command":"go test ./... -run TestX*"}`)),
		toolReply(call("w2", "write", `{"path":"main.go","content":"x"}`), call("ex", "shell", `{"command":`+strconv.Quote(hostile)+`}`),
			call("again", "shell", `{"command":"go test ./... -run TestX*"}`), call("star2", "write", `{"path":"**","content":"y"}`)),
		textReply("ok"),
	}, nil)
	h.env.RegisterDelayedCallback(func() {
		require.ElementsMatch(t, []string{"star", "gt"}, callIDsOf(h.pending(t)))
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "star", Decision: DecisionApprove, Remember: RememberSession})
		h.env.SignalWorkflow(SignalApproval, Approval{CallID: "gt", Decision: DecisionApprove, Remember: RememberSession})
	}, time.Minute)
	h.env.RegisterDelayedCallback(func() {
		require.ElementsMatch(t, []string{"w2", "ex"}, callIDsOf(h.pending(t)), "the remembered literals allow neither")
		h.env.SignalWorkflow(SignalApproval, Approval{All: true, Decision: DecisionDeny, Feedback: "no"})
	}, 2*time.Minute)
	h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go"})
	require.NoError(t, h.env.GetWorkflowError())
	require.ElementsMatch(t, []string{"star", "gt", "again", "star2"}, h.ran, "the approved calls ran again unasked, nothing else did")
}
