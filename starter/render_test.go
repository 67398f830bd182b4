package main

import (
	"github.com/longrun/longrun/callref"

	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/workflows"
)

func TestCut(t *testing.T) {
	t.Parallel()
	require.Equal(t, "abc", cut("abc", 3))
	require.Equal(t, "ab…", cut("abcd", 3))
	require.Equal(t, "hé…", cut("héllo", 3), "counts runes, not bytes")
	require.Len(t, []rune(cut(strings.Repeat("x", 500), 80)), 80)
}

func TestRenderMessage(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("y", 1000)
	tests := []struct {
		name string
		msg  conversation.Message
		want []string
	}{
		{"user", conversation.Message{Role: "user", Content: "hi\nthere"}, []string{"user: hi\n  there"}},
		{"assistant text", conversation.Message{Role: "assistant", Content: "done"}, []string{"assistant: done"}},
		{
			"assistant calls",
			conversation.Message{Role: "assistant", ToolCalls: []conversation.ToolCall{
				{ID: "call_1", Ref: "call_1", Name: "read", Arguments: `{"path":"a.go"}`},
				{ID: "call_2", Ref: "call_2", Name: "list", Arguments: `{}`},
			}},
			[]string{`→ tool call read {"path":"a.go"} [call_1]`, `→ tool call list {} [call_2]`},
		},
		{
			"assistant text and call",
			conversation.Message{Role: "assistant", Content: "let me look", ToolCalls: []conversation.ToolCall{{ID: "c", Ref: "c", Name: "read", Arguments: `{}`}}},
			[]string{"assistant: let me look", "→ tool call read {} [c]"},
		},
		{
			"result",
			conversation.ToolMessage(conversation.ToolResult{CallID: "call_1", Ref: "call_1", Name: "read", Content: "line1\nline2", Reason: conversation.ReasonRan}),
			[]string{"← result [call_1] (ran): line1 ↵ line2"},
		},
		{
			"error result",
			conversation.ToolMessage(conversation.ToolResult{CallID: "call_2", Ref: "call_2", Content: "denied: no", IsError: true, Reason: conversation.ReasonDenied}),
			[]string{"← result [call_2] (denied, error): denied: no"},
		},
		{
			"long result is cut",
			conversation.ToolMessage(conversation.ToolResult{CallID: "c", Ref: "c", Content: long, Reason: conversation.ReasonRan}),
			[]string{"← result [c] (ran): " + strings.Repeat("y", maxResultPreview) + " … 700 more bytes hidden; see all: " + progName + " conversation --full SESSION"},
		},
		{"system is cut", conversation.Message{Role: "system", Content: long}, []string{"system: " + strings.Repeat("y", maxSystemPreview) + " … 800 more bytes hidden; see all: " + progName + " conversation --full SESSION"}},
		{
			"reasoning above the answer",
			conversation.Message{Role: "assistant", Content: "It is 4.", Reasoning: "two plus two\nis four\n"},
			[]string{"thinking: two plus two", "  is four", "assistant: It is 4."},
		},
		{
			"long reasoning is cut",
			conversation.Message{Role: "assistant", Reasoning: strings.Repeat("x\n", maxReasoningLines+3), ToolCalls: []conversation.ToolCall{{ID: "c", Ref: "c", Name: "read", Arguments: `{}`}}},
			append(append([]string{"thinking: x"}, slices.Repeat([]string{"  x"}, maxReasoningLines-1)...),
				"  … 3 more lines hidden; see all: "+progName+" conversation --full SESSION", "→ tool call read {} [c]"),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, renderMessage(tc.msg))
		})
	}
}

func TestShellQuote(t *testing.T) {
	t.Parallel()
	require.Equal(t, "session-1", shellQuote("session-1"))
	require.Equal(t, "''", shellQuote(""))
	require.Equal(t, `'a b'`, shellQuote("a b"))
	require.Equal(t, `'it'\''s'`, shellQuote("it's"))
}

