package e2e

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	sm "github.com/longrun/longrun/scriptedmodel"
)

// TestBrowserWebUIWaitingClickPath (issue 29, must-show 3): the one click
// path docs/notes-hconsole.md documents, done in the real Web UI by
// headless Chromium. The UI (2.54) shows a workflow's current details in
// its User Metadata tab only, so the waiting state is put first where the
// UI can: the Workflows list gets the LongrunPhase and
// LongrunPendingApprovals columns (Configure Columns) and the query
// `LongrunPendingApprovals > 0` is saved as the view "Waiting for me";
// the row opens the session, whose User Metadata tab shows the waiting
// call and the command that decides it on the first screen, above the
// session's state.
func TestBrowserWebUIWaitingClickPath(t *testing.T) {
	t.Parallel()
	chromium := requireBrowserUI(t)
	e := newEnv(t,
		sm.Tools(sm.Call{ID: "c_sh", Name: "shell", Arguments: `{"command": "make check"}`}),
		sm.Text("checked"),
	)
	id := "e2e-webui-wait-" + randHex(4)
	out, err := e.starter("start", "--id", id, "check the build")
	require.NoError(t, err, out)
	waitPending(t, id, 1)

	// The test's own directory, unless LONGRUN_ARTIFACTS asks to keep
	// them.
	art := t.TempDir()
	if os.Getenv("LONGRUN_ARTIFACTS") != "" {
		art = artifactDir(t)
	}
	b := uiPage{t: t, ctx: newBrowser(t, chromium), art: art}
	base := fmt.Sprintf("%s/namespaces/default/workflows", uiURL)

	// The list, filtered to the sessions waiting for a person.
	b.openRowFor(base+"?query="+url.QueryEscape(`LongrunPendingApprovals > 0`), id)

	// Configure Columns: add the two search attributes as columns.
	// They are added last, past the screen's right edge: move each up
	// to follow Workflow ID (past End, Start, Type and Run ID).
	// The drawer slides in: its buttons are clicked as elements, not at
	// coordinates that move while it does.
	b.press(`[data-testid="workflows-summary-table-configuration-button"]`)
	for _, col := range []string{"LongrunPhase", "LongrunPendingApprovals"} {
		b.press(fmt.Sprintf(`button[aria-label="Add %s column"]`, col))
		for range 4 {
			b.press(fmt.Sprintf(`[data-testid="orderable-list-item-%s-move-up-button"]`, col))
		}
	}
	b.viewport("columns-configured")
	b.press(`[data-testid="drawer-close-button"]`)
	// Save the query as a view, as the notes say.
	b.clickText("button", "Save as New")
	b.typeInto(`input[placeholder="Name of view"]`, "Waiting for me")
	b.key("\r") // Enter
	b.waitText("Waiting for me")
	b.viewport("saved-view")

	row := fmt.Sprintf(`[...document.querySelectorAll('tr[data-testid="workflows-summary-configurable-table-row"]')].find(r => r.innerText.includes(%s))`, jsString(id))
	// The cells in the order the headers have, as a person reads them,
	// on the first screen. The list is narrowed to this session first:
	// every e2e test shares the server, and other tests' waiting sessions
	// (longer ids, more rows) pushed the columns past the window's edge
	// in CI, which says nothing about the columns' order. The columns
	// are the namespace's, kept across queries.
	b.openRowFor(base+"?query="+url.QueryEscape(`LongrunPendingApprovals > 0 AND WorkflowId = "`+id+`"`), id)
	b.until("the row of "+id+" to show its phase and waiting calls on the first screen",
		fmt.Sprintf(`((r) => { if (!r) return false;
			const heads = [...document.querySelectorAll("th")].map(h => h.innerText.trim());
			const cells = [...r.querySelectorAll("td")];
			const at = (name) => { const i = heads.indexOf(name); return i < 0 ? null : cells[i]; };
			const phase = at("LongrunPhase"), n = at("LongrunPendingApprovals");
			const seen = (c) => { const b = c.getBoundingClientRect(); return b.left >= 0 && b.right <= window.innerWidth && b.bottom <= window.innerHeight; };
			return !!phase && !!n && phase.innerText.trim() === "waiting-approval" && n.innerText.trim() === "1" && seen(phase) && seen(n); })(%s)`, row),
		fmt.Sprintf(`((r) => [...document.querySelectorAll("th")].map(h => h.innerText.trim() + " " + JSON.stringify(h.getBoundingClientRect())).join(" | ") + "\nwindow " + window.innerWidth + "x" + window.innerHeight + "\n" + (r ? r.innerText : document.body.innerText))(%s)`, row))
	b.viewport("list-phase-column")

	// The row opens the session; its User Metadata tab leads with the
	// waiting call and its command, on the first screen.
	b.until("the link to "+id, fmt.Sprintf(`!!document.querySelector('a[href*="/workflows/%s/"]')`, id), bodyText)
	b.click(fmt.Sprintf(`a[href*="/workflows/%s/"]`, id))
	b.clickText("a,button", "User Metadata")
	b.waitFrameText("#user-metadata-current-details", "waiting for approval: 1 call(s)", "approve "+id+" c1", "phase:")
	frame := `document.querySelector("#user-metadata-current-details")`
	b.until("the waiting call on the first screen, above the session's state",
		fmt.Sprintf(`((f) => { const d = f && f.contentDocument; if (!d || !d.body) return false;
			const h = [...d.querySelectorAll("h3")].find(x => x.innerText.includes("waiting for approval"));
			if (!h) return false;
			const top = f.getBoundingClientRect().top + h.getBoundingClientRect().top;
			return top >= 0 && top < window.innerHeight && d.body.innerText.indexOf("waiting for approval") < d.body.innerText.indexOf("phase:"); })(%s)`, frame),
		fmt.Sprintf(`((f) => f && f.contentDocument ? f.contentDocument.body.innerText : document.body.innerText)(%s)`, frame))
	b.viewport("session-waiting")
	for _, name := range []string{"columns-configured", "list-phase-column", "saved-view", "session-waiting"} {
		st, err := os.Stat(filepath.Join(art, name+".png"))
		require.NoError(t, err)
		require.Positive(t, st.Size())
	}
}

