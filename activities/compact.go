package activities

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities/contract"
	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/transcript"
)

// CompactRequest and CompactResult are Compact's input and output: see
// package contract.
type (
	CompactRequest = contract.CompactRequest
	CompactResult  = contract.CompactResult
)

// SummaryPrefix opens the summary message a compaction puts in place of
// the older messages; the model reads it as the user's recap.
const SummaryPrefix = "Summary of the earlier conversation (compacted; the full text is kept in the transcript):\n\n"

// summaryInstruction is the system message of the summary request. It is
// written for the agent that continues from the summary: what it needs to
// go on without the originals, and nothing else.
const summaryInstruction = `You are compacting the conversation of a coding agent so that it can keep working within its context window. The agent will continue from your summary plus its most recent turns, which it still sees in full; the turns below will be gone from its view.

Write concise notes for the agent, under these headings:
- Task: what the user asked for, in their words where it matters, and any later changes of mind.
- Done: what the agent has done and found so far.
- Files: each file created, changed or read that still matters, and its current state.
- Decisions: choices made and why, constraints and preferences to respect.
- Open problems: errors not yet fixed, failing tests, unanswered questions.
- Next: what the user wants next and what the agent was about to do.

Keep exact names: paths, identifiers, commands, error messages. Do not invent anything; leave out small talk and anything already settled that does not affect the work ahead. Reply with the summary only.`

// Limits of the text the summary request renders. A tool result or a
// call's arguments is cut to its first resultLimit or argumentsLimit
// characters: the summary needs what happened, not every line of output.
// If the rendering still exceeds summaryInputLimit (about 50k tokens, which
// fits every model we price), the limits are halved, and past the smallest
// the middle messages are left out.
const (
	resultLimit       = 3000
	argumentsLimit    = 1500
	minResultLimit    = 200
	summaryInputLimit = 200_000
)

// Compact shrinks the conversation Head plus Messages: the leading system
// messages stay, the latest KeepTurns turns stay as they are, and what is
// between becomes one summary written by the model. Both the replaced
// messages and the new conversation are stored in the transcript; the
// summary's Compacted names the replaced ones, so transcript.Expand shows
// the originals. Replaced 0 means nothing was older than the kept turns;
// Head is then the stored conversation, unchanged.
func (a *Activities) Compact(ctx context.Context, req CompactRequest) (CompactResult, error) {
	if a.cfg.Transcript == nil {
		return CompactResult{}, temporal.NewNonRetryableApplicationError(
			"compaction needs a transcript store, and this worker keeps no transcript (started with --transcript off)",
			ErrTypeTranscriptUnavailable, nil)
	}
	prior, err := transcript.Load(ctx, a.cfg.Transcript, req.Head)
	if err != nil {
		return CompactResult{}, storeError("load the conversation", err)
	}
	req.Messages, err = transcript.Resolve(ctx, a.cfg.Transcript, req.Messages)
	if err != nil {
		return CompactResult{}, storeError("read offloaded tool results", err)
	}
	full := append(prior, req.Messages...)
	nsys := 0
	for nsys < len(full) && full[nsys].Role == conversation.RoleSystem {
		nsys++
	}
	cut := cutPoint(full, nsys, req.KeepTurns)
	if cut == nsys {
		head, err := transcript.Append(ctx, a.cfg.Transcript, req.Head, req.Messages)
		if err != nil {
			return CompactResult{}, storeError("store the conversation", err)
		}
		return CompactResult{Head: head, Kept: len(full), EstimatedTokens: estimateTokens(full)}, nil
	}
	prefix, kept := full[nsys:cut], full[cut:]

	model := req.Model
	if model == "" {
		model = a.cfg.Model.DefaultModel
	}
	if model == "" {
		return CompactResult{}, temporal.NewNonRetryableApplicationError(
			"no model: start the session with a model or set LONGRUN_MODEL on the worker", ErrTypeNoModel, nil)
	}
	// Stored first, so the summary never names a reference that is not
	// there; a retry stores the same bytes again, which is a no-op.
	prefixHead, err := transcript.Append(ctx, a.cfg.Transcript, "", prefix)
	if err != nil {
		return CompactResult{}, storeError("store the replaced messages", err)
	}
	resp, err := a.summarise(ctx, model, prefix)
	if err != nil {
		return CompactResult{}, err
	}
	summary := strings.TrimSpace(resp.Message.Content)
	if summary == "" {
		return CompactResult{}, badReply(errors.New("the summary is empty"), attempt(ctx))
	}
	next := make([]conversation.Message, 0, nsys+1+len(kept))
	next = append(next, full[:nsys]...)
	next = append(next, conversation.Message{Role: conversation.RoleUser, Content: SummaryPrefix + summary, Compacted: prefixHead})
	next = append(next, kept...)
	head, err := transcript.Append(ctx, a.cfg.Transcript, "", next)
	if err != nil {
		return CompactResult{}, storeError("store the compacted conversation", err)
	}
	return CompactResult{
		Head:            head,
		Summary:         summary,
		Replaced:        len(prefix),
		Kept:            nsys + len(kept),
		Usage:           resp.Usage,
		EstimatedTokens: estimateTokens(next),
	}, nil
}

