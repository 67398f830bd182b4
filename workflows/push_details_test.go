package workflows

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	sdkpb "go.temporal.io/api/sdk/v1"
	"go.temporal.io/sdk/temporal"

	"github.com/longrun/longrun/activities"
	"github.com/longrun/longrun/notify"
	"github.com/longrun/longrun/session"
	"github.com/longrun/longrun/tools"
)

// The Web UI's details link the session's pull request, and show a URL
// the forge answered that is not a web URL, or would forge Markdown, as
// inert text on one line; a failed publish says why.
func TestDetailsShowThePullRequestInert(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, url, want string }{
		{"a web URL is a link", "https://forge.test/acme/app/pull/7", "\n**pull request:** [https://forge.test/acme/app/pull/7](https://forge.test/acme/app/pull/7)\n"},
		{"javascript is text", "javascript:alert(1)", "\n**pull request:** javascript:alert(1)\n"},
		{"a newline makes no line", "https://x/)\n# Approve", "\n**pull request:** https://x/) ↵ \\# Approve\n"},
		{"controls are visible", "https://x/\x1b]8;;http://evil/\x07ok\r", "\n**pull request:** https://x/\\\\x1b\\]8;;http://evil/\\\\x07ok\n"},
		{"a ) cannot end the link", "https://x/)[Approve](javascript:alert(1))",
			"\n**pull request:** [https://x/)\\[Approve\\](javascript:alert(1))](https://x/%29%5BApprove%5D%28javascript:alert%281%29%29)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := &driver{pub: publisher{phase: PhaseDone}, workflowID: "s1", limits: SessionInput{MaxTurns: 10}.limits(), State: session.State{PullRequest: tc.url}}
			d := s.details()
			require.Contains(t, d, tc.want)
			for _, l := range strings.Split(d, "\n") {
				require.False(t, strings.HasPrefix(l, "#"), "a line of the forge's: %q", l)
			}
			require.NotRegexp(t, `(^|[^\\])\]\(javascript:`, d, "no javascript link")
			require.NotContains(t, d, "push error")
		})
	}
	s := &driver{pub: publisher{phase: PhaseDone}, workflowID: "s1", limits: SessionInput{MaxTurns: 10}.limits(), State: session.State{PushError: "the forge refused: 401 *Bad* credentials\n# ok"}}
	d := s.details()
	require.Contains(t, d, "\n**push error:** the forge refused: 401 \\*Bad\\* credentials ↵ \\# ok\n")
	require.NotContains(t, d, "pull request")
}

// currentDetails is what the Web UI shows as the finished session's
// current details, through the query it asks.
func currentDetails(t *testing.T, h *harness) string {
	t.Helper()
	v, err := h.env.QueryWorkflow("__temporal_workflow_metadata")
	require.NoError(t, err)
	var md sdkpb.WorkflowMetadata
	require.NoError(t, v.Get(&md))
	return md.GetCurrentDetails()
}

// The end notification carries the pull request's URL the push got, or
// why the push failed.
func TestEndNotificationCarriesThePullRequest(t *testing.T) {
	t.Parallel()
	for _, refused := range []bool{false, true} {
		h := newHarnessWith(t, activities.WorkspaceConfig{Notify: true}, []activities.ModelResponse{
			toolReply(call("w1", "write", `{"path":"a","content":"x"}`)),
			textReply("done"),
		}, func(_ context.Context, r activities.ToolRequest) (tools.Result, error) {
			return tools.Result{Content: "ok"}, nil
		})
		var n notified
		n.mock(h, false)
		h.env.OnActivity(a.CloseCheckout, mock.Anything, mock.Anything).Return(activities.CloseCheckoutResult{Commit: "c0ffee", PushDue: true}, nil)
		h.env.OnActivity(a.PushBranch, mock.Anything, mock.Anything).Return(
			func(_ context.Context, r activities.PushRequest) (activities.PushResult, error) {
				if refused {
					return activities.PushResult{}, temporal.NewNonRetryableApplicationError("the forge refused: 401 Bad credentials", activities.ErrTypePushRefused, nil)
				}
				return activities.PushResult{URL: "https://forge.test/acme/app/pull/7", Number: 7, Commit: "c0ffee"}, nil
			})
		h.env.ExecuteWorkflow(WorkflowType, SessionInput{Prompt: "go", Profile: "auto", Base: testCheckoutBase})
		require.NoError(t, h.env.GetWorkflowError())
		require.Equal(t, []string{notify.EventCompleted}, n.kinds())
		end := n.events[0]
		if refused {
			require.Empty(t, end.PullRequest)
			require.Contains(t, end.PushError, "Bad credentials")
			continue
		}
		require.Equal(t, "https://forge.test/acme/app/pull/7", end.PullRequest)
		require.Empty(t, end.PushError)
	}
}
