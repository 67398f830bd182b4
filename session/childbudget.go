package session

import (
	"fmt"

	"github.com/longrun/longrun/conversation"
)

// Grant is the share of a session's budgets one sub-agent may spend: its
// token_budget and cost_budget_usd (0: none, as for the session).
type Grant struct {
	Tokens  int64
	CostUSD float64
}

// Add is g with o added.
func (g Grant) Add(o Grant) Grant { return Grant{g.Tokens + o.Tokens, g.CostUSD + o.CostUSD} }

// Sub is g with o taken away.
func (g Grant) Sub(o Grant) Grant { return Grant{g.Tokens - o.Tokens, g.CostUSD - o.CostUSD} }

// ChildGrant is what a sub-agent started now may spend: what each of the
// session's budgets has left after the session's own usage (which holds
// its finished children's) and the grants of the children still running
// (out), so children running side by side cannot together spend more than
// the session has. A budget the session does not have is none for the
// child too. When a budget has nothing left, no child starts: refusal
// says why, for the model.
func (l Limits) ChildGrant(used conversation.Usage, out Grant) (g Grant, refusal string) {
	if b := l.TokenBudget; b > 0 {
		g.Tokens = b - used.TotalTokens - out.Tokens
		if g.Tokens <= 0 {
			return Grant{}, fmt.Sprintf("this session's token_budget (%d) is spent: %d tokens used, %d granted to sub-agents still running", b, used.TotalTokens, out.Tokens)
		}
	}
	if b := l.CostBudgetUSD; b > 0 {
		g.CostUSD = b - used.CostUSD - out.CostUSD
		if g.CostUSD <= 0 {
			return Grant{}, fmt.Sprintf("this session's cost_budget_usd ($%.4f) is spent: $%.4f used, $%.4f granted to sub-agents still running", b, used.CostUSD, out.CostUSD)
		}
	}
	return g, ""
}