// key sends one key press to the focused element.
func (p uiPage) key(k string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserTimeout)
	defer cancel()
	require.NoError(p.t, chromedp.Do(ctx, chromedp.KeyEvent(k)), "key %q", k)
}

// clickText clicks the first element matching sel whose text is text,
// once there is one.
func (p uiPage) clickText(sel, text string) {
	p.t.Helper()
	find := fmt.Sprintf(`[...document.querySelectorAll(%s)].find(e => e.innerText.trim() === %s)`, jsString(sel), jsString(text))
	p.until(fmt.Sprintf("a %s saying %q", sel, text), "!!"+find, bodyText)
	ctx, cancel := context.WithTimeout(p.ctx, browserTimeout)
	defer cancel()
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`((e) => { if (!e) return false; e.click(); return true; })(%s)`, find)))
	require.NoError(p.t, err)
	require.True(p.t, ok, "click %s %q", sel, text)
	time.Sleep(300 * time.Millisecond) // let the UI react before the next step
}

// press clicks the element sel once it is there, as an element (the DOM
// click), whatever its position on the screen.
func (p uiPage) press(sel string) {
	p.t.Helper()
	el := fmt.Sprintf(`document.querySelector(%s)`, jsString(sel))
	p.until("an element "+sel, "!!"+el, bodyText)
	ctx, cancel := context.WithTimeout(p.ctx, browserTimeout)
	defer cancel()
	ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(`((e) => { if (!e || e.disabled) return false; e.click(); return true; })(%s)`, el)))
	require.NoError(p.t, err)
	require.True(p.t, ok, "press %s", sel)
	time.Sleep(300 * time.Millisecond) // let the UI react before the next step
}

// viewport saves what the window shows (the first screen, not the whole
// page) as NAME.png in the test's directory.
func (p uiPage) viewport(name string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserTimeout)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	require.NoError(p.t, err, "screenshot %s", name)
	path := filepath.Join(p.art, name+".png")
	require.NoError(p.t, os.WriteFile(path, buf, 0o644))
	p.t.Logf("screenshot: %s", path)
}
