package session

import (
	"fmt"
	"strings"
	"time"

	"github.com/longrun/longrun/conversation"
)

// Answer is how a call ended when it did not run to a result of its own:
// what the model is told, and the result's reason. Each has one text, in
// the answers table, so every path that answers a call says it the same
// way.
type Answer int

// Answers.
const (
	AnswerUnknownTool Answer = iota
	AnswerUnknownAfterSwitch
	AnswerInvalidArguments
	AnswerDeniedByPolicy
	AnswerBlocked
	AnswerDenied
	AnswerTimeout
	AnswerInterruptedBeforeRun
	AnswerInterruptedWhileRunning
	AnswerCancelledBeforeRun
	AnswerCancelledWhileRunning
	AnswerWorkerLost
	AnswerFailed
)

// Facts are what an answer's text may quote.
type Facts struct {
	Tool     string        // the tool's name
	Tools    []string      // the tools the session has, sorted (unknown tool)
	Detail   string        // the validation error, the rule's reason or the error's message
	Feedback string        // a person's denial feedback
	Timeout  time.Duration // the approval timeout
	Waited   string        // what a call cancelled before it ran waited for
}

// answers is the table from an answer to its reason and text.
var answers = map[Answer]struct {
	reason conversation.Reason
	text   func(Facts) string
}{
	AnswerUnknownTool: {conversation.ReasonUnknownTool, func(f Facts) string {
		return fmt.Sprintf("unknown tool %q; available tools: %s", f.Tool, strings.Join(f.Tools, ", "))
	}},
	AnswerUnknownAfterSwitch: {conversation.ReasonUnknownTool, func(f Facts) string {
		return fmt.Sprintf("unknown tool %q after the session moved to a new run; it did not run", f.Tool)
	}},
	AnswerInvalidArguments: {conversation.ReasonInvalidArguments, func(f Facts) string {
		return f.Detail + ". Nothing ran; call the tool again with corrected arguments."
	}},
	AnswerDeniedByPolicy: {conversation.ReasonDeniedByPolicy, policyDenial},
	AnswerBlocked:        {conversation.ReasonBlocked, policyDenial},
	AnswerDenied: {conversation.ReasonDenied, func(f Facts) string {
		if strings.TrimSpace(f.Feedback) == "" {
			return "denied: the user denied this tool call and gave no feedback. It did not run; do not retry it unchanged."
		}
		return "denied: the user denied this tool call. It did not run. The user's feedback: " + f.Feedback
	}},
	AnswerTimeout: {conversation.ReasonTimeout, func(f Facts) string {
		return fmt.Sprintf("timeout: nobody decided on this call within the approval timeout (%s); it did not run. "+
			"This is not a denial: ask the user, or try again later.", f.Timeout)
	}},
	AnswerInterruptedBeforeRun: {conversation.ReasonInterrupted, func(Facts) string {
		return "interrupted by the user before it ran: it did not run. Do not treat it as done; wait for the user's next message."
	}},
	AnswerInterruptedWhileRunning: {conversation.ReasonInterrupted, func(Facts) string {
		return "interrupted by the user while running: the tool was stopped and may have had partial effects. Do not treat it as done; wait for the user's next message."
	}},
	AnswerCancelledBeforeRun: {conversation.ReasonCancelledBeforeRun, func(f Facts) string {
		return "cancelled before it ran: the session was cancelled while this call " + f.Waited + "; nothing ran."
	}},
	AnswerCancelledWhileRunning: {conversation.ReasonCancelledWhileRunning, func(Facts) string {
		return "cancelled while running: the session was cancelled while this tool ran; it was stopped and may have had partial effects."
	}},
	AnswerWorkerLost: {conversation.ReasonWorkerLost, func(f Facts) string {
		return fmt.Sprintf("the worker running this %s call was lost (%s); it may or may not have taken effect. Check the workspace before retrying.", f.Tool, f.Detail)
	}},
	AnswerFailed: {conversation.ReasonFailed, func(f Facts) string {
		return fmt.Sprintf("%s failed: %s", f.Tool, f.Detail)
	}},
}

func policyDenial(f Facts) string {
	return "denied: " + strings.TrimSuffix(f.Detail, ".") + ". It did not run; nobody was asked."
}

// Result is the call's result for answer a: an error result with the
// answer's reason and text.
func (a Answer) Result(f Facts) conversation.ToolResult {
	e := answers[a]
	return conversation.ToolResult{Content: e.text(f), IsError: true, Reason: e.reason}
}

// Reason is the result reason answer a carries.
func (a Answer) Reason() conversation.Reason { return answers[a].reason }
