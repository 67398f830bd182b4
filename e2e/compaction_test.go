package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// compactionFiles is how many files the compaction sessions read, one a
// turn; each read result is about 2.5 KB, so a 3,000-token window holds
// about four of them.
const compactionFiles = 10

const compactionPrompt = "read part_1.txt to part_10.txt, one a turn, and say when done"

var partNumber = regexp.MustCompile(`part_(\d+)\.txt`)

// isSummaryRequest tells the compaction's summary request from a turn's:
// its system message is the summary instruction.
func isSummaryRequest(req sm.Request) bool {
	return len(req.Messages) > 0 && req.Messages[0].Role == "system" &&
		strings.HasPrefix(req.Messages[0].Content, "You are compacting the conversation")
}

// requestBytes is what the model reads of a request: contents and call
// arguments, the measure the session estimates tokens by (four bytes a
// token).
func requestBytes(req sm.Request) int {
	n := 0
	for _, m := range req.Messages {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Function.Arguments) + len(c.Function.Name)
		}
	}
	return n
}

// compactionModel reads the next file after the highest one the request
// has a call for (the kept turns always hold the latest call, compacted or
// not), reports usage as a real API would (prompt tokens growing with the
// request) and answers a summary request with a summary. fault, when set,
// may answer a turn's request instead.
func compactionModel(fault func(req sm.Request, next int) (sm.Reply, bool)) sm.Responder {
	return func(req sm.Request) (sm.Reply, bool) {
		usage := &sm.Usage{PromptTokens: int64(requestBytes(req) / 4), CompletionTokens: 30}
		if isSummaryRequest(req) {
			last := 0
			for _, m := range partNumber.FindAllStringSubmatch(req.Messages[len(req.Messages)-1].Content, -1) {
				n, _ := strconv.Atoi(m[1])
				last = max(last, n)
			}
			return sm.Reply{Text: fmt.Sprintf("Task: read part_1.txt to part_10.txt.\nDone: read up to part_%d.txt; each holds numbered lines.\nNext: the following part.", last), Usage: usage}, true
		}
		next := 1
		for _, m := range req.Messages {
			for _, c := range m.ToolCalls {
				if p := partNumber.FindStringSubmatch(c.Function.Arguments); p != nil {
					n, _ := strconv.Atoi(p[1])
					next = max(next, n+1)
				}
			}
		}
		if fault != nil {
			if r, ok := fault(req, next); ok {
				return r, true
			}
		}
		if next > compactionFiles {
			return sm.Reply{Text: "read every part", Usage: usage}, true
		}
		return sm.Reply{Usage: usage, ToolCalls: []sm.Call{{
			ID: fmt.Sprintf("c_part_%d", next), Name: "read", Arguments: fmt.Sprintf(`{"path": "part_%d.txt"}`, next),
		}}}, true
	}
}

// writeParts writes the files the compaction sessions read, about 2 KB each.
func writeParts(t *testing.T, dir string) {
	t.Helper()
	for i := 1; i <= compactionFiles; i++ {
		var b strings.Builder
		for l := 1; l <= 40; l++ {
			fmt.Fprintf(&b, "part %d line %02d: %s\n", i, l, strings.Repeat("x", 36))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("part_%d.txt", i)), []byte(b.String()), 0o644))
	}
}

// wireMessages converts a recorded request's messages to ours, so the
// pairing check runs on exactly what the model was sent.
func wireMessages(req sm.Request) []conversation.Message {
	out := make([]conversation.Message, 0, len(req.Messages))
	for _, m := range req.Messages {
		c := conversation.Message{Role: m.Role, Content: m.Content}
		for _, w := range m.ToolCalls {
			c.ToolCalls = append(c.ToolCalls, conversation.ToolCall{ID: w.ID, Name: w.Function.Name, Arguments: w.Function.Arguments})
		}
		if m.Role == "tool" {
			// The wire carries no reason; the pairing is what is checked.
			c.Result = &conversation.ToolResult{CallID: m.ToolCallID, Content: m.Content, Reason: conversation.ReasonRan}
		}
		out = append(out, c)
	}
	return out
}

// compactActivities counts the Compact activities that completed.
func compactActivities(t *testing.T, id string) int {
	t.Helper()
	h := history(t, id)
	sched := map[int64]bool{}
	done := 0
	for _, ev := range h.Events {
		if a := ev.GetActivityTaskScheduledEventAttributes(); a != nil && a.GetActivityType().GetName() == "Compact" {
			sched[ev.GetEventId()] = true
		}
		if ev.GetEventType() == enumspb.EVENT_TYPE_ACTIVITY_TASK_COMPLETED && sched[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] {
			done++
		}
	}
	return done
}

