package workflows

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/tools"
)

// TaskName is the sub-agent tool: the model hands a self-contained piece
// of work (explore the code, try a fix) to a child session with its own
// prompt and profile, and gets the child's final answer as the result.
const TaskName = "task"

// SignalChildPending is how a child session tells its parent which of its
// calls wait for a person, so they show (and are answered) on the
// parent's pending list: the person approves in one place.
const SignalChildPending = "child-pending"

// Sub-agent limits: how deep children may nest, how many run at once in
// one session, and how many one session may start in all.
const (
	MaxSubagentDepth      = 2
	MaxConcurrentSubagent = 3
	MaxSubagentsTotal     = 10
)

// ParentRef names the session a child works for.
type ParentRef struct {
	WorkflowID string `json:"workflow_id"`
	CallID     string `json:"call_id"` // the parent's task call
	Depth      int    `json:"depth"`   // 1 for a child of a top session
}

// ChildPending is the payload of the child-pending signal: the child's
// whole list of waiting calls (empty when none waits).
type ChildPending struct {
	Child   string            `json:"child"`
	Pending []PendingApproval `json:"pending"`
}

func (s *session) depth() int {
	if s.in.Parent == nil {
		return 0
	}
	return s.in.Parent.Depth
}

// taskSpec is the sub-agent tool as the model sees it.
func taskSpec() tools.Spec {
	return tools.Spec{
		Name: TaskName,
		Description: "Hand a self-contained piece of work to a sub-agent: a new session with its own conversation, which reports back its final answer. " +
			"Use it to explore a large code base or try something without filling your own context. Give a complete prompt: the sub-agent sees nothing of your conversation. " +
			"profile \"plan\" (default) can only read; \"build\" can change files and run commands, with the same approvals as you. The answer is the sub-agent's final message.",
		Parameters: json.RawMessage(`{
  "type": "object",
  "properties": {
    "description": {"type": "string", "minLength": 1, "description": "What the sub-agent is for, in a few words (shown to the person)."},
    "prompt": {"type": "string", "minLength": 1, "description": "The whole task for the sub-agent."},
    "profile": {"type": "string", "enum": ["plan", "build", "auto"], "description": "plan (default): read-only explorer; build: may change things, asking as you do; auto: runs everything in the workspace."}
  },
  "required": ["description", "prompt"],
  "additionalProperties": false
}`),
		// Running a child changes nothing by itself: its own calls are
		// decided by its own permissions. Children may run side by side.
		ReadOnly:       true,
		Concurrency:    tools.ConcurrencyShared,
		TimeoutSeconds: 24 * 3600,
	}
}

