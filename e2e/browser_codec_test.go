package e2e

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestBrowserUIDecodesThroughCodecServer (must-show 3): a session of an
// encrypting worker reads a file holding a marker; `starter codec-server`
// serves the keys with CORS for the Web UI's origin; the real Web UI in
// headless Chromium, with its codec endpoint set, shows the decrypted
// tool result, while the server holds only ciphertext (TestEncryptedPayloads).
func TestBrowserUIDecodesThroughCodecServer(t *testing.T) {
	t.Parallel()
	chromium := needChromium(t)
	if uiURL == "" || uiURL[:4] != "http" {
		t.Skipf("the devserver runs without its Web UI (ui=%q)", uiURL)
	}
	marker, keysFile, id := readSecretEncrypted(t, "MARKER-UI-", "ui1", "e2e-browser-codec-")

	// The codec server, as an operator runs it next to the UI. The UI
	// without login sends no token, so it is --no-token, on loopback.
	u, err := url.Parse(uiURL)
	require.NoError(t, err)
	codecURL := startCodecServer(t, keysFile, "--no-token", "--origin", u.Scheme+"://"+u.Host)

	art := artifactDir(t)
	b := uiPage{t: t, ctx: newBrowser(t, chromium), art: art}
	// The UI's own setting for a codec server (Settings → Codec Server),
	// kept in the browser's local storage for the UI's origin.
	b.open(uiURL + "/namespaces/default/workflows")
	sctx, scancel := context.WithTimeout(b.ctx, browserTimeout)
	defer scancel()
	_, err = chromedp.Run(sctx, chromedp.Evaluate[bool](
		fmt.Sprintf(`localStorage.setItem("endpoint", JSON.stringify(%q)); localStorage.setItem("overrideRemoteCodecConfiguration", "true"); true`, codecURL)))
	require.NoError(t, err)

	desc, err := describeRun(context.Background(), tc, id, "")
	require.NoError(t, err)
	runID := desc.GetWorkflowExecutionInfo().GetExecution().GetRunId()
	b.open(fmt.Sprintf("%s/namespaces/default/workflows/%s/%s/history", uiURL, url.PathEscape(id), runID))
	b.waitBodyText("Read it.")
	b.screenshot("decoded-result")
	b.waitBodyText(marker)
	// Bring the decoded tool result into view for the screenshot.
	_, err = chromedp.Run(sctx, chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
		const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
		for (let n = w.nextNode(); n; n = w.nextNode()) {
			if (n.textContent.includes(%q)) { n.parentElement.scrollIntoView({block: "center"}); return true; }
		}
		return false;
	})()`, marker)))
	require.NoError(t, err)
	b.screenshot("decoded-tool-result")
}

// startCodecServer runs `starter codec-server` with keysFile and args on a
// free loopback port until the test ends, and returns its URL once it
// answers.
func startCodecServer(t *testing.T, keysFile string, args ...string) string {
	t.Helper()
	port, err := freeLoopbackPort()
	require.NoError(t, err)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	srv := exec.Command(filepath.Join(binDir, "starter"),
		append([]string{"--encryption-keys", keysFile, "codec-server", "--listen", addr}, args...)...)
	logs := &syncBuffer{}
	srv.Stdout, srv.Stderr = logs, logs
	require.NoError(t, srv.Start())
	t.Cleanup(func() {
		stopProcess(srv)
		if t.Failed() {
			t.Logf("codec server log:\n%s", logs.String())
		}
	})
	waitFor(t, "the codec server to listen", 20*time.Second, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	return "http://" + addr
}
