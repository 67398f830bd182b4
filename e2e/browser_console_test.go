package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/codec"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// TestBrowserConsoleApprovesEdit (issue 19, must-show 3): a person opens
// the inbox of `starter console` from its login URL in headless Chromium,
// sees the waiting edit as a diff, opens the session, approves, and
// watches the session go on to its end, with the real server, worker and
// scripted model.
func TestBrowserConsoleApprovesEdit(t *testing.T) {
	t.Parallel()
	chromium := needChromium(t)
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_read", Name: "read", Arguments: `{"path": "hello.txt"}`}),
		sm.Tools(sm.Call{ID: "c_edit", Name: "edit", Arguments: `{"path": "hello.txt", "old_string": "hello world", "new_string": "hello longrun"}`}),
		sm.Text("edited hello.txt"),
	)
	require.NoError(t, os.WriteFile(filepath.Join(e.workspace, "hello.txt"), []byte("first line\nhello world\nlast line\n"), 0o644))
	id := "e2e-console-approve-" + randHex(4)
	out, err := e.starter("start", "--in-place", "--id", id, "say hello to longrun") // the test reads hello.txt in the workspace
	require.NoError(t, err, out)
	waitPending(t, id, 1)

	con := startConsole(t, e)
	b := uiPage{t: t, ctx: newBrowser(t, chromium), art: artifactDir(t)}
	con.login(b)

	// The inbox lists the session with its call as a diff. Sessions of
	// other tests may wait in the same namespace: look inside ours.
	// The call shows under the session's id for it: c_read was c1.
	call := fmt.Sprintf(`article[data-session=%q] section[data-call="c2"]`, id)
	b.waitSelectorText(call, "edit", "[c2]", "asks because:", "--- a/hello.txt", "-hello world", "+hello longrun")
	b.screenshot("inbox")

	// The session page: the same call, and the conversation so far.
	b.click(fmt.Sprintf(`article[data-session=%q] h2 a`, id))
	b.waitSelectorText(`#pending section[data-call="c2"]`, "-hello world", "+hello longrun")
	b.waitSelectorText("#live", "waiting-approval", "say hello to longrun", "[c1]")
	b.screenshot("session-waiting")

	b.click(`#pending section[data-call="c2"] button.approve`)
	b.waitText("approved c2 in " + id)
	// The live part follows the session to its end: the edit's result,
	// the model's last words, completed.
	b.waitSelectorText("#live", "completed", "edited hello.txt")
	b.screenshot("session-completed")
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)
	got, err := os.ReadFile(filepath.Join(e.workspace, "hello.txt"))
	require.NoError(t, err)
	require.Equal(t, "first line\nhello longrun\nlast line\n", string(got))
	e.checkSession(id)
	require.Contains(t, con.logs.String(), "approved c2 in "+id, "the console's log names each decision")
}

// TestBrowserConsoleDeniesWithFeedback (issue 19, must-show 3): a denial
// typed in the inbox reaches the model as the call's result. The worker
// encrypts its payloads: the console, given the same keys, shows the call
// and sends the feedback encrypted, so history holds no plaintext of it.
func TestBrowserConsoleDeniesWithFeedback(t *testing.T) {
	t.Parallel()
	chromium := needChromium(t)
	keysFile := writeKeys(t, keyLine(t, "console1"))
	e := newEnvWorkerEnv(t, []string{codec.EnvKeysFile + "=" + keysFile},
		sm.Tools(sm.Call{ID: "c_w", Name: "write", Arguments: `{"path": "notes.txt", "content": "notes\n"}`}),
		sm.Text("understood, docs/ it is"),
	)
	ec, keys := keyClient(t, keysFile)
	id := "e2e-console-deny-" + randHex(4)
	out, err := e.starter("--encryption-keys", keysFile, "start", "--in-place", "--id", id, "write some notes")
	require.NoError(t, err, out)
	waitFor(t, "the call to wait", 30*time.Second, func() bool {
		v, err := ec.QueryWorkflow(context.Background(), id, "", workflows.QueryPendingApprovals)
		var p []workflows.PendingApproval
		return err == nil && v.Get(&p) == nil && len(p) == 1
	})

	con := startConsole(t, e, "--encryption-keys", keysFile)
	b := uiPage{t: t, ctx: newBrowser(t, chromium), art: artifactDir(t)}
	con.login(b)
	call := fmt.Sprintf(`article[data-session=%q] section[data-call="c1"]`, id)
	b.waitSelectorText(call, "write", "notes.txt")

	// Deny without feedback first: refused, nothing sent, the call still waits.
	b.click(call + ` button.deny`)
	b.waitText("write feedback telling the model why")
	b.waitSelectorText(call, "notes.txt")

	feedback := "put notes under docs/ instead " + randHex(4)
	b.typeInto(call+` textarea[name=feedback]`, feedback)
	b.screenshot("inbox-feedback")
	b.click(call + ` button.deny`)
	b.waitText("denied c1 in " + id)
	b.screenshot("inbox-denied")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var res workflows.SessionResult
	require.NoError(t, ec.GetWorkflow(ctx, id, "").Get(ctx, &res))
	require.Equal(t, workflows.ResultCompleted, res.Status)
	reqs := e.model.Requests()
	require.Len(t, reqs, 2)
	sent, ok := reqs[1].LastToolResult("c_w")
	require.True(t, ok, "the model's second request carries the denied call's result")
	require.Contains(t, sent, feedback)
	require.NoFileExists(t, filepath.Join(e.workspace, "notes.txt"))

	h := history(t, id)
	require.False(t, bytes.Contains(decodedPayloads(h), []byte(feedback)), "the feedback is in history in plaintext")
	require.True(t, bytes.Contains(decodedPayloads(decodeHistory(t, h, keys)), []byte(feedback)), "the feedback, decrypted, is in history")
	require.Contains(t, queryConversation(t, ec, id), feedback)
}

