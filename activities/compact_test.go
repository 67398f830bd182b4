package activities

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/transcript"
)

func sys(s string) conversation.Message {
	return conversation.Message{Role: conversation.RoleSystem, Content: s}
}
func user(s string) conversation.Message {
	return conversation.Message{Role: conversation.RoleUser, Content: s}
}
func say(s string) conversation.Message {
	return conversation.Message{Role: conversation.RoleAssistant, Content: s}
}

// calls is an assistant message calling read once per id.
func calls(ids ...string) conversation.Message {
	m := conversation.Message{Role: conversation.RoleAssistant}
	for _, id := range ids {
		m.ToolCalls = append(m.ToolCalls, conversation.ToolCall{ID: id, Name: "read", Arguments: fmt.Sprintf(`{"path":"%s.go"}`, id)})
	}
	return m
}

func result(id, content string) conversation.Message {
	return conversation.ToolMessage(conversation.ToolResult{CallID: id, Name: "read", Content: content, Reason: conversation.ReasonRan})
}

func TestCutPoint(t *testing.T) {
	t.Parallel()
	long := []conversation.Message{
		sys("sys"), user("task"), // 0, 1
		calls("a"), result("a", "A"), // 2, 3
		calls("b", "c"), result("b", "B"), result("c", "C"), // 4, 5, 6
		say("done; anything else?"), user("now the tests"), // 7, 8
		calls("d"), result("d", "D"), // 9, 10
		calls("e"), result("e", "E"), // 11, 12
	}
	cases := []struct {
		name string
		msgs []conversation.Message
		keep int
		want int
	}{
		{"the last turn", long, 1, 11},
		{"the last two turns", long, 2, 9 - 1}, // the user's request stays with its turn
		{"three turns", long, 3, 7},
		{"every turn but the first", long, 4, 4},
		{"all turns: nothing older", long, 5, 1},
		{"more turns than there are", long, 50, 1},
		{"no turn kept keeps the trailing request", append(append([]conversation.Message{}, long...), user("next")), 0, 13},
		{"no system message", long[1:], 1, 10},
		{"two system messages", append([]conversation.Message{sys("one")}, long...), 2, 9},
		{"nothing but the request", []conversation.Message{sys("s"), user("hi")}, 1, 1},
		{
			// An unanswered call in the older part moves the cut back to
			// before it: the replaced part must pair on its own.
			"unanswered call before the kept turns",
			[]conversation.Message{sys("s"), user("go"), say("ok"), calls("x"), user("stop that"), calls("y"), result("y", "Y"), say("end")},
			1, 3,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nsys := 0
			for tc.msgs[nsys].Role == conversation.RoleSystem {
				nsys++
			}
			got := cutPoint(tc.msgs, nsys, tc.keep)
			require.Equal(t, tc.want, got)
			require.NoError(t, conversation.CheckPairing(tc.msgs[:got]))
			turns := 0
			for _, m := range tc.msgs[got:] {
				if m.Role == conversation.RoleAssistant {
					turns++
				}
			}
			if got > nsys {
				require.GreaterOrEqual(t, turns, tc.keep)
			}
		})
	}
}

// session is a conversation of a coding agent: a system prompt, a request,
// n turns reading files (the first with a large result), and a question.
func session(n int) []conversation.Message {
	msgs := []conversation.Message{sys("you are an agent"), user("refactor the parser")}
	for i := range n {
		id := fmt.Sprintf("c%d", i)
		content := fmt.Sprintf("contents of %s.go", id)
		if i == 0 {
			content = strings.Repeat("x", 10_000) + "END-OF-BIG-FILE"
		}
		msgs = append(msgs, calls(id), result(id, content))
	}
	return append(msgs, say("I have read them all"), user("now fix the bug"))
}

func TestCompactReplacesOlderTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sm.New(sm.Reply{Text: "  The user wants the parser refactored; c0..c5 were read.  ", Usage: &sm.Usage{PromptTokens: 1000, CompletionTokens: 100}})
	defer srv.Close()
	a, _ := newActs(t, srv)
	a, store := withTranscript(t, a)

	full := session(8)
	// Part of it is behind the head, part after, as the session holds it.
	head, err := transcript.Append(ctx, store, "", full[:10])
	require.NoError(t, err)
	res, err := a.Compact(ctx, CompactRequest{Model: "gpt-4.1", Head: head, Messages: full[10:], KeepTurns: 2})
	require.NoError(t, err)

	// Kept: the system prompt, the last two turns (c7 and the closing
	// reply) and the request after them; replaced: the rest.
	kept := full[len(full)-4:]
	require.Equal(t, "The user wants the parser refactored; c0..c5 were read.", res.Summary)
	require.Equal(t, len(full)-1-len(kept), res.Replaced)
	require.Equal(t, 1+len(kept), res.Kept)
	require.Equal(t, conversation.Usage{PromptTokens: 1000, CompletionTokens: 100, TotalTokens: 1100, CostUSD: (1000*2 + 100*8) / 1e6}, res.Usage)

	got, err := transcript.Load(ctx, store, res.Head)
	require.NoError(t, err)
	require.Len(t, got, 2+len(kept))
	require.Equal(t, full[0], got[0])
	require.Equal(t, conversation.RoleUser, got[1].Role)
	require.Equal(t, SummaryPrefix+res.Summary, got[1].Content)
	require.NotEmpty(t, got[1].Compacted)
	require.Equal(t, kept, got[2:])
	require.NoError(t, conversation.CheckPairing(got))
	n := 0
	for _, m := range got {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Arguments)
		}
	}
	require.Equal(t, n/4, res.EstimatedTokens)

	// The originals are kept: expanding the summary gives them back.
	orig, err := transcript.Expand(ctx, store, got)
	require.NoError(t, err)
	require.Equal(t, full, orig)

	// What the model was asked: a summary of the replaced part only, as
	// text, with the long result cut, no tools, nothing streamed.
	reqs := srv.Requests()
	require.Len(t, reqs, 1)
	req := reqs[0]
	require.Equal(t, "gpt-4.1", req.Model)
	require.False(t, req.Stream)
	require.Empty(t, req.Tools)
	require.Len(t, req.Messages, 2)
	require.Equal(t, "system", req.Messages[0].Role)
	for _, want := range []string{"coding agent", "Files", "Open problems", "Next"} {
		require.Contains(t, req.Messages[0].Content, want)
	}
	text := req.Messages[1].Content
	require.Equal(t, "user", req.Messages[1].Role)
	require.Contains(t, text, "refactor the parser")
	require.Contains(t, text, `(calls read {"path":"c3.go"})`)
	require.Contains(t, text, "contents of c5.go")
	require.Contains(t, text, "more bytes cut")
	require.NotContains(t, text, "END-OF-BIG-FILE")
	require.NotContains(t, text, "you are an agent", "the system prompt stays; it is not summarised")
	require.NotContains(t, text, "contents of c7.go", "kept turns are not summarised")
	require.NotContains(t, text, "now fix the bug")
}

func TestCompactAgainKeepsEveryOriginal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sm.New(sm.Text("first summary"), sm.Text("second summary"))
	defer srv.Close()
	a, _ := newActs(t, srv)
	a, store := withTranscript(t, a)

	full := session(6)
	first, err := a.Compact(ctx, CompactRequest{Messages: full, KeepTurns: 2})
	require.NoError(t, err)
	more := []conversation.Message{calls("late1"), result("late1", "L1"), calls("late2"), result("late2", "L2"), say("fixed")}
	second, err := a.Compact(ctx, CompactRequest{Head: first.Head, Messages: more, KeepTurns: 1})
	require.NoError(t, err)
	require.NotZero(t, second.Replaced)
	require.Contains(t, srv.Requests()[1].Messages[1].Content, "first summary", "the earlier summary is summarised again")

	got, err := transcript.Load(ctx, store, second.Head)
	require.NoError(t, err)
	require.Equal(t, []conversation.Message{full[0], {Role: conversation.RoleUser, Content: SummaryPrefix + "second summary", Compacted: got[1].Compacted}, say("fixed")}, got)
	orig, err := transcript.Expand(ctx, store, got)
	require.NoError(t, err)
	require.Equal(t, append(append([]conversation.Message{}, full...), more...), orig)
}

