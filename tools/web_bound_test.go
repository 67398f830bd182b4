package tools

import (
	"fmt"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The documented bounds on a fetch (docs/notes-hmisc.md, web_fetch.md),
// whatever the markup: it allocates at most allocPerByte bytes in total
// per byte of page read, and its live heap peaks below heapPerByte bytes
// per byte, each plus slack. Both are linear in the page, which the
// worker's --web-max-bytes caps.
const (
	allocPerByte = 300
	heapPerByte  = 150
	slack        = 64 << 20
)

// peakHeap samples the live heap until stop is closed and returns its
// peak; runtime/metrics reads it without stopping the world.
func peakHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		for {
			metrics.Read(s)
			peak = max(peak, s[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-time.After(2 * time.Millisecond):
			}
		}
	}()
	return out
}

// TestWebFetchConversionBombs (issue 28, must show 4): pages whose markup
// multiplies the Markdown (colspan/rowspan grids, nested tables, padded
// columns, deeply nested lists and quotes, elements nested past the
// parser's limit) are fetched through a real server. Each call ends
// within --web-timeout (a call that reaches it stops converting between
// pieces and says so: TestWebFetchStopsAtWebTimeout), allocates within
// the documented bound, and says what was cut or simplified. Not parallel: TotalAlloc counts the whole
// process.
func TestWebFetchConversionBombs(t *testing.T) {
	span := "<table>" + strings.Repeat(`<tr><td colspan=1000 rowspan=1000>a</td><td colspan=1000 rowspan=1000>b</td></tr>`, 2) + "</table>"
	nested := "x"
	for range 10 {
		nested = "<table><tr>" + strings.Repeat("<td colspan=1000 rowspan=1000>y</td>", 9) + "<td rowspan=1000>" + nested + "</td></tr></table>"
	}
	padded := "<table><tr><td>" + strings.Repeat("w", 100_000) + "</td>" + strings.Repeat("<td>a</td>", 9) + "</tr>" +
		strings.Repeat("<tr><td>a</td></tr>", 40_000) + "</table>"
	tests := []struct {
		name, page string
		notes      []string // what the result must say
		isError    bool
	}{
		{"colspan and rowspan 1000 (177 bytes)", span, []string{"colspan/rowspan were ignored on 4 table cells."}, false},
		{"tables nested 10 deep, 10 wide, spanned", nested, []string{"colspan/rowspan were ignored on 100 table cells.", "9 tables (nested in a table"}, false},
		{"a wide cell padding 40,000 rows", padded, nil, false},
		{"too many cells", "<table>" + strings.Repeat("<tr>"+strings.Repeat("<td>1</td>", 100)+"</tr>", 600) + "</table>", []string{"1 tables (nested in a table, or past 50000 cells in all) are shown as text."}, false},
		{"quotes 300 deep, 400,000 lines", strings.Repeat("<blockquote>", 300) + strings.Repeat("a<br>", 400_000), []string{"294 lists or quotes nested more than 6 deep are shown flat."}, false},
		{"lists 150 deep, 400,000 lines", strings.Repeat("<ul><li>", 150) + strings.Repeat("a<br>", 400_000), []string{"144 lists or quotes nested more than 6 deep are shown flat."}, false},
		{"dense paragraphs", strings.Repeat("<p>a", 500_000), nil, false},
		{"dense line breaks", strings.Repeat("<br>", 500_000), nil, false},
		{"dense list items", "<ul>" + strings.Repeat("<li>a", 400_000), nil, false},
		{"divs 5,000 deep", strings.Repeat("<div>", 5000) + "x", []string{"the page nests elements more than 512 deep"}, true},
		{"long links", strings.Repeat(`<a href="x">y</a>`, 200_000), []string{"The page was cut: its Markdown would pass 8388608 bytes"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := webServer(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprint(w, tt.page)
			})
			const timeout = 30 * time.Second
			cfg := WebConfig{Allow: []string{hostPort(srv)}, Timeout: timeout, MaxBytes: 2 << 20}
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			stop := make(chan struct{})
			peak := peakHeap(stop)
			start := time.Now()
			res := fetch(t, cfg, srv.URL+"/"+strings.Repeat("p", 1000), 0)
			took := time.Since(start)
			close(stop)
			runtime.ReadMemStats(&after)
			alloc, live := after.TotalAlloc-before.TotalAlloc, <-peak-before.HeapAlloc
			allocBound, heapBound := uint64(allocPerByte*len(tt.page)+slack), uint64(heapPerByte*len(tt.page)+slack)
			t.Logf("%d bytes of page: %s, %d MiB allocated (bound %d MiB), live heap peaked %d MiB above the start (bound %d MiB); %d bytes of result",
				len(tt.page), took.Round(time.Millisecond), alloc>>20, allocBound>>20, live>>20, heapBound>>20, len(res.Content))
			if took > timeout {
				require.Contains(t, res.Content, "stopped at the worker's --web-timeout", "a call past its --web-timeout says it stopped")
			}
			require.Less(t, took, timeout+overrunGrace, "the call ends within --web-timeout plus one piece's conversion")
			require.LessOrEqual(t, alloc, allocBound, "allocation within %d bytes per page byte + %d MiB", allocPerByte, slack>>20)
			require.LessOrEqual(t, live, heapBound, "live heap within %d bytes per page byte + %d MiB", heapPerByte, slack>>20)
			require.Equal(t, tt.isError, res.IsError, res.Content[:min(len(res.Content), 500)])
			for _, n := range tt.notes {
				require.Contains(t, res.Content, n)
			}
		})
	}
}
