package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/shared"
	"go.temporal.io/sdk/activity"

	"github.com/longrun/longrun/conversation"
	"github.com/longrun/longrun/guardian"
	"github.com/longrun/longrun/transcript"
)

// DefaultGuardianTimeout bounds one review when the worker sets none: past
// it the call goes to a person, as Codex's guardian does.
const DefaultGuardianTimeout = 90 * time.Second

// GuardianConfig is the worker's guardian: the reviewer's model and prompt
// and how long a review may take. Sessions choose the guardian
// (approval "guardian"); the worker owns what it is.
type GuardianConfig struct {
	// Model is LONGRUN_GUARDIAN_MODEL; empty: the session's model.
	Model string
	// Prompt is the reviewer's system prompt (guardian.md of the worker's
	// config directory); empty: guardian.DefaultPrompt.
	Prompt string
	// Timeout bounds one review (--guardian-timeout); 0:
	// DefaultGuardianTimeout.
	Timeout time.Duration
}

// ReviewCall asks the reviewer model about one call and returns its
// verdict. It never fails: a timeout, a failed model call or an answer
// that is not the fixed JSON format is a verdict to ask a person
// (guardian.Failed), so nothing here can approve by accident and the
// session is not held up by retries. The reviewer gets only its own
// system prompt and one user message with the evidence framed as
// untrusted data (guardian.UserMessage), and no tools.
func (a *Activities) ReviewCall(ctx context.Context, req guardian.Request) (guardian.Verdict, error) {
	model := firstNonEmpty(a.cfg.Guardian.Model, req.Model, a.cfg.Model.DefaultModel)
	if model == "" {
		return guardian.Failed(guardian.FailError, "no guardian model: set LONGRUN_GUARDIAN_MODEL or LONGRUN_MODEL on the worker"), nil
	}
	prompt := a.cfg.Guardian.Prompt
	if strings.TrimSpace(prompt) == "" {
		prompt = guardian.DefaultPrompt
	}
	timeout := a.cfg.Guardian.Timeout
	if timeout <= 0 {
		timeout = DefaultGuardianTimeout
	}
	if v, ok := guardian.Oversized(req); ok {
		return v, nil // the reviewer sees a call whole or not at all
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if req.Head != "" && a.cfg.Transcript != nil {
		// The conversation before the session's latest messages: without
		// it the reviewer would see only the call itself. A store that
		// cannot answer leaves the evidence short, not the review undone;
		// but the person's task is in it, and without the task no
		// reviewer decides: a person does.
		earlier, err := transcript.Load(rctx, a.cfg.Transcript, req.Head)
		if err == nil {
			req.Recent = guardian.WithEarlier(earlier, req.Recent)
			var orig []conversation.Message
			if orig, err = transcript.Expand(rctx, a.cfg.Transcript, earlier); err == nil {
				req.Task = guardian.TaskWithEarlier(orig, req.Task)
			}
		}
		if err != nil && activity.IsActivity(ctx) {
			activity.GetLogger(ctx).Warn("guardian: conversation not loaded", "head", req.Head, "error", err)
		}
	}
	if !slices.ContainsFunc(req.Task, func(e guardian.Entry) bool { return e.Role == guardian.RoleTask }) {
		return guardian.Failed(guardian.FailError, "the person's task could not be found for the guardian, so a person decides"), nil
	}
	stop := heartbeatEvery(rctx, ctx, 5*time.Second)
	defer stop()

	comp, err := a.client.Chat.Completions.New(rctx, openai.ChatCompletionNewParams{
		Model: shared.ChatModel(model),
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(prompt),
			openai.UserMessage(guardian.UserMessage(req)),
		},
	})
	var v guardian.Verdict
	switch {
	case err != nil && ctx.Err() != nil:
		return guardian.Verdict{}, ctx.Err() // cancelled: the session stopped waiting
	case err != nil && errors.Is(rctx.Err(), context.DeadlineExceeded):
		v = guardian.Failed(guardian.FailTimeout, fmt.Sprintf("the guardian did not answer within %s", timeout))
	case err != nil:
		v = guardian.Failed(guardian.FailError, fmt.Sprintf("the guardian's model call failed: %v", err))
	case len(comp.Choices) == 0:
		v = guardian.Failed(guardian.FailMalformed, "the guardian's reply has no choices")
	default:
		v = guardian.Parse(comp.Choices[0].Message.Content)
	}
	if err == nil {
		v.Usage = a.reviewUsage(model, comp)
	}
	v.Model = model
	return v, nil
}

// heartbeatEvery heartbeats on actx (the activity's context) until done
// ends or stop is called, so a lost worker is noticed by the heartbeat
// timeout and a cancel reaches the review.
func heartbeatEvery(done, actx context.Context, every time.Duration) (stop func()) {
	if !activity.IsActivity(actx) {
		return func() {}
	}
	quit := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done.Done():
				return
			case <-quit:
				return
			case <-t.C:
				activity.RecordHeartbeat(actx)
			}
		}
	}()
	return func() { close(quit) }
}

// reviewUsage is the review's token usage and estimated cost.
func (a *Activities) reviewUsage(model string, comp *openai.ChatCompletion) *conversation.Usage {
	u := conversation.Usage{PromptTokens: comp.Usage.PromptTokens, CompletionTokens: comp.Usage.CompletionTokens, TotalTokens: comp.Usage.TotalTokens}
	prices := a.cfg.Model.Prices
	if prices == nil {
		prices = DefaultPrices
	}
	if cost, ok := prices.Cost(comp.Model, u); ok {
		u.CostUSD = cost
	} else if cost, ok := prices.Cost(model, u); ok {
		u.CostUSD = cost
	}
	return &u
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}
