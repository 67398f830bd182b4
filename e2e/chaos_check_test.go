package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/workflows"
)

// chaosCounts are the invariant counts of one or more sessions; the chaos
// tests print their sum.
type chaosCounts struct {
	Sessions, Completed, Kills, ServerRestarts int
	Calls, LedgerLines                         int
	Unpaired, Doubles, WorkerLost, Replayed    int
	ByKind                                     map[string]int
}

func (c *chaosCounts) add(o chaosCounts) {
	c.Sessions += o.Sessions
	c.Completed += o.Completed
	c.Kills += o.Kills
	c.ServerRestarts += o.ServerRestarts
	c.Calls += o.Calls
	c.LedgerLines += o.LedgerLines
	c.Unpaired += o.Unpaired
	c.Doubles += o.Doubles
	c.WorkerLost += o.WorkerLost
	c.Replayed += o.Replayed
	if c.ByKind == nil {
		c.ByKind = map[string]int{}
	}
	for k, v := range o.ByKind {
		c.ByKind[k] += v
	}
}

func (c chaosCounts) String() string {
	return fmt.Sprintf("sessions=%d completed=%d kills=%d %v server_restarts=%d calls=%d ledger_lines=%d unpaired_calls=%d double_executions=%d worker_lost_results=%d histories_replayed=%d",
		c.Sessions, c.Completed, c.Kills, c.ByKind, c.ServerRestarts, c.Calls, c.LedgerLines, c.Unpaired, c.Doubles, c.WorkerLost, c.Replayed)
}

// notRun are the reasons that promise the tool did not run at all, so its
// ledger line must be absent.
var notRun = map[conversation.Reason]bool{
	conversation.ReasonInvalidArguments: true, conversation.ReasonUnknownTool: true,
	conversation.ReasonDenied: true, conversation.ReasonDeniedByPolicy: true,
	conversation.ReasonBlocked: true, conversation.ReasonTimeout: true,
	conversation.ReasonCancelledBeforeRun: true,
}

// readLedger counts the ledger's lines per call id, keeping only the lines
// of session name (the ledger file is the session's own, but a line from
// another session would be a bug worth seeing).
func readLedger(path string) (map[string]int, int, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]int{}, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	counts := map[string]int{}
	lines := 0
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if l == "" {
			continue
		}
		lines++
		_, id, _ := strings.Cut(l, ":")
		counts[id]++
	}
	return counts, lines, nil
}

// checkInvariants checks what must hold at the end of every chaos session,
// whatever was killed and when: it completed, every call has exactly one
// result, no mutating call ran twice (the ledger), a call that says it ran
// ran once and one that says it did not run left no line, no workflow task
// failed, the model key is not in history, and the history replays against
// today's workflow code. It returns the counts and every violation.
func checkInvariants(ctx context.Context, c client.Client, id, apiKey, ledger string, res workflows.SessionResult) (chaosCounts, map[string]conversation.ToolResult, []string) {
	n := chaosCounts{Sessions: 1}
	var bad []string
	failf := func(format string, args ...any) { bad = append(bad, fmt.Sprintf(format, args...)) }

	if res.Status == workflows.ResultCompleted {
		n.Completed = 1
	} else {
		failf("session ended %q (%s), want completed", res.Status, res.Error)
	}

	var msgs []conversation.Message
	qctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	val, err := c.QueryWorkflow(qctx, id, "", workflows.QueryConversation)
	cancel()
	if err == nil {
		err = val.Get(&msgs)
	}
	if err != nil {
		failf("query conversation: %v", err)
	}
	if err := conversation.CheckPairing(msgs); err != nil {
		var joined interface{ Unwrap() []error }
		if errors.As(err, &joined) {
			n.Unpaired += len(joined.Unwrap())
		} else {
			n.Unpaired++
		}
		failf("pairing: %v", err)
	}

	counts, lines, err := readLedger(ledger)
	if err != nil {
		failf("read ledger: %v", err)
	}
	n.LedgerLines = lines
	results := map[string]conversation.ToolResult{}
	calls := map[string]bool{}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			calls[tc.ID] = true
		}
		if m.Result != nil {
			results[m.Result.CallID] = *m.Result
			if m.Result.Reason == conversation.ReasonWorkerLost {
				n.WorkerLost++
			}
		}
	}
	n.Calls = len(calls)
	for cid, k := range counts {
		if k > 1 {
			n.Doubles++
			failf("double execution: call %s is in the ledger %d times (result %+v)", cid, k, results[cid])
		}
		if !calls[cid] {
			failf("ledger line for %s, a call the conversation does not have", cid)
		}
	}
	for cid, r := range results {
		switch {
		case r.Name != "shell":
		case r.Reason == conversation.ReasonRan && counts[cid] != 1:
			failf("call %s says it ran but the ledger has it %d times", cid, counts[cid])
		case notRun[r.Reason] && counts[cid] != 0:
			failf("call %s says %s (did not run) but the ledger has it %d times", cid, r.Reason, counts[cid])
		}
	}

	h, err := fetchHistory(ctx, c, id)
	if err != nil {
		failf("fetch history: %v", err)
		return n, results, bad
	}
	for _, ev := range h.Events {
		if ev.GetEventType() == enumspb.EVENT_TYPE_WORKFLOW_TASK_FAILED {
			failf("workflow task failed (event %d): %s", ev.GetEventId(), ev.GetWorkflowTaskFailedEventAttributes().GetFailure().GetMessage())
		}
	}
	if bytes.Contains(decodedPayloads(h), []byte(apiKey)) {
		failf("the model API key is in the history")
	}
	rep := worker.NewWorkflowReplayer()
	rep.RegisterWorkflowWithOptions((&workflows.Sessions{}).AgentSession, workflow.RegisterOptions{Name: workflows.WorkflowType})
	if err := rep.ReplayWorkflowHistory(nil, h); err != nil {
		failf("replay: %v", err)
	} else {
		n.Replayed = 1
	}
	return n, results, bad
}

