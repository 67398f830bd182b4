package workflows

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/longrun/longrun/callref"
	"github.com/longrun/longrun/eventlog"
	"github.com/longrun/longrun/permission"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/toolspec"
)

// subagents are the sub-agents this session runs now and what they
// report: held by value in the driver.
type subagents struct {
	running  int                          // task calls running now
	grants   session.Grant                // budgets granted to the children running now
	children map[string]bool              // sub-agents running now, by session id: only they report waiting calls
	pending  map[string][]PendingApproval // children's waiting calls, by child session id
	told     string                       // the waiting call ids last sent to the parent
}

// TaskName is the sub-agent tool: the model hands a self-contained piece
// of work (explore the code, try a fix) to a child session with its own
// prompt and profile, and gets the child's final answer as the result.
const TaskName = "task"

// Sub-agent limits: how deep children may nest, how many run at once in
// one session, and how many one session may start in all.
const (
	MaxSubagentDepth      = 2
	MaxConcurrentSubagent = 3
	MaxSubagentsTotal     = 10
)

func (s *driver) depth() int {
	if s.in.Parent == nil {
		return 0
	}
	return s.in.Parent.Depth
}

// taskSpec is the sub-agent tool as the model sees it.
func taskSpec() toolspec.Spec {
	return toolspec.Spec{
		Name: TaskName,
		Description: "Hand a self-contained piece of work to a sub-agent: a new session with its own conversation, which reports back its final answer. " +
			"Use it to explore a large code base or try something without filling your own context. Give a complete prompt: the sub-agent sees nothing of your conversation. " +
			"profile \"plan\" (default) can only read; \"build\" can change files and run commands, with the same approvals as you. The answer is the sub-agent's final message.",
		Parameters: toolspec.ParamsSchema[TaskParams](func(p toolspec.ParamProps) {
			toolspec.NonEmpty(p["description"])
			toolspec.NonEmpty(p["prompt"])
			toolspec.OneOf(p["profile"], permission.ProfilePlan, permission.ProfileBuild, permission.ProfileAuto)
		}),
		// Running a child changes nothing by itself: its own calls are
		// decided by its own permissions. Children may run side by side.
		ReadOnly:       true,
		Concurrency:    toolspec.ConcurrencyShared,
		TimeoutSeconds: 24 * 3600,
	}
}

// taskTool is the sub-agent tool, answered by the session with a child
// session; offered while the session is not nested too deep.
type taskTool struct{}

func (taskTool) offer(s *driver, _ []toolspec.Spec) bool { return s.depth() < MaxSubagentDepth }

func (taskTool) spec() toolspec.Spec { return taskSpec() }

// TaskParams are the task tool's arguments.
type TaskParams struct {
	Description string `json:"description" jsonschema:"What the sub-agent is for, in a few words (shown to the person)."`
	Prompt      string `json:"prompt" jsonschema:"The whole task for the sub-agent."`
	Profile     string `json:"profile,omitempty" jsonschema:"plan (default): read-only explorer; build: may change things, asking as you do; auto: runs everything in the workspace."`
}