// runTask runs one child session and returns its final answer. A parent
// cancelled meanwhile cancels the child, which pairs its own calls before
// it closes (ParentClosePolicy and WaitForCancellation below).
func (s *session) runTask(ctx workflow.Context, cs *callState) (tools.Result, error) {
	var p struct {
		Description string `json:"description"`
		Prompt      string `json:"prompt"`
		Profile     string `json:"profile"`
	}
	if err := json.Unmarshal([]byte(cs.call.Arguments), &p); err != nil {
		return tools.Errorf("task: %v", err), nil
	}
	if p.Profile == "" {
		p.Profile = permission.ProfilePlan
	}
	// A sub-agent never gets more than its parent: a plan session's
	// children only read, a build session's cannot run in auto.
	rank := map[string]int{permission.ProfilePlan: 0, permission.ProfileBuild: 1, permission.ProfileAuto: 2}
	parent := s.in.Profile
	if parent == "" {
		parent = permission.ProfileBuild
	}
	if rank[p.Profile] > rank[parent] {
		p.Profile = parent
	}
	if s.subagentsTotal >= MaxSubagentsTotal {
		return tools.Errorf("task refused: this session has started %d sub-agents, the most one session may; do the rest yourself", MaxSubagentsTotal), nil
	}
	if err := workflow.Await(ctx, func() bool { return s.subagentsRunning < MaxConcurrentSubagent }); err != nil {
		return tools.Result{}, err
	}
	s.subagentsTotal++
	s.subagentsRunning++
	defer func() { s.subagentsRunning-- }()
	childID := childID(s.workflowID, s.subagentsTotal)
	in := SessionInput{
		Prompt: p.Prompt, Model: s.in.Model, WorkDir: s.in.WorkDir, Approval: s.in.Approval, ApprovalTimeout: s.in.ApprovalTimeout,
		Profile: p.Profile, Rules: s.in.Rules, Network: s.in.Network, MaxParallelTools: s.in.MaxParallelTools,
		ContextWindow: s.in.ContextWindow, MaxTurns: 200, LocalReads: s.in.LocalReads, LocalModel: s.in.LocalModel,
		Parent: &ParentRef{WorkflowID: s.workflowID, CallID: cs.call.ID, Depth: s.depth() + 1},
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:          childID,
		TaskQueue:           workflow.GetInfo(ctx).TaskQueueName,
		ParentClosePolicy:   enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
		WaitForCancellation: true,
		StaticSummary:       "sub-agent: " + truncate(p.Description, 80),
		StaticDetails:       fmt.Sprintf("Sub-agent of `%s` (call `%s`), profile %s.\n\n%s", s.workflowID, cs.call.ID, p.Profile, truncate(p.Prompt, 2000)),
	})
	var res SessionResult
	if s.children == nil {
		s.children = map[string]bool{}
	}
	s.children[childID] = true // it may report waiting calls now
	err := workflow.ExecuteChildWorkflow(cctx, WorkflowType, in).Get(ctx, &res)
	delete(s.children, childID)
	delete(s.childPending, childID)
	if err != nil {
		return tools.Result{}, err
	}
	text := fmt.Sprintf("sub-agent %s (%s, %d turns):\n%s", childID, res.Status, res.Turns, res.FinalText)
	if res.Status != ResultCompleted {
		if res.Error != "" {
			text += "\n" + res.Error
		}
		return tools.Result{Content: text, IsError: true}, nil
	}
	return tools.Result{Content: text}, nil
}

// tellParent sends the parent this child's waiting calls when they
// changed, so the person sees them where they look.
func (s *session) tellParent(ctx workflow.Context) {
	if s.in.Parent == nil {
		return
	}
	p := s.pending()
	key := make([]string, len(p))
	for i, c := range p {
		key[i] = c.CallID
	}
	k := strings.Join(key, ",")
	if k == s.toldParent {
		return
	}
	s.toldParent = k
	_ = workflow.SignalExternalWorkflow(ctx, s.in.Parent.WorkflowID, "", SignalChildPending, ChildPending{Child: s.workflowID, Pending: p})
}

// childCall splits a qualified child call id, "<child id>/<call id>",
// when it names a call waiting in one of this session's children.
func (s *session) childCall(id string) (child, call string, ok bool) {
	for c, list := range s.childPending {
		prefix := c + "/"
		if !strings.HasPrefix(id, prefix) {
			continue
		}
		for _, p := range list {
			if prefix+p.CallID == id {
				return c, p.CallID, true
			}
		}
	}
	return "", "", false
}

// childPendingList is the children's waiting calls for this session's
// pending list, their ids qualified by the child's id.
func (s *session) childPendingList() []PendingApproval {
	children := make([]string, 0, len(s.childPending))
	for c := range s.childPending {
		children = append(children, c)
	}
	sort.Strings(children) // map order is random; queries and details must be stable
	var out []PendingApproval
	for _, c := range children {
		for _, p := range s.childPending[c] {
			p.CallID = c + "/" + p.CallID
			p.Session = c
			out = append(out, p)
		}
	}
	return out
}

// forwardApproval hands a person's decision on a child's call to that
// child. Only people decide: the parent's model has no way to send one.
func (s *session) forwardApproval(ctx workflow.Context, child, call string, ap Approval) ApprovalOutcome {
	ap.CallID, ap.All = call, false
	_ = workflow.SignalExternalWorkflow(ctx, child, "", SignalApproval, ap)
	// Shown as decided until the child reports its new list.
	list := s.childPending[child][:0]
	for _, p := range s.childPending[child] {
		if p.CallID != call {
			list = append(list, p)
		}
	}
	s.childPending[child] = list
	return ApprovalOutcome{Decision: strings.ToLower(strings.TrimSpace(ap.Decision)), CallIDs: []string{child + "/" + call}}
}