// cutPoint returns where the kept part of full begins; full[:nsys] are the
// leading system messages and full[nsys:cut] is what a summary replaces
// (nothing when cut is nsys). The kept part holds at least the last
// keepTurns turns (a turn begins at an assistant message) and the user
// messages that led into the first of them. The cut is at a user or
// assistant message with every tool call before it answered before it, so
// no call is separated from its result.
func cutPoint(full []conversation.Message, nsys, keepTurns int) int {
	t := len(full)
	if keepTurns > 0 {
		t = nsys // fewer turns than keepTurns: keep them all
		seen := 0
		for i := len(full) - 1; i >= nsys; i-- {
			if full[i].Role == conversation.RoleAssistant {
				if seen++; seen == keepTurns {
					t = i
					break
				}
			}
		}
	}
	for t > nsys && full[t-1].Role == conversation.RoleUser {
		t--
	}
	for c := t; c > nsys; c-- {
		if c < len(full) && full[c].Role != conversation.RoleUser && full[c].Role != conversation.RoleAssistant {
			continue
		}
		if conversation.CheckPairing(full[:c]) == nil {
			return c
		}
	}
	return nsys
}

// summarise asks the model, without tools and without streaming (nobody
// watches a summary being written), to summarise msgs.
func (a *Activities) summarise(ctx context.Context, model string, msgs []conversation.Message) (ModelResponse, error) {
	ask := "Summarise this conversation:\n\n" + renderForSummary(msgs)
	params := openai.ChatCompletionNewParams{
		Model: shared.ChatModel(model),
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(summaryInstruction),
			openai.UserMessage(ask),
		},
	}
	// Heartbeats let a cancel in and show what the call is doing.
	progress := startProgress(ctx, false)
	progress.mu.Lock()
	progress.content = fmt.Sprintf("summarising %d earlier messages", len(msgs))
	progress.mu.Unlock()
	defer progress.stop()
	if a.usesResponses(model) {
		// A model that speaks only the Responses API summarises there too.
		return a.callResponses(ctx, model, []conversation.Message{
			{Role: conversation.RoleSystem, Content: summaryInstruction},
			{Role: conversation.RoleUser, Content: ask},
		}, nil, progress)
	}
	comp, err := a.client.Chat.Completions.New(ctx, params)
	if err != nil {
		return ModelResponse{}, classify(err, attempt(ctx))
	}
	return a.response(model, comp, attempt(ctx))
}

// renderForSummary writes msgs as plain text within summaryInputLimit:
// tool output is cut first, then, if it must be, messages in the middle
// are left out (the start says what was asked, the end where things are).
func renderForSummary(msgs []conversation.Message) string {
	for limit := resultLimit; ; limit /= 2 {
		parts := make([]string, len(msgs))
		total := 0
		for i, m := range msgs {
			parts[i] = renderMessage(m, limit, max(limit/2, minResultLimit))
			total += len(parts[i]) + 1
		}
		if total <= summaryInputLimit {
			return strings.Join(parts, "\n")
		}
		if limit/2 >= minResultLimit {
			continue
		}
		head, tail := leaveOutMiddle(parts, summaryInputLimit)
		out := strings.Join(parts[:head], "\n")
		out += fmt.Sprintf("\n[... %d messages left out ...]\n", tail-head)
		return out + strings.Join(parts[tail:], "\n")
	}
}

// leaveOutMiddle picks parts[:head] and parts[tail:] that fit in budget,
// a quarter of it for the start and the rest for the end.
func leaveOutMiddle(parts []string, budget int) (head, tail int) {
	n := 0
	for head < len(parts) && n+len(parts[head])+1 <= budget/4 {
		n += len(parts[head]) + 1
		head++
	}
	tail = len(parts)
	for tail > head && n+len(parts[tail-1])+1 <= budget {
		n += len(parts[tail-1]) + 1
		tail--
	}
	return head, tail
}

func renderMessage(m conversation.Message, resultMax, argsMax int) string {
	var b strings.Builder
	switch m.Role {
	case conversation.RoleTool:
		name, reason := "", conversation.Reason("")
		if m.Result != nil {
			name, reason = m.Result.Name, m.Result.Reason
		}
		fmt.Fprintf(&b, "[tool result: %s, %s]\n%s\n", name, reason, cutText(m.Content, resultMax))
	default:
		fmt.Fprintf(&b, "[%s]\n", m.Role)
		if m.Content != "" {
			b.WriteString(m.Content)
			b.WriteString("\n")
		}
		for _, c := range m.ToolCalls {
			fmt.Fprintf(&b, "(calls %s %s)\n", c.Name, cutText(c.Arguments, argsMax))
		}
	}
	return b.String()
}

// cutText is the first n bytes of s or less, ending on a character
// boundary, followed by how much was cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + fmt.Sprintf("\n[... %d more bytes cut]", len(s)-i)
}

// estimateTokens is the size of msgs at four bytes a token, counting what
// the model reads: contents and call arguments.
func estimateTokens(msgs []conversation.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)
		for _, c := range m.ToolCalls {
			n += len(c.Arguments)
		}
	}
	return n / 4
}
