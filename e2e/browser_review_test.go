package e2e

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/checkout"
	"github.com/longrun/longrun/notify"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// TestBrowserConsoleReviewsFinishedSession (issue 29, must-shows 2 and
// 3): a person reviews finished sessions in the console, in headless
// Chromium, with the real server, worker, sandbox and git. The page of a
// finished session names what it was asked, its repository and branch,
// lists the changed files and shows the diff; Apply brings the change
// into the person's checkout (the code of `longrun apply`); a second
// session's Apply, which now conflicts, is refused and changes nothing;
// Discard removes its branch.
func TestBrowserConsoleReviewsFinishedSession(t *testing.T) {
	t.Parallel()
	chromium := needChromium(t)
	words := []string{"bonjour", "hola"}
	script := map[string][]sm.Reply{}
	for _, w := range words {
		script["say "+w] = []sm.Reply{
			sm.Tools(isoShell("c1", fmt.Sprintf("printf '%s\\n' > greeting.txt", w))),
			sm.Text("Greeting is now " + w),
		}
	}
	// The worker notifies a webhook: the completed notification names
	// the task, the repository, the branch, its changes and the review
	// commands.
	recv := &webhookReceiver{}
	hook := httptest.NewServer(recv)
	t.Cleanup(hook.Close)
	e := isolationEnv(t, func(string) map[string][]sm.Reply { return script }, "--notify", hook.URL+"/hook/tok-review")
	ids := make([]string, len(words))
	for i, w := range words {
		ids[i] = "e2e-review-" + w + "-" + randHex(3)
		// A hostile-looking task: the page must show it as text.
		out, err := e.starter("start", "--id", ids[i], "--profile", "auto", "say "+w+" <b>in bold</b>")
		require.NoError(t, err, out)
	}
	for _, id := range ids {
		r := result(t, id)
		require.Equal(t, workflows.ResultCompleted, r.Status, r.Error)
	}
	var done notify.Body
	waitFor(t, "the completed notification", 60*time.Second, func() bool {
		n := recv.of("/hook", ids[0], "completed")
		return len(n) == 1 && json.Unmarshal(n[0].body, &done) == nil
	})
	require.Equal(t, "say bonjour <b>in bold</b>", done.Task)
	require.Equal(t, e.workspace, done.Repository)
	require.Equal(t, checkout.Branch(ids[0]), done.Branch)
	require.NotNil(t, done.Changes)
	require.Equal(t, []string{"greeting.txt"}, done.Changes.Paths)
	require.Contains(t, done.Text, `Asked: "say bonjour <b>in bold</b>"; repository `+e.workspace+"; branch "+checkout.Branch(ids[0])+": 1 file changed, +1 -1.")
	require.NotNil(t, done.Review)
	require.Equal(t, "longrun --address "+temporalAddr+" diff "+ids[0], done.Review.Diff)
	require.Equal(t, "longrun --address "+temporalAddr+" apply "+ids[0], done.Review.Apply)

	con := startConsole(t, e)
	art := t.TempDir() // the test's own; LONGRUN_ARTIFACTS keeps them
	if os.Getenv("LONGRUN_ARTIFACTS") != "" {
		art = artifactDir(t)
	}
	b := uiPage{t: t, ctx: newBrowser(t, chromium), art: art}
	con.login(b)

	// The first session's page: task, repository, branch, files, diff.
	b.open(con.url + "/session?id=" + ids[0])
	b.waitSelectorText(".where", "asked: ", "say bonjour <b>in bold</b>", "repository "+e.workspace, "branch "+checkout.Branch(ids[0]))
	b.waitSelectorText("#review", "1 file(s) changed", "greeting.txt", "-hello", "+bonjour", "Apply to "+e.workspace, "Discard the branch")
	b.waitSelectorText("#live", "completed", "Greeting is now bonjour")
	b.screenshot("finished-session")
	require.FileExists(t, filepath.Join(art, "finished-session.png"))
	b.mustNotMatch("#review b, .where b", "the task's markup is shown as text, never made markup")

	b.click("#review form.apply button")
	b.waitText("applied the changes of session " + ids[0] + " (branch " + checkout.Branch(ids[0]) + ") to " + e.workspace)
	b.screenshot("applied")
	got, err := os.ReadFile(filepath.Join(e.workspace, "greeting.txt"))
	require.NoError(t, err)
	require.Equal(t, "bonjour\n", string(got), "Apply changed the person's checkout")

	// The second session's change now conflicts: refused, nothing changed.
	b.open(con.url + "/session?id=" + ids[1])
	b.waitSelectorText("#review", "+hola")
	b.click("#review form.apply button")
	b.waitText("do not apply to "+e.workspace, "nothing was changed")
	b.screenshot("apply-refused")
	got, err = os.ReadFile(filepath.Join(e.workspace, "greeting.txt"))
	require.NoError(t, err)
	require.Equal(t, "bonjour\n", string(got), "a refused Apply changes nothing")

	require.Contains(t, gitOut(t, e.workspace, "branch", "--list"), checkout.Branch(ids[1]))
	b.click("#review form.discard button")
	b.waitText("discarded session " + ids[1] + ": branch " + checkout.Branch(ids[1]))
	b.screenshot("discarded")
	require.NotContains(t, gitOut(t, e.workspace, "branch", "--list"), checkout.Branch(ids[1]), "Discard removed the branch")
	require.Contains(t, gitOut(t, e.workspace, "branch", "--list"), checkout.Branch(ids[0]), "only the discarded branch goes")
	require.Contains(t, con.logs.String(), "applied the changes of session "+ids[0], "the console's log names each action")
}

// mustNotMatch fails when an element matches sel.
func (p uiPage) mustNotMatch(sel, why string) {
	p.t.Helper()
	p.until("no element "+sel+" ("+why+")", fmt.Sprintf(`!document.querySelector(%s)`, jsString(sel)), bodyText)
}