// answer runs one child session and returns its final answer.
func (taskTool) answer(ctx workflow.Context, s *driver, cs callRef) (toolspec.Result, error) {
	var p TaskParams
	if err := json.Unmarshal([]byte(cs.call().Arguments), &p); err != nil {
		return toolspec.Errorf("%s: %v", TaskName, err), nil
	}
	p.Profile = childProfile(p.Profile, s.in.Profile)
	if s.Subagents >= MaxSubagentsTotal {
		return toolspec.Errorf("task refused: this session has started %d sub-agents, the most one session may; do the rest yourself", MaxSubagentsTotal), nil
	}
	if err := workflow.Await(ctx, func() bool { return s.kids.running < MaxConcurrentSubagent }); err != nil {
		return toolspec.Result{}, err
	}
	// The child spends from this session's budgets: it gets what is left
	// of them, and what it used is added to this session's usage.
	grant, refusal := s.limits.ChildGrant(s.Usage, s.kids.grants)
	if refusal != "" {
		return toolspec.Errorf("task refused: %s; finish without sub-agents", refusal), nil
	}
	s.kids.grants = s.kids.grants.Add(grant)
	defer func() { s.kids.grants = s.kids.grants.Sub(grant) }()
	s.Subagents++
	s.kids.running++
	defer func() { s.kids.running-- }()
	id := childID(s.workflowID, s.Subagents)
	if s.kids.children == nil {
		s.kids.children = map[string]bool{}
	}
	s.kids.children[id] = true // it may report waiting calls now
	in := s.childInput(cs, p)
	in.TokenBudget, in.CostBudgetUSD = grant.Tokens, grant.CostUSD
	res, err := s.childSession(ctx, id, in,
		"sub-agent: "+truncate(p.Description, 80),
		fmt.Sprintf("Sub-agent of `%s` (call `%s`), profile %s.\n\n%s", s.workflowID, cs.call().ID, p.Profile, truncate(p.Prompt, 2000)),
		func() {
			s.emit(ctx, eventlog.Event{Kind: eventlog.KindSubagentStarted, Session: id, Text: p.Description,
				Call: &eventlog.Call{ID: cs.call().Ref, Tool: TaskName, Summary: eventlog.Short(s.callSummary(cs), 200)}})
		})
	delete(s.kids.children, id)
	delete(s.kids.pending, id)
	s.Usage = s.Usage.Add(res.Usage) // its children's usage is in it
	s.afterChild(res)
	if err != nil {
		return toolspec.Result{}, err
	}
	text := fmt.Sprintf("sub-agent %s (%s, %d turns):\n%s", id, res.Status, res.Turns, res.FinalText)
	if res.Status != ResultCompleted {
		if res.Error != "" {
			text += "\n" + res.Error
		}
		return toolspec.Result{Content: text, IsError: true}, nil
	}
	return toolspec.Result{Content: text}, nil
}

// childProfile is the profile a sub-agent runs with: the one asked for
// (plan by default), but never more than its parent's: a plan session's
// children only read, a build session's cannot run in auto.
func childProfile(asked, parent string) string {
	if asked == "" {
		asked = permission.ProfilePlan
	}
	rank := map[string]int{permission.ProfilePlan: 0, permission.ProfileBuild: 1, permission.ProfileAuto: 2}
	if parent == "" {
		parent = permission.ProfileBuild
	}
	if rank[asked] > rank[parent] {
		return parent
	}
	return asked
}

// childInput is a sub-agent's input: the parent's settings, the task's
// prompt and profile.
func (s *driver) childInput(cs callRef, p TaskParams) SessionInput {
	return SessionInput{
		Prompt: p.Prompt, Model: s.in.Model, WorkDir: s.in.WorkDir, Approval: s.in.Approval, ApprovalTimeout: s.in.ApprovalTimeout,
		Profile: p.Profile, Rules: s.in.Rules, Network: s.in.Network, MaxParallelTools: s.in.MaxParallelTools,
		ContextWindow: s.in.ContextWindow, MaxTurns: 200, LocalReads: s.in.LocalReads, LocalModel: s.in.LocalModel,
		Parent:   &ParentRef{WorkflowID: s.workflowID, CallID: cs.call().ID, Depth: s.depth() + 1},
		Checkout: s.Checkout, InPlace: !s.isolated(), WorkerLostAfter: s.in.WorkerLostAfter,
	}
}

