package session

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
)

func TestChildGrant(t *testing.T) {
	t.Parallel()
	used := conversation.Usage{TotalTokens: 100, CostUSD: 0.25}
	for _, tc := range []struct {
		name    string
		limits  Limits
		out     Grant
		want    Grant
		refusal string
	}{
		{name: "no budgets: none for the child", want: Grant{}},
		{name: "what is left", limits: Limits{TokenBudget: 500, CostBudgetUSD: 1}, want: Grant{Tokens: 400, CostUSD: 0.75}},
		{name: "minus the running siblings' grants", limits: Limits{TokenBudget: 500}, out: Grant{Tokens: 300}, want: Grant{Tokens: 100}},
		{name: "tokens spent", limits: Limits{TokenBudget: 500}, out: Grant{Tokens: 400},
			refusal: "this session's token_budget (500) is spent: 100 tokens used, 400 granted to sub-agents still running"},
		{name: "cost spent", limits: Limits{TokenBudget: 500, CostBudgetUSD: 0.25},
			refusal: "this session's cost_budget_usd ($0.2500) is spent: $0.2500 used, $0.0000 granted to sub-agents still running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			g, refusal := tc.limits.ChildGrant(used, tc.out)
			require.Equal(t, tc.refusal, refusal)
			require.InDelta(t, tc.want.CostUSD, g.CostUSD, 1e-9)
			require.Equal(t, tc.want.Tokens, g.Tokens)
		})
	}
	require.Equal(t, Grant{Tokens: 5, CostUSD: 1}, Grant{Tokens: 2}.Add(Grant{Tokens: 3, CostUSD: 1}))
	require.Equal(t, Grant{Tokens: 2}, Grant{Tokens: 5, CostUSD: 1}.Sub(Grant{Tokens: 3, CostUSD: 1}))
}
