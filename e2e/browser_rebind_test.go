package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/longrun/longrun/codec"
)

// rebindName is the attacker's host name. Chromium resolves it to
// 127.0.0.1 (--host-resolver-rules), as a rebinding DNS server answers
// once the attacker's page is loaded: the page's scripts then reach this
// machine's loopback services as same-origin requests, with Host set to
// rebindName. Nothing is ever resolved through real DNS.
const rebindName = "rebind.test"

// probe is one request a page's script sends, and what it got.
type probe struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Body   string            `json:"body,omitempty"`
	Header map[string]string `json:"header,omitempty"`
	// CSRF sends the Web UI's CSRF cookie back as X-CSRF-Token, as the
	// UI's own pages do (a same-origin page can read it).
	CSRF bool `json:"csrf,omitempty"`

	Status int    `json:"status"`
	Text   string `json:"text"`
}

// probeJS runs each probe with fetch from the page, in order, and returns
// them with the status and the start of the answer.
const probeJS = `(async (probes) => {
	for (const p of probes) {
		const headers = Object.assign({}, p.header || {});
		if (p.csrf) {
			const m = document.cookie.match(/(?:^|; )_csrf=([^;]*)/);
			if (m) headers["X-CSRF-Token"] = decodeURIComponent(m[1]);
		}
		try {
			const r = await fetch(p.path, {method: p.method, headers, body: p.body || undefined, credentials: "include"});
			p.status = r.status;
			p.text = (await r.text()).slice(0, 400);
		} catch (e) {
			p.status = 0;
			p.text = String(e);
		}
	}
	return probes;
})(%s)`

// runProbes opens origin+"/" in the tab (the page a rebinding attack
// loads first; what it shows does not matter) and runs probes from it.
func runProbes(t *testing.T, b uiPage, origin string, probes []probe) []probe {
	t.Helper()
	b.open(origin + "/")
	ctx, cancel := context.WithTimeout(b.ctx, browserTimeout)
	defer cancel()
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]probe](fmt.Sprintf(probeJS, jsString(probes)), chromedp.EvalAwaitPromise))
	require.NoError(t, err)
	require.Len(t, got, len(probes))
	return got
}

// requireRefused checks that every probe got 421 from the Host check and
// saw none of want in any answer.
func requireRefused(t *testing.T, service string, got []probe, leaked ...string) {
	t.Helper()
	for _, p := range got {
		t.Logf("%s from %s: %s %s -> %d %.120q", service, rebindName, p.Method, p.Path, p.Status, p.Text)
		require.Equal(t, http.StatusMisdirectedRequest, p.Status, "%s %s %s answered a page of %s: %s", service, p.Method, p.Path, rebindName, p.Text)
		require.Contains(t, p.Text, "does not answer to the host")
		for _, l := range leaked {
			require.NotContains(t, p.Text, l)
		}
	}
}

