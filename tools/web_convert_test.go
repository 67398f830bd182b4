package tools

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// deadlineAfter is a context whose deadline passes after its Err has
// been asked n times: the conversion's checks, counted, stand in for the
// clock, so where it stops does not depend on the machine's speed.
type deadlineAfter struct {
	context.Context
	n atomic.Int32
}

func (c *deadlineAfter) Err() error {
	if c.n.Add(-1) < 0 {
		return context.DeadlineExceeded
	}
	return nil
}

func parsePage(t *testing.T, page string) *html.Node {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	require.NoError(t, err)
	return doc
}

// TestConvertPiecesStopsAtDeadline: a page of 100,000 list items is
// converted in pieces; when the deadline passes after three of them the
// conversion returns those three pieces' Markdown at once, and its note
// says how much was converted.
func TestConvertPiecesStopsAtDeadline(t *testing.T) {
	t.Parallel()
	var page strings.Builder
	page.WriteString("<ul>")
	for i := range 100_000 {
		fmt.Fprintf(&page, "<li>item%d", i)
	}
	ctx := &deadlineAfter{Context: context.Background()}
	ctx.n.Store(3)
	start := time.Now()
	c, err := convertPieces(ctx, parsePage(t, page.String()), "https://example.com/", 1<<30, 30*time.Second)
	took := time.Since(start)
	require.NoError(t, err)
	t.Logf("stopped after %d of %d parts (%d of %d nodes) in %s; %d bytes of Markdown; note: %s",
		c.done, c.pieces, c.doneNodes, c.nodes, took.Round(time.Millisecond), len(c.text), c.stopNote())
	require.True(t, c.stopped)
	require.Equal(t, 3, c.done)
	require.Greater(t, c.pieces, 10, "200,000 nodes make more than 10 pieces of %d", pieceNodes)
	require.Greater(t, c.nodes, 200_000)
	require.LessOrEqual(t, c.doneNodes, 3*pieceNodes)
	require.Contains(t, c.text, "- item0\n")
	require.NotContains(t, c.text, "item99999", "nothing from the pieces not converted")
	require.LessOrEqual(t, strings.Count(c.text, "- item"), c.doneNodes/2, "each item is an <li> and its text")
	require.Greater(t, strings.Count(c.text, "- item"), 2*pieceNodes/2-10, "the three pieces' items are there")
	require.Contains(t, c.stopNote(), fmt.Sprintf("after 3 of %d parts (%d of %d HTML nodes)", c.pieces, c.doneNodes, c.nodes))
	require.Contains(t, c.stopNote(), "--web-timeout (30s)")
}

// TestConvertPiecesKeepsThePage: a page larger than one piece converts
// to the same items, in order, as it would whole: an ordered list split
// across pieces keeps its numbers, a table is never split.
func TestConvertPiecesKeepsThePage(t *testing.T) {
	t.Parallel()
	var page strings.Builder
	page.WriteString(`<h1>Top</h1><ol start="5">`)
	for i := range 30_000 {
		fmt.Fprintf(&page, "<li>n%d</li>", i)
	}
	page.WriteString("</ol><table><tr><th>k</th><th>v</th></tr>")
	for i := range 10_000 {
		fmt.Fprintf(&page, "<tr><td>k%d</td><td>v%d</td></tr>", i, i)
	}
	page.WriteString("</table><p>End</p>")
	c, err := convertPieces(context.Background(), parsePage(t, page.String()), "https://example.com/", 1<<30, time.Second)
	require.NoError(t, err)
	require.False(t, c.stopped)
	require.Equal(t, c.pieces, c.done)
	require.Greater(t, c.pieces, 3)
	t.Logf("%d parts, %d nodes, %d bytes of Markdown", c.pieces, c.nodes, len(c.text))
	require.Regexp(t, `^# Top\n\n0*5\. n0\n0*6\. n1\n`, c.text)
	// The library pads a list's numbers to its widest; a piece's list is
	// padded to its own.
	for _, i := range []int{0, 8000, 8001, 16000, 29_999} {
		require.Len(t, regexp.MustCompile(fmt.Sprintf(`\n0*%d\. n%d\n`, i+5, i)).FindAllString(c.text, -1), 1, "item %d numbered %d, once", i, i+5)
	}
	require.Len(t, regexp.MustCompile(`\n0*[0-9]+\. n[0-9]+\n`).FindAllString("\n"+strings.ReplaceAll(c.text, "\n", "\n\n"), -1), 30_000, "every item once")
	require.Contains(t, c.text, "| k | v |\n|---|---|\n| k0 | v0 |")
	require.Contains(t, c.text, "| k9999 | v9999 |\n\nEnd")

	small, err := convertPieces(context.Background(), parsePage(t, testPage), "https://example.com/", 1<<30, time.Second)
	require.NoError(t, err)
	require.Equal(t, 1, small.pieces, "a page under the limit is one piece")
}

// TestWebFetchStopsAtWebTimeout: a 2 MB page of list items fetched with a
// --web-timeout shorter than its conversion takes (here about 2 s, 25 s
// under -race) ends at the timeout, give or take one piece, and says
// that it stopped and where: while parsing, or after how many parts of
// the conversion. On a machine fast enough to finish first there is
// nothing to stop, and the result must then be whole.
// TestConvertPiecesStopsAtDeadline stops the conversion at a set point.
func TestWebFetchStopsAtWebTimeout(t *testing.T) {
	t.Parallel()
	page := "<ul>" + strings.Repeat("<li>a", 400_000)
	srv, _ := webServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	})
	const timeout = time.Second
	cfg := WebConfig{Allow: []string{hostPort(srv)}, Timeout: timeout, MaxBytes: 2 << 20}
	start := time.Now()
	res := fetch(t, cfg, srv.URL+"/list", 0)
	took := time.Since(start)
	head := res.Content[:min(len(res.Content), 600)]
	t.Logf("--web-timeout %s: the call took %s\n%s", timeout, took.Round(time.Millisecond), head)
	stopped := strings.Contains(res.Content, "The conversion to Markdown stopped at the worker's --web-timeout (1s) after ") ||
		strings.Contains(res.Content, "parsing the page did not finish within 1s (the worker's --web-timeout)") ||
		strings.Contains(res.Content, "no complete answer within 1s (the worker's --web-timeout)") // still reading, under -race
	if took > timeout {
		require.True(t, stopped, "a call past its --web-timeout says it stopped: %s", head)
	}
	require.Less(t, took, timeout+overrunGrace, "the call ends within --web-timeout plus one piece's conversion")
	if !stopped {
		require.Contains(t, res.Content, "- a\n- a\n")
	}
}

// overrunGrace is how far past --web-timeout a test lets a call end: the
// piece being converted when the deadline passes (at most pieceNodes
// nodes, tens of milliseconds; a second or two under -race on a loaded
// machine) and the framing after it.
const overrunGrace = 5 * time.Second