func TestCompactNothingOlder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := sm.New()
	defer srv.Close()
	a, _ := newActs(t, srv)
	a, store := withTranscript(t, a)
	full := session(2)
	head, err := transcript.Append(ctx, store, "", full[:3])
	require.NoError(t, err)
	res, err := a.Compact(ctx, CompactRequest{Head: head, Messages: full[3:], KeepTurns: 4})
	require.NoError(t, err)
	want, err := transcript.Append(ctx, store, head, full[3:])
	require.NoError(t, err)
	require.Equal(t, CompactResult{Head: want, Kept: len(full), EstimatedTokens: res.EstimatedTokens}, res)
	require.NotZero(t, res.EstimatedTokens)
	require.Empty(t, srv.Requests(), "nothing to summarise, no model call")
}

func TestCompactFaults(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	req := CompactRequest{Messages: session(6), KeepTurns: 1}

	a, _ := newActs(t, nil)
	_, err := a.Compact(ctx, req)
	requireAppErr(t, err, ErrTypeTranscriptUnavailable, true)

	overflow := sm.Reply{Status: 400, ErrorCode: "context_length_exceeded", ErrorMessage: "This model's maximum context length is 8192 tokens."}
	cases := []struct {
		name         string
		reply        sm.Reply
		wantType     string
		nonRetryable bool
	}{
		{"server error", sm.Reply{Status: 503}, ErrTypeModelFault, false},
		{"rejected", sm.Reply{Status: 400}, ErrTypeModelRejected, true},
		{"over the window", overflow, ErrTypeContextLength, true},
		{"empty summary", sm.Text(""), ErrTypeModelFault, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := sm.New(tc.reply)
			defer srv.Close()
			a, _ := newActs(t, srv)
			a, _ = withTranscript(t, a)
			_, err := a.Compact(ctx, req)
			requireAppErr(t, err, tc.wantType, tc.nonRetryable)
		})
	}
}

func TestRenderForSummaryStaysWithinItsLimit(t *testing.T) {
	t.Parallel()
	var msgs []conversation.Message
	msgs = append(msgs, user("FIRST-REQUEST"))
	for i := range 1000 {
		id := fmt.Sprintf("c%d", i)
		msgs = append(msgs, calls(id), result(id, strings.Repeat("é", 5000)))
	}
	msgs = append(msgs, say("LAST-WORDS"))
	text := renderForSummary(msgs)
	require.LessOrEqual(t, len(text), summaryInputLimit+100)
	for _, want := range []string{"FIRST-REQUEST", "LAST-WORDS", "messages left out", "more bytes cut"} {
		require.True(t, strings.Contains(text, want), want) // the text is too long to print
	}
	require.True(t, strings.ToValidUTF8(text, "?") == text, "cuts fall on character boundaries")
}

// A model that speaks only the Responses API summarises over it too.
func TestCompactOverResponses(t *testing.T) {
	t.Parallel()
	srv := sm.New(sm.Text("The user wants things; c0..c5 were read."))
	defer srv.Close()
	a, _ := newActs(t, srv)
	a, _ = withTranscript(t, a)
	res, err := a.Compact(context.Background(), CompactRequest{Model: "gpt-5-codex", Messages: session(8), KeepTurns: 2})
	require.NoError(t, err)
	require.Equal(t, "The user wants things; c0..c5 were read.", res.Summary)
	req := srv.Requests()[0]
	require.Equal(t, sm.APIResponses, req.API)
	require.Equal(t, "system", req.Messages[0].Role)
	require.Contains(t, req.Messages[1].Content, "Summarise this conversation")
}