// TestBrowserRebindingCannotReachLoopbackServices (issue 28, must-show
// 3): a page whose name resolves to 127.0.0.1, in headless Chromium,
// cannot read or post to the console, the codec server (without a token,
// as the compose stack runs it) or the Web UI's API; a loopback page of
// another origin cannot use the tokenless codec server either; and the
// codec server refuses a body over its cap.
func TestBrowserRebindingCannotReachLoopbackServices(t *testing.T) {
	t.Parallel()
	chromium := requireBrowserUI(t)
	ctx := newBrowser(t, chromium, chromedp.Flag("host-resolver-rules", "MAP "+rebindName+" 127.0.0.1"))
	art := artifactDir(t)
	// One browser; each subtest drives it with its own t, so a failure
	// stops that subtest and the next still runs.
	page := func(t *testing.T) uiPage { return uiPage{t: t, ctx: ctx, art: art} }
	port := func(raw string) string {
		u, err := url.Parse(raw)
		require.NoError(t, err)
		return u.Port()
	}

	// The console, with its token (a --trusted-proxy-header console
	// without one no longer starts: TestConsoleTrustedProxyHeaderNeedsATokenOnLoopback).
	t.Run("console", func(t *testing.T) {
		con := startConsole(t, &env{taskQueue: "e2e-rebind-" + randHex(4)})
		got := runProbes(t, page(t), "http://"+rebindName+":"+port(con.url), []probe{
			{Method: "GET", Path: "/login"},
			{Method: "GET", Path: "/pending"},
			{Method: "POST", Path: "/login", Body: "token=guess", Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
			{Method: "POST", Path: "/decide", Body: "session=s&call_id=c&decision=approve", Header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		})
		requireRefused(t, "console", got, "log in")
	})

	// The codec server as the Web UI's tokenless companion: without the
	// check, the page decrypted history and minted ciphertext.
	keysFile := writeKeys(t, keyLine(t, "rebind1"))
	keys, err := codec.LoadKeys(keysFile)
	require.NoError(t, err)
	u, err := url.Parse(uiURL)
	require.NoError(t, err)
	codecURL := startCodecServer(t, keysFile, "--no-token", "--origin", u.Scheme+"://"+u.Host)
	t.Run("codec server", func(t *testing.T) {
		marker := "REBIND-SECRET-" + randHex(6)
		p, err := converter.GetDefaultDataConverter().ToPayload(marker)
		require.NoError(t, err)
		enc, err := codec.New(keys).Encode([]*commonpb.Payload{p})
		require.NoError(t, err)
		encrypted, err := protojson.Marshal(&commonpb.Payloads{Payloads: enc})
		require.NoError(t, err)
		plain, err := protojson.Marshal(&commonpb.Payloads{Payloads: []*commonpb.Payload{p}})
		require.NoError(t, err)
		jsonHeader := map[string]string{"Content-Type": "application/json", "X-Namespace": "default"}
		codecProbes := []probe{
			{Method: "POST", Path: "/decode", Body: string(encrypted), Header: jsonHeader},
			{Method: "POST", Path: "/encode", Body: string(plain), Header: jsonHeader},
		}
		markerB64 := strings.TrimRight(string(p.GetData()), "=")
		got := runProbes(t, page(t), "http://"+rebindName+":"+port(codecURL), codecProbes)
		requireRefused(t, "codec server", got, marker, markerB64, "payloads")
		// A page on loopback that is not the Web UI passes the Host check
		// and meets the Origin rule of a server without a token.
		got = runProbes(t, page(t), "http://localhost:"+port(codecURL), codecProbes)
		for _, p := range got {
			t.Logf("codec server from http://localhost: %s %s -> %d %.120q", p.Method, p.Path, p.Status, p.Text)
			require.Equal(t, http.StatusForbidden, p.Status, p.Text)
			require.Contains(t, p.Text, "not allowed: this codec server asks no token")
		}
	})
	// The Web UI's API: the session list, and a signal with the UI's own
	// CSRF token (the approval signal's shape).
	t.Run("Web UI API", func(t *testing.T) {
		b := page(t)
		got := runProbes(t, b, "http://"+rebindName+":"+port(uiURL), []probe{
			{Method: "GET", Path: "/api/v1/namespaces/default/workflows"},
			{Method: "GET", Path: "/api/v1/settings"},
			{Method: "POST", Path: "/api/v1/namespaces/default/workflows/e2e-rebind/signal/approval", CSRF: true,
				Body: `{"signalName":"approval","input":{"payloads":[]}}`, Header: map[string]string{"Content-Type": "application/json"}},
		})
		requireRefused(t, "Web UI", got, "executions", "Auth")
		b.open("http://" + rebindName + ":" + port(uiURL) + "/namespaces/default/workflows")
		b.screenshot("web-ui-refuses-rebound-host")
		// The same UI by its own address still works.
		b.open(uiURL + "/namespaces/default/workflows")
		b.waitBodyText("Workflows")
	})
	// The body cap: 9 MiB to a server capped at its default 8 MiB.
	t.Run("codec body cap", func(t *testing.T) {
		body := bytes.Repeat([]byte("A"), 9<<20)
		resp, err := http.Post(codecURL+"/decode", "application/json", bytes.NewReader(body))
		require.NoError(t, err)
		text, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		t.Logf("codec server, 9 MiB body: %d %q", resp.StatusCode, text)
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, string(text))
		require.Contains(t, string(text), fmt.Sprintf("request body over %d bytes", codec.DefaultMaxBody))
	})
}
