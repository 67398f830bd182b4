package session

import (
	"fmt"

	"github.com/longrun/longrun/conversation"
)

// Defaults for limits a session's input leaves at 0.
const (
	// DefaultMaxTurns is high because a background agent must not stop at
	// turn 50; a token or cost budget is the better brake.
	DefaultMaxTurns = 10000
	// DefaultMaxParallelTools is enough for a model that fans out reads,
	// few enough that a reply of a hundred calls does not flood the worker.
	DefaultMaxParallelTools = 10
	// DefaultContinueAsNewTurns is how many turns one run takes at most
	// before the session continues as new, when the server has not
	// suggested it earlier (it does at 4,096 events or 4 MiB of history).
	DefaultContinueAsNewTurns = 500
	// DefaultCompactKeepTurns is how many recent turns a compaction keeps
	// as they are.
	DefaultCompactKeepTurns = 4
)

// Limits are the session's bounds, as its input sets them (0: the
// default, or none for the budgets and the window).
type Limits struct {
	MaxTurns           int
	TokenBudget        int64
	CostBudgetUSD      float64
	MaxParallelTools   int
	ContinueAsNewTurns int
	ContextWindow      int
	CompactKeepTurns   int
}

// Turns is the most model calls the session makes.
func (l Limits) Turns() int { return orDefault(l.MaxTurns, DefaultMaxTurns) }

// Parallel is the batch pool's size.
func (l Limits) Parallel() int { return orDefault(l.MaxParallelTools, DefaultMaxParallelTools) }

// RunTurns is how many turns one run takes before it continues as new.
func (l Limits) RunTurns() int { return orDefault(l.ContinueAsNewTurns, DefaultContinueAsNewTurns) }

// KeepTurns is how many recent turns a compaction keeps verbatim.
func (l Limits) KeepTurns() int { return orDefault(l.CompactKeepTurns, DefaultCompactKeepTurns) }

func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// Stop is why the session must not call the model again.
type Stop int

// Stops.
const (
	StopNone     Stop = iota
	StopMaxTurns      // max_turns model calls made
	StopBudget        // token_budget or cost_budget_usd reached
)

// CheckStop runs before each model call: the session stops at the first
// call past a limit, never in the middle of a turn's tool calls. text
// says what was spent.
func (l Limits) CheckStop(turn int, usage conversation.Usage) (Stop, string) {
	if turn >= l.Turns() {
		return StopMaxTurns, fmt.Sprintf("stopped after %d model turns (max_turns)", l.Turns())
	}
	if b := l.TokenBudget; b > 0 && usage.TotalTokens >= b {
		return StopBudget, fmt.Sprintf("stopped after %d model turns: %d tokens used, token_budget is %d", turn, usage.TotalTokens, b)
	}
	if b := l.CostBudgetUSD; b > 0 && usage.CostUSD >= b {
		return StopBudget, fmt.Sprintf("stopped after %d model turns: $%.4f spent, cost_budget_usd is $%.4f", turn, usage.CostUSD, b)
	}
	return StopNone, ""
}

// MinRunTurnsCarryingAll is how many turns a run without a transcript
// takes before it follows the server's suggestion to continue as new.
const MinRunTurnsCarryingAll = 20

// ShouldSwitch reports whether the run should continue as new at the next
// safe point: it has had its turns (runTurns this run), or the server
// suggests it. Without a transcript (no head: the worker runs with
// --transcript off) the next run's input carries the whole conversation,
// so once that alone passes the server's threshold every run is suggested
// to switch at once, and switching each turn would only copy it again:
// such a run takes MinRunTurnsCarryingAll turns first.
func (l Limits) ShouldSwitch(runTurns int, suggested, hasHead bool) bool {
	if runTurns >= l.RunTurns() {
		return true
	}
	if !suggested {
		return false
	}
	return hasHead || runTurns >= MinRunTurnsCarryingAll
}

// compactAt is the share of the context window past which the next
// request compacts first: the reply needs room too.
const compactAt = 0.8

// EstimateTokens is what the next request will weigh: the latest call's
// tokens as the API counted them (last), plus what came since, at four
// bytes a token (the reply is counted twice: an estimate that errs on the
// safe side).
func EstimateTokens(last conversation.Usage, since []conversation.Message) int {
	n := 0
	for _, m := range since {
		if m.Result != nil && m.Result.ContentRef != "" {
			n += m.Result.ContentBytes // the model gets the whole text, not the preview
		} else {
			n += len(m.Content)
		}
		for _, c := range m.ToolCalls {
			n += len(c.Arguments) + len(c.Name)
		}
	}
	return int(last.TotalTokens) + n/4
}

// ShouldCompact reports whether a request of estimate tokens compacts
// first. A window of 0 is unknown: compact only when the model answers
// with a context-length error.
func (l Limits) ShouldCompact(estimate int) bool {
	return l.ContextWindow > 0 && estimate > int(compactAt*float64(l.ContextWindow))
}