// console is a running `starter console` for one test.
type console struct {
	url, token string
	logs       *syncBuffer
}

// startConsole runs `starter console` with a token file and args,
// against the test's server, until the test ends, and returns it once it
// answers.
func startConsole(t *testing.T, e *env, args ...string) console {
	t.Helper()
	port, err := freeLoopbackPort()
	require.NoError(t, err)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	token := randHex(16)
	tokenFile := filepath.Join(t.TempDir(), "console-token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(token+"\n"), 0o600))
	cmd := exec.Command(filepath.Join(binDir, "starter"), append([]string{"console", "--listen", addr, "--token-file", tokenFile}, args...)...)
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+temporalAddr, "LONGRUN_TASK_QUEUE="+e.taskQueue)
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		stopProcess(cmd)
		if t.Failed() {
			t.Logf("console log:\n%s", logs.String())
		}
	})
	waitFor(t, "the console to listen", 20*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	// The console prints where to log in after it listens: the line may
	// come a moment after the port answers.
	waitFor(t, "the console to say where to log in", 10*time.Second, func() bool {
		return strings.Contains(logs.String(), "/login and give the token in "+tokenFile)
	})
	return console{url: "http://" + addr, token: token, logs: logs}
}

// login opens the login URL as a person pastes it: the page's script
// posts the token from the fragment and lands on the inbox.
func (c console) login(b uiPage) {
	b.t.Helper()
	b.open(c.url + "/login#token=" + c.token)
	b.waitText("Waiting for you")
}

// waitSelectorText waits until the first element matching sel shows
// every want.
func (p uiPage) waitSelectorText(sel string, want ...string) {
	p.t.Helper()
	el := fmt.Sprintf(`document.querySelector(%s)`, jsString(sel))
	p.until(fmt.Sprintf("%s to show %q", sel, want),
		fmt.Sprintf(`((e) => !!e && %s.every(w => e.innerText.includes(w)))(%s)`, jsString(want), el),
		fmt.Sprintf(`((e) => e ? e.innerText : "(no %s yet)\n" + document.body.innerText)(%s)`, strings.ReplaceAll(sel, `"`, `'`), el))
}

// waitText is waitBodyText across page loads.
func (p uiPage) waitText(want ...string) {
	p.t.Helper()
	p.until(fmt.Sprintf("page text %q", want),
		fmt.Sprintf(`%s.every(w => document.body && document.body.innerText.includes(w))`, jsString(want)), bodyText)
}

// until is poll for pages that navigate while it waits (a form post and
// its redirect, the console's reload when the waiting calls change):
// chromedp's Poll fails when the page it evaluates in goes away, so this
// evaluates afresh twice a second and takes an error as "not yet".
func (p uiPage) until(what, predicate, shown string) {
	p.t.Helper()
	deadline := time.Now().Add(browserTimeout)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](predicate))
		cancel()
		if err == nil && ok {
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	p.poll(what, predicate, shown) // once more, failing with what the page shows
}

// click clicks the element sel once it is there.
func (p uiPage) click(sel string) {
	p.t.Helper()
	p.until("an element "+sel, fmt.Sprintf(`!!document.querySelector(%s)`, jsString(sel)), bodyText)
	ctx, cancel := context.WithTimeout(p.ctx, browserTimeout)
	defer cancel()
	require.NoError(p.t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel), chromedp.NodeVisible)), "click %s", sel)
}

// typeInto types text into the field sel, as a person would.
func (p uiPage) typeInto(sel, text string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserTimeout)
	defer cancel()
	require.NoError(p.t, chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(sel), text, chromedp.NodeVisible)), "type into %s", sel)
}