// tellParent sends the parent this child's waiting calls when they
// changed, so the person sees them where they look. p is the shown
// state's waiting calls (driver.show).
func (s *driver) tellParent(ctx workflow.Context, p []PendingApproval) {
	if s.in.Parent == nil {
		return
	}
	key := make([]string, len(p))
	for i, c := range p {
		key[i] = c.ID + ":" + c.Digest
	}
	k := strings.Join(key, ",")
	if k == s.kids.told {
		return
	}
	s.kids.told = k
	_ = workflow.SignalExternalWorkflow(ctx, s.in.Parent.WorkflowID, "", SignalChildPending, ChildPending{Child: s.workflowID, Pending: p})
}

// childCall finds the call of one of this session's children that ap
// names by a qualified id, "<child id>/<id>" (or "<child id>/<call id>",
// the model's, while it names one call). ok is false when ap names no
// child's call; err when it names one ambiguously or with a digest of
// other arguments (the child would refuse it too, but after its parent
// had already shown it decided).
func (s *driver) childCall(ap Approval) (child string, call PendingApproval, ok bool, err error) {
	name, byID := ap.ID, true
	if name == "" {
		name, byID = ap.CallID, false
	}
	children := make([]string, 0, len(s.kids.pending))
	for c := range s.kids.pending {
		children = append(children, c)
	}
	sort.Strings(children) // map order is random; the answer must replay
	var hits []PendingApproval
	for _, c := range children {
		rest, found := strings.CutPrefix(name, c+"/")
		if !found {
			continue
		}
		for _, p := range s.kids.pending[c] {
			if (byID && p.ID == rest) || (!byID && (p.CallID == rest || p.ID == rest)) {
				child = c
				hits = append(hits, p)
			}
		}
	}
	switch {
	case len(hits) == 0:
		return "", PendingApproval{}, false, nil
	case len(hits) > 1:
		return "", PendingApproval{}, true, fmt.Errorf("call id %q names %d waiting calls of a sub-agent: the model used it more than once, "+
			"so nothing was decided; name the call by the session's id (\"id\"), as the pending list shows it", name, len(hits))
	}
	call = hits[0]
	if byID && ap.CallID != "" && ap.CallID != child+"/"+call.CallID {
		return "", PendingApproval{}, true, fmt.Errorf("call %s is not the call the model named %q: nothing decided; send the session's id alone", name, ap.CallID)
	}
	if ap.Digest != "" && call.Digest != "" && !callref.DigestMatches(ap.Digest, call.Digest) {
		return "", PendingApproval{}, true, &callref.DigestError{ID: child + "/" + call.ID, Sent: ap.Digest, Call: call.Digest}
	}
	return child, call, true, nil
}

// childPendingList is the children's waiting calls for this session's
// pending list, their ids qualified by the child's id.
func (s *driver) childPendingList() []PendingApproval {
	children := make([]string, 0, len(s.kids.pending))
	for c := range s.kids.pending {
		children = append(children, c)
	}
	sort.Strings(children) // map order is random; queries and details must be stable
	var out []PendingApproval
	for _, c := range children {
		for _, p := range s.kids.pending[c] {
			p.CallID = c + "/" + p.CallID
			p.ID = c + "/" + p.ID
			p.Session = c
			out = append(out, p)
		}
	}
	return out
}

// forwardApproval hands a person's decision on a child's call to that
// child, by the child's own ids and with the digest the person sent.
// Only people decide: the parent's model has no way to send one.
func (s *driver) forwardApproval(ctx workflow.Context, child string, call PendingApproval, ap Approval) ApprovalOutcome {
	ap.ID, ap.CallID, ap.All = call.ID, call.CallID, false
	_ = workflow.SignalExternalWorkflow(ctx, child, "", SignalApproval, ap)
	// Shown as decided until the child reports its new list.
	list := s.kids.pending[child][:0]
	for _, p := range s.kids.pending[child] {
		if p.ID != call.ID {
			list = append(list, p)
		}
	}
	s.kids.pending[child] = list
	return ApprovalOutcome{Decision: strings.ToLower(strings.TrimSpace(ap.Decision)),
		CallIDs: []string{child + "/" + call.CallID}, IDs: []string{child + "/" + call.ID}}
}