// fetchHistory is the session's full history, bounded in time.
func fetchHistory(ctx context.Context, c client.Client, id string) (*historypb.History, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	it := c.GetWorkflowHistory(ctx, id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			return nil, err
		}
		h.Events = append(h.Events, ev)
	}
	return h, nil
}

// saveHistory writes a failing session's history where it survives the
// test's temporary directories, and returns the path; it can be replayed
// with worker.NewWorkflowReplayer().ReplayWorkflowHistoryFromJSONFile.
func saveHistory(ctx context.Context, c client.Client, id string) string {
	h, err := fetchHistory(ctx, c, id)
	if err != nil {
		return "(history not fetched: " + err.Error() + ")"
	}
	raw, err := protojson.MarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		return "(history not encoded: " + err.Error() + ")"
	}
	path := filepath.Join(os.TempDir(), id+".history.json")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		return "(history not written: " + err.Error() + ")"
	}
	return path
}

// describeStuck says what a session that did not finish is waiting for:
// its pending activities, with attempts and the timeouts they were
// scheduled with (a started attempt whose worker died is only retried once
// one of them fires), and its workflow task.
func describeStuck(ctx context.Context, c client.Client, id string) string {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	d, err := describeRun(ctx, c, id, "")
	if err != nil {
		return "describe: " + err.Error()
	}
	scheduled := map[string]string{}
	if h, err := fetchHistory(ctx, c, id); err == nil {
		for _, ev := range h.Events {
			if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil {
				scheduled[a.GetActivityId()] = fmt.Sprintf("start-to-close %s, heartbeat %s, schedule-to-close %s, max attempts %d",
					a.GetStartToCloseTimeout().AsDuration(), a.GetHeartbeatTimeout().AsDuration(),
					a.GetScheduleToCloseTimeout().AsDuration(), a.GetRetryPolicy().GetMaximumAttempts())
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "status %s", d.GetWorkflowExecutionInfo().GetStatus())
	for _, a := range d.GetPendingActivities() {
		fmt.Fprintf(&b, "; pending activity %s (id %s) state %s attempt %d, last started %s, last heartbeat %s, last failure %q, scheduled with %s",
			a.GetActivityType().GetName(), a.GetActivityId(), a.GetState(), a.GetAttempt(),
			a.GetLastStartedTime().AsTime().Format(time.TimeOnly), a.GetLastHeartbeatTime().AsTime().Format(time.TimeOnly),
			a.GetLastFailure().GetMessage(), scheduled[a.GetActivityId()])
	}
	if wt := d.GetPendingWorkflowTask(); wt != nil {
		fmt.Fprintf(&b, "; pending workflow task %s attempt %d", wt.GetState(), wt.GetAttempt())
	}
	return b.String()
}