func TestSignalCommand(t *testing.T) {
	t.Parallel()
	def := config{Address: "localhost:7233", Namespace: "default"}
	got := signalCommand(def, "s1", workflows.Approval{CallID: "call_1", Decision: "approve"})
	require.Equal(t, `temporal workflow signal --workflow-id s1 --name approval --input '{"call_id":"call_1","decision":"approve"}'`, got)

	other := config{Address: "t.example:7233", Namespace: "prod"}
	got = signalCommand(other, "s 2", workflows.Approval{CallID: "c'1", Decision: "deny", Feedback: "no"})
	require.Equal(t, `temporal workflow signal --address t.example:7233 --namespace prod --workflow-id 's 2' --name approval --input '{"call_id":"c'\''1","decision":"deny","feedback":"no"}'`, got)
}

// TestSignalCommandIsValidShell checks the quoting by letting a shell split
// the command and comparing the JSON it would pass.
func TestSignalCommandIsValidShell(t *testing.T) {
	t.Parallel()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	cmd := signalCommand(config{}, "s1", workflows.Approval{CallID: `it's "odd"`, Decision: "approve"})
	script := `set -- ` + strings.TrimPrefix(cmd, "temporal workflow signal ") + `; while [ "$1" != --input ]; do shift; done; printf %s "$2"`
	out, err := exec.Command(sh, "-c", script).Output()
	require.NoError(t, err)
	require.JSONEq(t, `{"call_id":"it's \"odd\"","decision":"approve"}`, string(out))
}

func TestRenderPending(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	args := `{"command":"` + strings.Repeat("z", 200) + `"}`
	renderPending(&b, config{Address: "localhost:7233", Namespace: "default"}, "s1", []workflows.PendingApproval{
		{CallID: "m1", ID: "c1", Digest: callref.Digest("shell", args), Tool: "shell", Arguments: args, Reason: "runs a shell command"},
		{CallID: "m2", ID: "c2", Digest: "0123456789abcdef0123", Tool: "write", Arguments: `{"path":"x"}`, Reason: "writes a file"},
	}, false)
	out := b.String()
	require.Contains(t, out, "CALL ID")
	require.Regexp(t, `c1\s+shell\s+`+regexp.QuoteMeta(args[:maxPendingArgs])+` … 134 more bytes hidden; see all: `+progName+` pending --full s1\s+runs a shell command`, out)
	require.Contains(t, out, `temporal workflow signal --workflow-id s1 --name approval --input '{"id":"c1","digest":"`+callref.Short(callref.Digest("shell", args))+`","decision":"approve"}'`)
	require.Contains(t, out, `temporal workflow signal --workflow-id s1 --name approval --input '{"id":"c2","digest":"0123456789abcdef","decision":"approve"}'`)
	require.Contains(t, out, `'{"id":"c2","digest":"0123456789abcdef","decision":"deny","feedback":"why"}'`)
	require.NotContains(t, out, "m1", "the model's ids are not shown")
	first, _, _ := strings.Cut(out[strings.Index(out, "\nc1 (shell):"):], "temporal workflow signal")
	d1 := callref.Short(callref.Digest("shell", args))
	require.Contains(t, first, "  approve: "+progName+" approve s1 c1 --digest "+d1+"\n  deny:    "+progName+" deny s1 c1 --digest "+d1+" --feedback 'why'\n",
		"each call leads with the longrun commands, approve and deny, before the signals")

	b.Reset()
	renderPending(&b, config{}, "s1", nil, false)
	require.Equal(t, "no tool calls are waiting for approval in s1\n", b.String())
}

func TestRenderStatus(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	renderStatus(&b, "s1", workflows.Status{
		Phase: workflows.PhaseWaitingApproval, Turn: 3, MaxTurns: 50, Model: "m1",
		Usage:            conversation.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120},
		PendingApprovals: 1, LastError: "model timed out", Rejected: []string{`approval "cX": unknown call id`},
	}, nil)
	out := b.String()
	for _, want := range []string{"phase              waiting-approval", "turn               3/50", "model              m1",
		"tokens             120 (prompt 100, completion 20)", "last error         model timed out",
		"rejected signals:\n  approval \"cX\": unknown call id", "longrun pending s1"} {
		require.Contains(t, out, want)
	}
}

