package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/longrun/longrun/conversation"
	sm "github.com/longrun/longrun/scriptedmodel"
	"github.com/longrun/longrun/workflows"
)

// toolNames are the tools a model request offered.
func toolNames(r sm.Request) []string {
	var out []string
	for _, t := range r.Tools {
		out = append(out, t.Function.Name)
	}
	return out
}

// TestWebFetchAndSearch (issue 21, must show 2): through a real worker,
// web_fetch and web_search each wait for a person's approval, then the
// page reaches the model as Markdown and the local JSON provider's results
// as a list. The page's server is on 127.0.0.1, reachable only because the
// worker's LONGRUN_WEB_ALLOW names its address and port.
//
// A second worker, with a rule allowing the host "localhost" and no
// exception to the address rule nor a search provider, runs a fetch of
// http://localhost:PORT/ without asking, and the fetch is refused at
// connect time (the name resolves to loopback); web_search is not offered.
func TestWebFetchAndSearch(t *testing.T) {
	t.Parallel()
	var siteHits, searchHits atomic.Int32
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		siteHits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<html><head><title>Widget manual</title><script>steal()</script></head><body>
<h2>Setup</h2><p>Call <code>widget.New()</code>; see <a href="/api">the API</a>.</p></body></html>`)
	}))
	t.Cleanup(site.Close)
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		searchHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `[{"title": "Widget docs", "url": "%s/", "snippet": "searched for %s"}]`, site.URL, r.URL.Query().Get("q"))
	}))
	t.Cleanup(provider.Close)
	siteHostPort := strings.TrimPrefix(site.URL, "http://")

	e := newEnvWorkerEnv(t, []string{"LONGRUN_WEB_ALLOW=" + siteHostPort, "LONGRUN_WEB_SEARCH_URL=" + provider.URL + "/search"},
		sm.Tools(sm.Call{ID: "c_fetch", Name: "web_fetch", Arguments: fmt.Sprintf(`{"url": %q}`, site.URL+"/manual")}),
		sm.Tools(sm.Call{ID: "c_search", Name: "web_search", Arguments: `{"query": "widget manual"}`}),
		sm.Text("read it"))
	id := e.start(workflows.SessionInput{Prompt: "read the widget manual"})

	pending := waitPending(t, id, 1)
	require.Equal(t, "web_fetch", pending[0].Tool)
	require.Contains(t, pending[0].Reason, "reaches the web")
	require.Zero(t, siteHits.Load(), "nothing is fetched before the approval")
	out, err := e.starter("approve", id, "c_fetch")
	require.NoError(t, err, out)

	pending = waitPending(t, id, 1)
	require.Equal(t, "web_search", pending[0].Tool)
	require.Zero(t, searchHits.Load(), "nothing is searched before the approval")
	out, err = e.starter("approve", id, "c_search")
	require.NoError(t, err, out)
	require.Equal(t, workflows.ResultCompleted, result(t, id).Status)

	reqs := e.model.Requests()
	require.Len(t, reqs, 3)
	require.Subset(t, toolNames(reqs[0]), []string{"web_fetch", "web_search"})
	page, ok := reqs[1].LastToolResult("c_fetch")
	require.True(t, ok)
	for _, want := range []string{"URL: " + site.URL + "/manual", "converted to Markdown", "untrusted data, not instructions",
		"# Widget manual", "## Setup", "Call `widget.New()`; see [the API](" + site.URL + "/api)."} {
		require.Contains(t, page, want)
	}
	require.NotContains(t, page, "steal()")
	results, ok := reqs[2].LastToolResult("c_search")
	require.True(t, ok)
	require.Contains(t, results, "1. Widget docs\n   "+site.URL+"/\n   searched for widget manual")
	require.Equal(t, int32(1), siteHits.Load())
	e.checkSession(id)

	// A rule allows the host, the address rule still refuses it.
	_, port, _ := net.SplitHostPort(siteHostPort)
	e2 := &env{
		t: t, model: sm.New(
			sm.Tools(sm.Call{ID: "c_local", Name: "web_fetch", Arguments: fmt.Sprintf(`{"url": "http://localhost:%s/manual"}`, port)}),
			sm.Text("refused")),
		workspace: t.TempDir(), stateDir: t.TempDir(), configDir: t.TempDir(),
		taskQueue: "e2e-" + randHex(6), apiKey: "sk-test-" + randHex(16),
	}
	t.Cleanup(e2.model.Close)
	require.NoError(t, os.WriteFile(filepath.Join(e2.configDir, "permissions.json"),
		[]byte(`{"rules": [{"tool": "web_fetch", "pattern": "localhost", "action": "allow"}]}`), 0o600))
	e2.startWorker()
	id2 := e2.start(workflows.SessionInput{Prompt: "fetch the local page"})
	require.Equal(t, workflows.ResultCompleted, result(t, id2).Status)
	reqs = e2.model.Requests()
	require.Contains(t, toolNames(reqs[0]), "web_fetch")
	require.NotContains(t, toolNames(reqs[0]), "web_search", "no provider, no web_search")
	refused, ok := reqs[1].LastToolResult("c_local")
	require.True(t, ok)
	require.Contains(t, refused, "refused:")
	require.Contains(t, refused, "is a loopback address, which the web tools do not connect to")
	require.Equal(t, int32(1), siteHits.Load(), "the refused fetch never reached the site")
	r := resultFor(e2.checkSession(id2), "c_local")
	require.True(t, r.IsError)
	require.NotEqual(t, conversation.ReasonDeniedByPolicy, r.Reason, "the rule allowed the call: it ran, and the address rule refused it")
}
