package main

import (
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	enumspb "go.temporal.io/api/enums/v1"

	"github.com/longrun/longrun/workflows"
)

// The session page names the session's pull request, running and
// finished: a link when the worker reported a web URL, its text
// otherwise, and never an href of another scheme; a failed publish says
// why.
func TestConsoleShowsThePullRequest(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, url, want string
		link            bool
	}{
		{"a web URL is a link", "https://forge.test/acme/app/pull/7", `<a href="https://forge.test/acme/app/pull/7" rel="noopener noreferrer">https://forge.test/acme/app/pull/7</a>`, true},
		{"javascript is text", "javascript:alert(1)", `<code>javascript:alert(1)</code> (not a web address: not linked)`, false},
		{"a newline and markup are text", "https://x/\")\n# Approve<script>", `<code>https://x/&#34;) ↵ # Approve&lt;script&gt;</code>`, false},
		{"controls are visible", "https://x/\x1b]8;;http://evil/\x07ok", `<code>https://x/\x1b]8;;http://evil/\x07ok</code>`, false},
		{"quotes stay in the href", `https://x/"onmouseover="alert(1)`, `<a href="https://x/%22onmouseover=%22alert%281%29" rel="noopener noreferrer">https://x/&#34;onmouseover=&#34;alert(1)</a>`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, done := range []bool{false, true} {
				f := consoleFake(t)
				base := f.query
				f.query = func(name string, n int) (any, error) {
					if name == workflows.QueryStatus {
						return workflows.Status{Phase: workflows.PhaseDone, Turn: 2, MaxTurns: 10, PullRequest: tc.url, PushError: "refused\n<b>x</b>"}, nil
					}
					return base(name, n)
				}
				if done {
					f.describe = func(int) (enumspb.WorkflowExecutionStatus, error) {
						return enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED, nil
					}
				}
				srv, _ := consoleServer(t, f, consoleAuthOptions{})
				code, _, body := do(t, browser(t), "GET", srv.URL+"/session?id=s1", nil, map[string]string{"Authorization": "Bearer tok-123"})
				require.Equal(t, http.StatusOK, code, body)
				require.Contains(t, body, tc.want)
				require.Equal(t, tc.link, strings.Contains(body, `rel="noopener noreferrer"`))
				require.NotContains(t, body, `href="javascript:`)
				require.NotContains(t, body, "\x1b")
				require.NotContains(t, body, "<script>")
				require.Contains(t, html.UnescapeString(body), "not published: refused ↵ <b>x</b>")
				require.NotContains(t, body, "<b>x</b>")
			}
		})
	}
}