func TestRenderResult(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	renderResult(&b, workflows.SessionResult{Status: "completed", FinalText: "All done.\n", Turns: 4, Usage: conversation.Usage{TotalTokens: 9}})
	require.Equal(t, "status  completed\nturns   4\ntokens  9 (prompt 0, completion 0)\n\nAll done.\n", b.String())

	b.Reset()
	renderResult(&b, workflows.SessionResult{Status: "completed", Branch: "longrun/s1", Commit: "0123456789abcdef"})
	require.Contains(t, b.String(), "branch  longrun/s1 (commit 0123456789ab; "+progName+" diff, apply or discard it)")
}

func TestSummaryLine(t *testing.T) {
	t.Parallel()
	require.Equal(t, "fix the bug", summaryLine("\n  fix the bug  \nin main.go"))
	require.Len(t, []rune(summaryLine(strings.Repeat("w", 200))), maxSummaryRunes)
	require.Equal(t, "", summaryLine(" \n "))
}

func TestStaticDetails(t *testing.T) {
	t.Parallel()
	d := staticDetails(workflows.SessionInput{Model: "m1", WorkDir: "proj"})
	require.Contains(t, d, "**model:** m1")
	require.Contains(t, d, "**workdir:** proj")
	require.Contains(t, d, fmt.Sprintf("%d (default)", workflows.DefaultMaxTurns))
	require.Contains(t, d, "**waiting calls:** open the **User Metadata** tab", "the details atop every tab say where the waiting calls are")
	d = staticDetails(workflows.SessionInput{})
	require.Contains(t, d, "(worker default)")
	require.Contains(t, d, "(workspace root)")
}

func TestRenderUsageShowsCachedReasoningAndCost(t *testing.T) {
	t.Parallel()
	require.Equal(t, "120 (prompt 100, completion 20)", renderUsage(conversation.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120}))
	require.Equal(t, "120 (prompt 100, completion 20, 80 of the prompt cached, 5 of the completion reasoning), ~$0.0012",
		renderUsage(conversation.Usage{PromptTokens: 100, CompletionTokens: 20, TotalTokens: 120, CachedTokens: 80, ReasoningTokens: 5, CostUSD: 0.00123}))
}

func TestRenderChangesInStatusAndResult(t *testing.T) {
	t.Parallel()
	st := &checkout.Stat{Files: 3, Insertions: 10, Deletions: 2, Paths: []string{"a.go", "b.go"}, Control: []string{"AGENTS.md"}}
	var b bytes.Buffer
	renderStatus(&b, "s1", workflows.Status{Phase: workflows.PhaseRunning, Changes: st}, nil)
	require.Contains(t, b.String(), "changes            3 files changed, +10 -2\n")
	require.Contains(t, b.String(), "files              a.go, b.go and 1 more\n")
	require.Contains(t, b.String(), "left out           AGENTS.md (control files: not on the branch)\n")

	b.Reset()
	renderResult(&b, workflows.SessionResult{Status: "completed", Branch: "longrun/s1", Commit: "0123456789abcdef",
		Changes: &checkout.Stat{Files: 1, Insertions: 1, Paths: []string{"a.go"}}, LeftOut: []string{".longrun/permissions.json"}})
	require.Contains(t, b.String(), "changes   1 file changed, +1 -0\n")
	require.Contains(t, b.String(), "left out  .longrun/permissions.json")
}

// --json is read on terminals too: bidi, zero-width and C1 characters are
// escaped (the decoded value is the same), C0 ones already are.
func TestJSONOutputEscapesHiddenCharacters(t *testing.T) {
	t.Parallel()
	p := []workflows.PendingApproval{{CallID: "c1", Tool: "shell", Arguments: "{\"command\":\"ls \u202e\u200b\u009b2J\x1b[2J\"}"}}
	f := &fakeClient{query: pendingQuery(p)}
	code, stdout, stderr := runFake(t, f, "--json", "pending", "s1")
	require.Equal(t, exitOK, code, stderr)
	for _, raw := range []string{"\u202e", "\u200b", "\u009b", "\x1b"} {
		require.NotContains(t, stdout, raw)
	}
	var back []workflows.PendingApproval
	require.NoError(t, json.Unmarshal([]byte(stdout), &back))
	require.Equal(t, p, back)
}