// checkCompacted asserts the session's conversation after compaction:
// the system prompt, then the summary (marked compacted), paired; and the
// original conversation, longer, starting with the user's prompt.
func checkCompacted(t *testing.T, e *env, id string) {
	t.Helper()
	msgs := e.checkSession(id)
	require.GreaterOrEqual(t, len(msgs), 2)
	require.Equal(t, conversation.RoleSystem, msgs[0].Role)
	require.Equal(t, conversation.RoleUser, msgs[1].Role)
	require.True(t, strings.HasPrefix(msgs[1].Content, activities.SummaryPrefix), "the conversation does not start with the summary: %q", msgs[1].Content)
	require.NotEmpty(t, msgs[1].Compacted, "the summary does not name the messages it replaced")
	orig := query[[]conversation.Message](t, id, workflows.QueryConversationOriginal)
	require.Greater(t, len(orig), len(msgs))
	require.NoError(t, conversation.CheckPairing(orig))
	require.Equal(t, compactionPrompt, orig[1].Content, "the original conversation lost the prompt")
	for _, m := range orig {
		require.False(t, strings.HasPrefix(m.Content, activities.SummaryPrefix), "conversation-original still holds a summary")
	}
	var results int
	for _, m := range orig {
		if m.Role == conversation.RoleTool {
			results++
		}
	}
	require.Equal(t, compactionFiles, results, "conversation-original must hold every tool result")
}

// A session whose context window holds about four tool results compacts
// before the request that would not fit: every request after a compaction
// fits the window and is paired, and the conversation starts with the
// summary while conversation-original still shows every message.
func TestCompactionFitsTheWindow(t *testing.T) {
	t.Parallel()
	const window = 3000
	e := newEnvResponder(t, compactionModel(nil))
	writeParts(t, e.workspace)
	id := e.start(workflows.SessionInput{
		// The window is sized for these messages: the default system
		// prompt would take a third of it, so the session's own replaces it.
		Prompt: compactionPrompt, SystemPrompt: "You are a test agent.", SystemPromptMode: workflows.SystemPromptReplace, Profile: "build",
		ContextWindow: window, CompactKeepTurns: 2,
	})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	require.Equal(t, compactionFiles+1, r.Turns)
	require.Equal(t, "read every part", r.FinalText)

	reqs := e.model.Requests()
	summaries := 0
	for i, req := range reqs {
		if isSummaryRequest(req) {
			summaries++
			continue
		}
		if i == 0 || !isSummaryRequest(reqs[i-1]) {
			continue
		}
		// The request right after a compaction.
		require.Less(t, requestBytes(req)/4, window, "request %d after compaction is estimated past the window", i)
		msgs := wireMessages(req)
		require.NoError(t, conversation.CheckPairing(msgs), "request %d after compaction", i)
		require.True(t, strings.HasPrefix(msgs[1].Content, activities.SummaryPrefix), "request %d after compaction has no summary", i)
	}
	require.Positive(t, summaries, "no compaction ran")
	require.Equal(t, summaries, compactActivities(t, id))
	for i, req := range reqs {
		if !isSummaryRequest(req) {
			require.LessOrEqual(t, requestBytes(req)/4, window, "request %d does not fit the window", i)
		}
	}
	checkCompacted(t, e, id)
	t.Logf("%d model requests, %d compactions", len(reqs), summaries)
	recordHistory(t, id, "compaction")
}

// With no window configured, a context-length error from the model
// compacts the conversation once and the turn runs again and succeeds.
func TestCompactionOnContextLengthError(t *testing.T) {
	t.Parallel()
	const overflowAt = 4 // the turn that first overflows
	var mu sync.Mutex
	failed := false
	e := newEnvResponder(t, compactionModel(func(req sm.Request, next int) (sm.Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next != overflowAt || failed {
			return sm.Reply{}, false
		}
		failed = true
		return sm.Reply{Status: 400, ErrorCode: "context_length_exceeded",
			ErrorMessage: "This model's maximum context length is 3000 tokens. However, your messages resulted in 3100 tokens. Please reduce the length of the messages."}, true
	}))
	writeParts(t, e.workspace)
	id := e.start(workflows.SessionInput{
		Prompt: compactionPrompt, SystemPrompt: "You are a test agent.", SystemPromptMode: workflows.SystemPromptReplace, Profile: "build", CompactKeepTurns: 1,
	})
	r := result(t, id)
	require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	require.Equal(t, compactionFiles+1, r.Turns, "the overflowing turn must not count twice")

	reqs := e.model.Requests()
	at := -1
	for i, req := range reqs {
		if isSummaryRequest(req) {
			require.Equal(t, -1, at, "compacted more than once")
			at = i
		}
	}
	require.Positive(t, at, "no compaction after the context-length error")
	require.False(t, isSummaryRequest(reqs[at-1]))
	require.Less(t, at+1, len(reqs))
	retry := wireMessages(reqs[at+1])
	require.NoError(t, conversation.CheckPairing(retry))
	require.True(t, strings.HasPrefix(retry[1].Content, activities.SummaryPrefix), "the retried turn was not sent the summary")
	require.Less(t, requestBytes(reqs[at+1]), requestBytes(reqs[at-1]), "the retried turn is not smaller than the one that overflowed")
	require.Equal(t, 1, compactActivities(t, id))
	checkCompacted(t, e, id)
}
